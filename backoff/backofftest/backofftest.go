// Package backofftest checks that an implementation of [backoff.Store]
// behaves as the ledger needs: records round-trip exactly, Update is atomic
// per key, deleting works, keys are independent, Sweep (for a store that
// implements [backoff.Sweeper]) drops only records that hold nothing, and a
// ledger built on the store enforces a refusal.
package backofftest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
)

// Run runs the conformance suite against stores made by newStore, which
// must return an empty store each call. It uses t.Run for each check and
// calls newStore with that check's own t, so a factory may skip it or
// register its cleanup there.
func Run(t *testing.T, newStore func(t *testing.T) backoff.Store) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	full := backoff.State{
		Strikes: 7, RefusedKind: backoff.Feed, LastStatus: 429, LastChallenge: backoff.Cloudflare,
		LastAt: at, Until: at.Add(6 * time.Hour), Suspended: true, NextCheck: at.Add(24 * time.Hour),
	}

	t.Run("GetMissing", func(t *testing.T) {
		s := newStore(t)
		_, ok, err := s.Get(ctx, "absent.example")
		if err != nil || ok {
			t.Fatalf("Get(absent) = ok %v, err %v; want false, nil", ok, err)
		}
	})

	t.Run("RoundTrip", func(t *testing.T) {
		s := newStore(t)
		for _, want := range []backoff.State{full, {Strikes: 1, LastStatus: 403, LastAt: at, Until: at.Add(5 * time.Minute)}} {
			put(t, s, "a.example", want)
			got, ok, err := s.Get(ctx, "a.example")
			if err != nil || !ok {
				t.Fatalf("Get after Update = ok %v, err %v", ok, err)
			}
			if !equal(got, want) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
			}
		}
	})

	t.Run("UpdateSeesCurrent", func(t *testing.T) {
		s := newStore(t)
		put(t, s, "a.example", full)
		var seen backoff.State
		var seenOK bool
		err := s.Update(ctx, "a.example", func(cur backoff.State, ok bool) (backoff.State, bool) {
			seen, seenOK = cur, ok
			return cur, true
		})
		if err != nil {
			t.Fatal(err)
		}
		if !seenOK || !equal(seen, full) {
			t.Fatalf("Update saw ok %v %+v, want the stored record", seenOK, seen)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		s := newStore(t)
		put(t, s, "a.example", full)
		err := s.Update(ctx, "a.example", func(backoff.State, bool) (backoff.State, bool) { return backoff.State{}, false })
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.Get(ctx, "a.example"); ok || err != nil {
			t.Fatalf("Get after delete = ok %v, err %v; want false, nil", ok, err)
		}
		// Deleting what is absent is not an error.
		err = s.Update(ctx, "never.example", func(backoff.State, bool) (backoff.State, bool) { return backoff.State{}, false })
		if err != nil {
			t.Fatalf("delete of an absent key: %v", err)
		}
	})

	t.Run("KeysIndependent", func(t *testing.T) {
		s := newStore(t)
		put(t, s, "a.example", full)
		put(t, s, "b.example", backoff.State{Strikes: 1, LastStatus: 401, LastAt: at})
		got, _, _ := s.Get(ctx, "a.example")
		if !equal(got, full) {
			t.Fatalf("a.example changed by b.example's update: %+v", got)
		}
		if _, ok, _ := s.Get(ctx, "c.example"); ok {
			t.Fatal("c.example exists without an update")
		}
	})

	t.Run("UpdateAtomic", func(t *testing.T) {
		s := newStore(t)
		const workers, each = 8, 50
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					err := s.Update(ctx, "busy.example", func(cur backoff.State, _ bool) (backoff.State, bool) {
						cur.Strikes++
						return cur, true
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got, _, err := s.Get(ctx, "busy.example")
		if err != nil {
			t.Fatal(err)
		}
		if got.Strikes != workers*each {
			t.Fatalf("Strikes = %d after %d concurrent increments: Update is not atomic", got.Strikes, workers*each)
		}
	})

	t.Run("Sweep", func(t *testing.T) {
		s := newStore(t)
		sw, ok := s.(backoff.Sweeper)
		if !ok {
			t.Skip("store does not implement backoff.Sweeper")
		}
		put(t, s, "expired.example", backoff.State{Until: at.Add(time.Minute)})
		put(t, s, "cooling.example", backoff.State{Until: at.Add(time.Hour)})
		put(t, s, "struck.example", backoff.State{Strikes: 1, LastStatus: 403, LastAt: at, Until: at.Add(time.Minute)})
		put(t, s, "suspended.example", backoff.State{Strikes: 5, Suspended: true, NextCheck: at.Add(time.Minute)})
		n, err := sw.Sweep(ctx, at.Add(2*time.Minute))
		if err != nil || n != 1 {
			t.Fatalf("Sweep = %d, %v; want 1, nil", n, err)
		}
		for key, want := range map[string]bool{"expired.example": false, "cooling.example": true, "struck.example": true, "suspended.example": true} {
			if _, ok, _ := s.Get(ctx, key); ok != want {
				t.Errorf("after Sweep, %s present = %v, want %v", key, ok, want)
			}
		}
	})

	t.Run("LedgerHonoursRefusal", func(t *testing.T) {
		l := &backoff.Ledger{Store: newStore(t)}
		now := at
		o := backoff.Outcome{Kind: backoff.Article, Status: 403}
		if _, err := l.Observe(ctx, "shop.example", o, now); err != nil {
			t.Fatal(err)
		}
		d := l.Check(ctx, "shop.example", backoff.Feed, now.Add(time.Minute))
		if d.Allowed || d.Reason != backoff.Cooldown || !d.Until.Equal(now.Add(5*time.Minute)) {
			t.Fatalf("Check after a 403 = %+v, want refused (cooling down) until +5m", d)
		}
		if d := l.Check(ctx, "shop.example", backoff.Feed, now.Add(5*time.Minute)); !d.Allowed {
			t.Fatalf("Check after the cool-down = %+v, want allowed", d)
		}
	})
}

func put(t *testing.T, s backoff.Store, key string, st backoff.State) {
	t.Helper()
	err := s.Update(context.Background(), key, func(backoff.State, bool) (backoff.State, bool) { return st, true })
	if err != nil {
		t.Fatalf("Update(%q): %v", key, err)
	}
}

// equal compares States, times by instant.
func equal(a, b backoff.State) bool {
	return a.Strikes == b.Strikes && a.RefusedKind == b.RefusedKind && a.LastStatus == b.LastStatus &&
		a.LastChallenge == b.LastChallenge && a.LastAt.Equal(b.LastAt) && a.Until.Equal(b.Until) &&
		a.Suspended == b.Suspended && a.NextCheck.Equal(b.NextCheck)
}
