package robots_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

var errStoreDown = errors.New("the shared store is unreachable")

// failingStore is a MemoryStore whose Get fails while down is set.
type failingStore struct {
	robots.MemoryStore
	down atomic.Bool
}

func (s *failingStore) Get(ctx context.Context, host string) (robots.Record, bool, error) {
	if s.down.Load() {
		return robots.Record{}, false, errStoreDown
	}
	return s.MemoryStore.Get(ctx, host)
}

// TestCache_StoreErrorFailsClosed: a Store that cannot be read is not a
// host without a record: the Cache does not fetch robots.txt (which would
// ask the publisher again for a file another process may hold, and a
// fetch lease the Store could not check), it refuses the request with a
// *StoreError matching ErrNotSent (nothing was sent) and the Store's error,
// never ErrDisallowed (robots.txt said nothing). A view due for its
// re-check against the Store refuses too. Once the Store answers again,
// its record does.
func TestCache_StoreErrorFailsClosed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		seen bool // a record read and viewed first, then due for its re-check
	}{{"Unknown", false}, {"ViewDueForRecheck", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web, c, clk, _ := setup(t, robots.Vault())
			store := &failingStore{}
			store.Clock = clk
			c.Store = store
			web.Site("a.example").SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /x\n"})
			ctx := context.Background()
			page := mustURL(t, "https://a.example/page")
			want := 0
			if tc.seen {
				if err := c.Allow(ctx, page); err != nil {
					t.Fatal(err)
				}
				want = 1
				clk.Advance(robots.DefaultStoreRecheck)
			}
			store.down.Store(true)
			for _, call := range []struct {
				name string
				err  func() error
			}{
				{"Allow", func() error { return c.Allow(ctx, page) }},
				{"Explain", func() error { _, err := c.Explain(ctx, page); return err }},
				{"Lookup", func() error { _, err := c.Lookup(ctx, "a.example"); return err }},
				{"Sitemaps", func() error { _, err := c.Sitemaps(ctx, "a.example"); return err }},
			} {
				err := call.err()
				var se *robots.StoreError
				if !errors.As(err, &se) || se.Host != "a.example" || !errors.Is(err, robots.ErrNotSent) || !errors.Is(err, errStoreDown) {
					t.Fatalf("%s with the Store failing = %v, want a *StoreError for a.example matching ErrNotSent and the Store's error", call.name, err)
				}
				if errors.Is(err, robots.ErrDisallowed) {
					t.Fatalf("%s with the Store failing = %v: robots.txt said nothing", call.name, err)
				}
			}
			if d, ok := c.CrawlDelay(ctx, page); ok {
				t.Fatalf("CrawlDelay with the Store failing = %v, true", d)
			}
			if n := robotsFetches(web, "a.example"); n != want {
				t.Fatalf("%d robots.txt fetches with the Store failing, want %d: a failing Store is not a miss", n, want)
			}
			store.down.Store(false)
			if err := c.Allow(ctx, mustURL(t, "https://a.example/x")); !errors.Is(err, robots.ErrDisallowed) {
				t.Fatalf("once the Store answers: %v, want robots.txt's rule", err)
			}
			if err := c.Allow(ctx, page); err != nil {
				t.Fatalf("once the Store answers: %v, want allowed", err)
			}
			if n := robotsFetches(web, "a.example"); n != 1 {
				t.Fatalf("%d robots.txt fetches in all, want 1", n)
			}
		})
	}
}
