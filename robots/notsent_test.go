package robots_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// notSentRT fails every request with an error matching robots.ErrNotSent
// while down is set (as the fetch chain does when its own schedule, ledger
// or pacer refused to send), and passes it on otherwise.
type notSentRT struct {
	down atomic.Bool
	next http.RoundTripper
}

var errOurSchedule = errors.New("our schedule is unreachable")

func (n *notSentRT) RoundTrip(req *http.Request) (*http.Response, error) {
	if n.down.Load() {
		return nil, fmt.Errorf("%w: %w", robots.ErrNotSent, errOurSchedule)
	}
	return n.next.RoundTrip(req)
}

// releasingStore is a Store with a fetch lease to release (robots.FetchReleaser).
type releasingStore struct {
	robots.MemoryStore
	released atomic.Int64
}

func (s *releasingStore) ReleaseFetch(context.Context, string) error {
	s.released.Add(1)
	return nil
}

// TestCache_NotSentIsNotRecorded: a robots.txt request that never left our
// process refuses the URL asked for (fail closed) but is not the
// publisher's outcome: nothing is stored, and the next request, once our
// side works again, reads robots.txt and is answered by it — with the
// default store, with another store (whose fetch lease is released, so
// other processes do not wait for a record that will not come), and after
// a good copy (which stays as it was, under UseLastGood too).
func TestCache_NotSentIsNotRecorded(t *testing.T) {
	t.Parallel()
	useLast := robots.Vault()
	useLast.OnFailure = robots.UseLastGood
	for _, tc := range []struct {
		name     string
		pol      robots.Policy
		store    bool // a Store other than the default
		lastGood bool // a good copy fetched first, then expired
	}{
		{"DefaultStore", robots.Vault(), false, false},
		{"OtherStore", robots.Vault(), true, false},
		{"AfterGood", robots.StrictNews(), true, true},
		{"AfterGoodUseLastGood", useLast, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web, c, clk, p := setup(t, tc.pol)
			rt := &notSentRT{next: p}
			c.Transport = rt
			var store *releasingStore
			if tc.store {
				store = &releasingStore{}
				store.Clock = clk
				c.Store = store
			}
			web.Site("a.example").SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /x\n"})
			ctx := context.Background()
			page := mustURL(t, "https://a.example/page")
			var before robots.Record
			if tc.lastGood {
				if err := c.Allow(ctx, page); err != nil {
					t.Fatal(err)
				}
				before, _, _ = store.Get(ctx, "a.example")
				clk.Advance(tc.pol.TTL)
			}
			rt.down.Store(true)
			err := c.Allow(ctx, page)
			if err == nil || !errors.Is(err, robots.ErrNotSent) || !errors.Is(err, errOurSchedule) {
				t.Fatalf("Allow with nothing sent = %v, want a refusal matching ErrNotSent and its cause", err)
			}
			if errors.Is(err, robots.ErrDisallowed) {
				t.Fatalf("Allow with nothing sent = %v: robots.txt said nothing, so it is not its disallowance", err)
			}
			if _, err := c.Explain(ctx, page); !errors.Is(err, robots.ErrNotSent) {
				t.Fatalf("Explain with nothing sent = %v, want ErrNotSent", err)
			}
			if store != nil {
				r, ok, _ := store.Get(ctx, "a.example")
				switch {
				case !tc.lastGood && ok:
					t.Fatalf("stored %+v for a request that was never sent", r)
				case tc.lastGood && (!r.FetchedAt.Equal(before.FetchedAt) || !r.Expires.Equal(before.Expires) || r.Stale || r.Outcome != before.Outcome):
					t.Fatalf("the good copy became %+v, was %+v", r, before)
				}
				if n := store.released.Load(); n != 2 {
					t.Fatalf("ReleaseFetch called %d times for the two requests not sent (Allow, Explain), want 2", n)
				}
			}
			rt.down.Store(false)
			if err := c.Allow(ctx, page); err != nil {
				t.Fatalf("Allow once our side works = %v, want robots.txt's answer (allowed)", err)
			}
			if err := c.Allow(ctx, mustURL(t, "https://a.example/x")); !errors.Is(err, robots.ErrDisallowed) {
				t.Fatalf("rule not applied: %v", err)
			}
			want := 1
			if tc.lastGood {
				want = 2
			}
			if n := robotsFetches(web, "a.example"); n != want {
				t.Fatalf("%d robots.txt fetches reached the web, want %d", n, want)
			}
		})
	}
}
