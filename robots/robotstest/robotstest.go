// Package robotstest checks that an implementation of [robots.Store]
// behaves as the robots Cache needs: every field of a [robots.Record]
// round-trips exactly (instants to the nanosecond, bodies byte for byte,
// however binary), records overwrite, hosts are independent, recently
// expired records are still returned, and concurrent use is safe. A
// networked store (SQLite, Redis) passes it as the in-memory one does.
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
// call): unknown hosts, round trips of every field of a Record, overwrites,
// independence of hosts (with and without a port or an "http://" prefix),
// recently expired records still returned, and concurrent use. It runs
// subtests in parallel.
func Run(t *testing.T, newStore func(t *testing.T) robots.Store) {
	t.Helper()
	ctx := context.Background()
	// Entries expire in the future, so stores that forget expired ones
	// (after a retention time) keep them for the test.
	// Instants carry nanoseconds and a zone other than UTC: a store must
	// give back the same instant (time.Time.Equal), whatever its zone.
	base := time.Now().Truncate(time.Second).Add(-time.Second + 123456789).In(time.FixedZone("X", 5*3600+1800))
	body := []byte("User-agent: *\nDisallow: /private\nCrawl-delay: 2\nSitemap: https://example.com/s.xml\n")
	good := robots.Record{Outcome: robots.ParseBody, Status: 200, Body: body,
		FetchedAt: base, Expires: base.Add(time.Hour)}
	failed := robots.Record{Outcome: robots.DisallowAll, Failure: "robots: fetch https://b.example/robots.txt: connection refused",
		FetchedAt: base, Expires: base.Add(15 * time.Minute)}
	stale := good
	stale.Stale, stale.LastFailure, stale.Expires = true, "status 503", base.Add(2*time.Hour)
	// A body is bytes, not text: NULs, invalid UTF-8, CRs and a byte-order
	// mark must survive, and a large one (the most the Cache keeps is
	// robots.MaxBodySize+1 bytes) too.
	binary := good
	binary.Body = append([]byte("\xef\xbb\xbfUser-agent: *\r\nDisallow: /\x00\xff\xfe\r\n"), make([]byte, robots.MaxBodySize+1-28)...)
	allowAll := robots.Record{Outcome: robots.AllowAll, Status: 404, FetchedAt: base, Expires: base.Add(24 * time.Hour)}
	unicode := failed
	unicode.Status, unicode.Failure = 0, "robots: fetch https://bücher.example/robots.txt: «reset» \u2014 by peer"

	t.Run("UnknownHost", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		if _, ok, err := s.Get(ctx, "nowhere.example"); ok || err != nil {
			t.Fatalf("Get(unknown) = ok %v, err %v; want false, nil", ok, err)
		}
	})
	t.Run("RoundTrip", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name string
			r    robots.Record
		}{{"rules", good}, {"failed", failed}, {"stale", stale}, {"binary body", binary}, {"allow all", allowAll}, {"unicode failure", unicode}} {
			s := newStore(t)
			if err := s.Put(ctx, "a.example", tc.r); err != nil {
				t.Fatalf("%s: Put: %v", tc.name, err)
			}
			got, ok, err := s.Get(ctx, "a.example")
			if !ok || err != nil {
				t.Fatalf("%s: Get after Put = ok %v, err %v", tc.name, ok, err)
			}
			if err := same(got, tc.r); err != nil {
				t.Fatalf("round trip of the %s record: %v", tc.name, err)
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
		if err := s.Put(ctx, "http://a.example", allowAll); err != nil {
			t.Fatal(err)
		}
		ga, _, _ := s.Get(ctx, "a.example")
		gb, _, _ := s.Get(ctx, "a.example:8443")
		gc, _, _ := s.Get(ctx, "http://a.example")
		if ga.Outcome != robots.ParseBody || gb.Outcome != robots.DisallowAll || gc.Outcome != robots.AllowAll {
			t.Fatalf("hosts mixed: a.example %v, a.example:8443 %v, http://a.example %v", ga.Outcome, gb.Outcome, gc.Outcome)
		}
		if _, ok, err := s.Get(ctx, "b.example"); ok || err != nil {
			t.Fatalf("Get(b.example) = ok %v, err %v; want false, nil", ok, err)
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

// same compares two records field by field; a nil and an empty Body are
// the same.
func same(got, want robots.Record) error {
	switch {
	case got.Outcome != want.Outcome:
		return fmt.Errorf("robotstest: Outcome %v, want %v", got.Outcome, want.Outcome)
	case got.Status != want.Status:
		return fmt.Errorf("robotstest: Status %d, want %d", got.Status, want.Status)
	case got.Failure != want.Failure:
		return fmt.Errorf("robotstest: Failure %q, want %q", got.Failure, want.Failure)
	case string(got.Body) != string(want.Body):
		if len(want.Body) > 200 || len(got.Body) > 200 {
			return fmt.Errorf("robotstest: Body of %d bytes differs from the %d put", len(got.Body), len(want.Body))
		}
		return fmt.Errorf("robotstest: Body %q, want %q", got.Body, want.Body)
	case !got.FetchedAt.Equal(want.FetchedAt):
		return fmt.Errorf("robotstest: FetchedAt %v, want %v", got.FetchedAt, want.FetchedAt)
	case !got.Expires.Equal(want.Expires):
		return fmt.Errorf("robotstest: Expires %v, want %v", got.Expires, want.Expires)
	case got.Stale != want.Stale || got.LastFailure != want.LastFailure:
		return fmt.Errorf("robotstest: Stale %v %q, want %v %q", got.Stale, got.LastFailure, want.Stale, want.LastFailure)
	}
	return nil
}
