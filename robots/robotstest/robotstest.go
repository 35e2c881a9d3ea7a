// Package robotstest checks that an implementation of [robots.Store]
// behaves as the robots Cache needs.
package robotstest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/robots"
)

// Run checks the Store that newStore returns (a fresh, empty one per
// call): unknown hosts, round trips of every field the Cache relies on,
// overwrites, independence of hosts, recently expired entries still
// returned, and concurrent use. It runs subtests in parallel.
func Run(t *testing.T, newStore func(t *testing.T) robots.Store) {
	t.Helper()
	ctx := context.Background()
	// Entries expire in the future, so stores that forget expired ones
	// (after a retention time) keep them for the test.
	base := time.Now().UTC().Truncate(time.Second)
	body := []byte("User-agent: *\nDisallow: /private\nCrawl-delay: 2\nSitemap: https://example.com/s.xml\n")
	good := robots.Entry{Outcome: robots.ParseBody, Status: 200, Body: body, Rules: robots.Parse(body),
		FetchedAt: base, Expires: base.Add(time.Hour)}
	failed := robots.Entry{Outcome: robots.DisallowAll, Failure: "robots: fetch https://b.example/robots.txt: connection refused",
		FetchedAt: base, Expires: base.Add(15 * time.Minute)}
	stale := good
	stale.Stale, stale.LastFailure, stale.Expires = true, "status 503", base.Add(2*time.Hour)

	t.Run("UnknownHost", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		if _, ok, err := s.Get(ctx, "nowhere.example"); ok || err != nil {
			t.Fatalf("Get(unknown) = ok %v, err %v; want false, nil", ok, err)
		}
	})
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		for _, e := range []robots.Entry{good, failed, stale, {Outcome: robots.AllowAll, Status: 404, FetchedAt: base, Expires: base.Add(24 * time.Hour)}} {
			s := newStore(t)
			if err := s.Put(ctx, "a.example", e); err != nil {
				t.Fatalf("Put: %v", err)
			}
			got, ok, err := s.Get(ctx, "a.example")
			if !ok || err != nil {
				t.Fatalf("Get after Put = ok %v, err %v", ok, err)
			}
			if err := same(got, e); err != nil {
				t.Fatalf("round trip of %v entry: %v", e.Outcome, err)
			}
		}
	})
	t.Run("Overwrite", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		if err := s.Put(ctx, "a.example", good); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "a.example", failed); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Get(ctx, "a.example")
		if !ok || err != nil {
			t.Fatalf("Get = %v, %v", ok, err)
		}
		if err := same(got, failed); err != nil {
			t.Fatalf("after overwrite: %v", err)
		}
	})
	t.Run("ExpiredKept", func(t *testing.T) {
		// The Cache reads an expired entry to keep a last good copy after a
		// failed fetch (UseLastGood): a store may forget it later, not at
		// once.
		t.Parallel()
		s := newStore(t)
		e := good
		e.FetchedAt, e.Expires = base.Add(-2*time.Hour), base.Add(-time.Minute)
		if err := s.Put(ctx, "a.example", e); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Get(ctx, "a.example")
		if !ok || err != nil {
			t.Fatalf("Get(expired a minute ago) = ok %v, err %v; want the entry", ok, err)
		}
		if err := same(got, e); err != nil {
			t.Fatalf("expired entry: %v", err)
		}
	})
	t.Run("HostsIndependent", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		if err := s.Put(ctx, "a.example", good); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "a.example:8443", failed); err != nil {
			t.Fatal(err)
		}
		ga, _, _ := s.Get(ctx, "a.example")
		gb, _, _ := s.Get(ctx, "a.example:8443")
		if ga.Outcome != robots.ParseBody || gb.Outcome != robots.DisallowAll {
			t.Fatalf("hosts mixed: a.example %v, a.example:8443 %v", ga.Outcome, gb.Outcome)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				host := fmt.Sprintf("h%d.example", i)
				for j := range 50 {
					e := failed
					e.Status = j
					if err := s.Put(ctx, host, e); err != nil {
						t.Error(err)
						return
					}
					if got, ok, err := s.Get(ctx, host); err != nil || !ok || got.Status != j {
						t.Errorf("%s: Get = %d, %v, %v; want status %d", host, got.Status, ok, err, j)
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}

// same compares what the Cache needs of an entry: Rules may come back nil
// (the Cache parses Body again) and Err may be dropped (Failure stays).
func same(got, want robots.Entry) error {
	switch {
	case got.Outcome != want.Outcome:
		return fmt.Errorf("robotstest: Outcome %v, want %v", got.Outcome, want.Outcome)
	case got.Status != want.Status:
		return fmt.Errorf("robotstest: Status %d, want %d", got.Status, want.Status)
	case got.Failure != want.Failure:
		return fmt.Errorf("robotstest: Failure %q, want %q", got.Failure, want.Failure)
	case string(got.Body) != string(want.Body):
		return fmt.Errorf("robotstest: Body %q, want %q", got.Body, want.Body)
	case !got.FetchedAt.Equal(want.FetchedAt):
		return fmt.Errorf("robotstest: FetchedAt %v, want %v", got.FetchedAt, want.FetchedAt)
	case !got.Expires.Equal(want.Expires):
		return fmt.Errorf("robotstest: Expires %v, want %v", got.Expires, want.Expires)
	case got.Stale != want.Stale || got.LastFailure != want.LastFailure:
		return fmt.Errorf("robotstest: Stale %v %q, want %v %q", got.Stale, got.LastFailure, want.Stale, want.LastFailure)
	}
	if got.Rules != nil && want.Rules != nil {
		for _, p := range []string{"/private/x", "/public"} {
			if got.Rules.Allowed("x", p) != want.Rules.Allowed("x", p) {
				return fmt.Errorf("robotstest: Rules disagree on %s", p)
			}
		}
	}
	return nil
}
