// Package fetchtest checks implementations of the fetch package's pluggable state.
// A store for validators (Redis, SQLite, …) passes Run before it is trusted with
// conditional GET, and a shared pacing schedule (Redis, SQLite) passes
// RunSchedule:
//
//	func TestMyStore(t *testing.T) {
//		fetchtest.Run(t, func(t *testing.T) fetch.ValidatorStore { return newMyStore(t) })
//	}
package fetchtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
)

// Run checks that the stores newStore makes behave as a [fetch.ValidatorStore] must: a
// fresh store is empty, Put then Get returns what was put, Put replaces, Delete
// forgets (and deleting an unknown key is no error), keys are exact strings, and
// concurrent use is safe. Each subtest gets its own store from newStore.
func Run(t *testing.T, newStore func(t *testing.T) fetch.ValidatorStore) {
	ctx := context.Background()
	t.Run("Empty", func(t *testing.T) {
		s := newStore(t)
		if v, ok, err := s.Get(ctx, "https://a.example/feed.xml"); err != nil || ok || v != (fetch.Validator{}) {
			t.Fatalf("Get on a fresh store = %+v, %v, %v; want zero, false, nil", v, ok, err)
		}
	})
	t.Run("PutGetReplaceDelete", func(t *testing.T) {
		s := newStore(t)
		key := "https://a.example/feed.xml"
		// Length is kept with the validators (what a 304 to them saves),
		// and a second Put without one replaces it.
		v1 := fetch.Validator{ETag: `"abc"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT", Length: 123456}
		v2 := fetch.Validator{ETag: `W/"def"`}
		if err := s.Put(ctx, key, v1); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.Get(ctx, key); err != nil || !ok || got != v1 {
			t.Fatalf("Get after Put = %+v, %v, %v; want %+v", got, ok, err, v1)
		}
		if err := s.Put(ctx, key, v2); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := s.Get(ctx, key); got != v2 {
			t.Fatalf("Get after a second Put = %+v, want %+v", got, v2)
		}
		if err := s.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.Get(ctx, key); ok || err != nil {
			t.Fatalf("Get after Delete: ok %v, err %v", ok, err)
		}
		if err := s.Delete(ctx, "https://never.example/"); err != nil {
			t.Fatalf("Delete of an unknown key: %v", err)
		}
	})
	t.Run("KeysAreExact", func(t *testing.T) {
		s := newStore(t)
		keys := []string{"https://a.example/x", "https://a.example/x?y=1", "https://A.example/x", "https://a.example/x/"}
		for i, k := range keys {
			if err := s.Put(ctx, k, fetch.Validator{ETag: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		for i, k := range keys {
			if got, ok, _ := s.Get(ctx, k); !ok || got.ETag != fmt.Sprint(i) {
				t.Fatalf("key %q: got %+v, %v; want ETag %d", k, got, ok, i)
			}
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 100 {
					k := fmt.Sprintf("https://h%d.example/%d", g, i%10)
					if err := s.Put(ctx, k, fetch.Validator{ETag: fmt.Sprint(i)}); err != nil {
						t.Error(err)
						return
					}
					if _, ok, err := s.Get(ctx, k); err != nil || !ok {
						t.Errorf("Get %s right after Put: ok %v, err %v", k, ok, err)
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}

// RunSchedule checks that the schedules newSchedule makes behave as a
// [fetch.Schedule] must. Each subtest gets its own schedule from newSchedule,
// with now, the helper's clock: a manual one, starting at 2026-01-01 and moved
// only by the helper. Every call passes its reading as the now argument; a
// store that takes the time from a clock of its own (a Redis script reading
// TIME, a database's now) must read it from now in this test (for Redis under
// miniredis, set the server's time from now before each call), so that the
// checks need no real time to pass.
//
// It checks: a first claim succeeds at once; a claim less than Gap after the
// latest start fails and says how long to wait, after which it succeeds;
// Started moves the latest start forward, never back; the in-flight slot: with
// Limit live leases a claim fails even once the gap has passed, and succeeds
// once one is released or has expired; release by an owner that holds no live
// lease (another owner, or one whose lease expired) is refused with
// fetch.ErrLeaseNotHeld and changes nothing; Renew extends a live lease and is
// refused for a lost one; keys are independent; of concurrent claims for
// one key at one instant exactly Limit succeed; turns go in the order of
// asking (RunTurns, with the one schedule standing for three processes, each
// its own owners); and a waiter that never asks again holds the key back
// only until its poll-by, the wait it was told and the store's grace (which
// must be more than 2 ms and at most 1 s); with several slots free, the
// waiters get one each before a claim that did not wait.
func RunSchedule(t *testing.T, newSchedule func(t *testing.T, now func() time.Time) fetch.Schedule) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sec := time.Second
	type harness struct {
		s   fetch.Schedule
		mu  sync.Mutex
		now time.Time
	}
	setup := func(t *testing.T) *harness {
		h := &harness{now: t0}
		h.s = newSchedule(t, func() time.Time { h.mu.Lock(); defer h.mu.Unlock(); return h.now })
		return h
	}
	at := func(h *harness, d time.Duration) time.Time {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.now = t0.Add(d)
		return h.now
	}
	claim := func(t *testing.T, h *harness, c fetch.Claim, wantOK bool, wantWait time.Duration) {
		t.Helper()
		if c.Limit == 0 {
			c.Limit = 1
		}
		if c.TTL == 0 {
			c.TTL = time.Hour
		}
		wait, ok, err := h.s.Acquire(ctx, c)
		if err != nil || ok != wantOK || wait != wantWait {
			t.Fatalf("Acquire(%s by %s at +%v, gap %v, limit %d) = wait %v, ok %v, err %v; want wait %v, ok %v",
				c.Key, c.Owner, c.Now.Sub(t0), c.Gap, c.Limit, wait, ok, err, wantWait, wantOK)
		}
	}
	t.Run("Spacing", func(t *testing.T) {
		h := setup(t)
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o1", Now: at(h, 0), Gap: sec}, true, 0)
		must(t, h.s.Release(ctx, "a.example", "o1", at(h, 100*time.Millisecond)))
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, 400*time.Millisecond), Gap: sec}, false, 600*time.Millisecond) // too soon: how long
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, sec), Gap: sec}, true, 0)                                      // then it succeeds
		must(t, h.s.Release(ctx, "a.example", "o2", at(h, sec)))
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o3", Now: at(h, 10*sec), Gap: 3 * sec}, true, 0) // idle since: now
		must(t, h.s.Release(ctx, "a.example", "o3", at(h, 10*sec)))
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o4", Now: at(h, 12*sec), Gap: 3 * sec}, false, sec) // a longer gap
		claim(t, h, fetch.Claim{Key: "b.example", Owner: "o5", Now: at(h, 12*sec), Gap: 3 * sec}, true, 0)    // another key
	})
	t.Run("Started", func(t *testing.T) {
		h := setup(t)
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o1", Now: at(h, 0), Gap: sec}, true, 0)
		// The request put load on the host 300 ms after its claim.
		must(t, h.s.Started(ctx, "a.example", "o1", at(h, 300*time.Millisecond)))
		must(t, h.s.Release(ctx, "a.example", "o1", at(h, 400*time.Millisecond)))
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, sec), Gap: sec}, false, 300*time.Millisecond)
		// A report of an earlier instant moves nothing back.
		must(t, h.s.Started(ctx, "a.example", "o1", at(h, 200*time.Millisecond)))
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, sec), Gap: sec}, false, 300*time.Millisecond)
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, 1300*time.Millisecond), Gap: sec}, true, 0)
	})
	t.Run("Slot", func(t *testing.T) {
		h := setup(t)
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o1", Now: at(h, 0), Gap: sec, TTL: time.Minute}, true, 0)
		// The gap has long passed, but o1 still holds the only slot: wait until its lease expires at the latest.
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, 20*sec), Gap: sec}, false, 40*sec)
		must(t, h.s.Release(ctx, "a.example", "o1", at(h, 21*sec)))
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, 21*sec), Gap: sec}, true, 0)
		// Two slots: two holders at once, a third waits.
		claim(t, h, fetch.Claim{Key: "b.example", Owner: "p1", Now: at(h, 30*sec), Limit: 2}, true, 0)
		claim(t, h, fetch.Claim{Key: "b.example", Owner: "p2", Now: at(h, 30*sec), Limit: 2}, true, 0)
		claim(t, h, fetch.Claim{Key: "b.example", Owner: "p3", Now: at(h, 31*sec), Limit: 2, TTL: time.Minute}, false, time.Hour-sec)
	})
	t.Run("GapEndsBeforeTheLease", func(t *testing.T) {
		// A claim made while the only slot is held and the gap is still to
		// come is told the gap's end, not the lease's expiry: asking again
		// then, it finds the holder usually done (at the very instant of a
		// release, a claim ordered before it must not come back an interval
		// late, behind the next claimant).
		h := setup(t)
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o1", Now: at(h, 0), Gap: sec, TTL: time.Minute}, true, 0)
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, 10*time.Millisecond), Gap: sec}, false, 990*time.Millisecond)
		must(t, h.s.Release(ctx, "a.example", "o1", at(h, 10*time.Millisecond)))
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, sec), Gap: sec, TTL: time.Minute}, true, 0)
		// Once the gap has passed, a held slot's wait is its lease's expiry.
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o3", Now: at(h, 2*sec), Gap: sec}, false, time.Minute-sec)
	})
	t.Run("LeaseExpires", func(t *testing.T) {
		h := setup(t)
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o1", Now: at(h, 0), Gap: sec, TTL: 10 * sec}, true, 0)
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, 5*sec), Gap: sec}, false, 5*sec)
		// o1's process died: its lease ends by itself, and another owner gets the slot.
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, 10*sec), Gap: sec}, true, 0)
		// The dead owner can no longer release or renew what it lost.
		if err := h.s.Release(ctx, "a.example", "o1", at(h, 11*sec)); !errors.Is(err, fetch.ErrLeaseNotHeld) {
			t.Fatalf("Release of an expired lease: %v, want ErrLeaseNotHeld", err)
		}
		if err := h.s.Renew(ctx, "a.example", "o1", at(h, 11*sec), time.Minute); !errors.Is(err, fetch.ErrLeaseNotHeld) {
			t.Fatalf("Renew of an expired lease: %v, want ErrLeaseNotHeld", err)
		}
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o3", Now: at(h, 12*sec), Gap: sec, TTL: time.Minute}, false, time.Hour-2*sec) // o2 still holds it
	})
	t.Run("ReleaseByOwnerOnly", func(t *testing.T) {
		h := setup(t)
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o1", Now: at(h, 0), TTL: time.Minute}, true, 0)
		for _, other := range []string{"o2", ""} {
			if err := h.s.Release(ctx, "a.example", other, at(h, sec)); !errors.Is(err, fetch.ErrLeaseNotHeld) {
				t.Fatalf("Release by %q, not the owner: %v, want ErrLeaseNotHeld", other, err)
			}
		}
		if err := h.s.Release(ctx, "never.example", "o1", at(h, sec)); !errors.Is(err, fetch.ErrLeaseNotHeld) {
			t.Fatalf("Release on an unknown key: %v, want ErrLeaseNotHeld", err)
		}
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, 2*sec)}, false, time.Minute-2*sec) // o1 still holds it
		must(t, h.s.Release(ctx, "a.example", "o1", at(h, 3*sec)))
		if err := h.s.Release(ctx, "a.example", "o1", at(h, 3*sec)); !errors.Is(err, fetch.ErrLeaseNotHeld) {
			t.Fatalf("second Release: %v, want ErrLeaseNotHeld", err)
		}
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, 3*sec)}, true, 0)
	})
	t.Run("Renew", func(t *testing.T) {
		h := setup(t)
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o1", Now: at(h, 0), TTL: 10 * sec}, true, 0)
		must(t, h.s.Renew(ctx, "a.example", "o1", at(h, 8*sec), 10*sec)) // now expires at +18 s
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, 12*sec)}, false, 6*sec)
		if err := h.s.Renew(ctx, "a.example", "o2", at(h, 12*sec), 10*sec); !errors.Is(err, fetch.ErrLeaseNotHeld) {
			t.Fatalf("Renew by a non-owner: %v, want ErrLeaseNotHeld", err)
		}
		claim(t, h, fetch.Claim{Key: "a.example", Owner: "o2", Now: at(h, 18*sec)}, true, 0)
	})
	t.Run("Concurrent", func(t *testing.T) {
		for _, limit := range []int{1, 3} {
			h := setup(t)
			now := at(h, 0)
			var won atomic.Int32
			var wg sync.WaitGroup
			for g := range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					wait, ok, err := h.s.Acquire(ctx, fetch.Claim{Key: "c.example", Owner: fmt.Sprint("g", g), Now: now, Limit: limit, TTL: time.Minute})
					switch {
					case err != nil:
						t.Error(err)
					case ok:
						won.Add(1)
					case wait <= 0:
						t.Errorf("a failed claim says to wait %v", wait)
					}
				}()
			}
			wg.Wait()
			if n := won.Load(); int(n) != limit {
				t.Fatalf("%d of 20 concurrent claims succeeded with %d slots, want exactly %d", n, limit, limit)
			}
		}
	})
	// The turns' own clocks start elsewhere: each call sets the helper's.
	follow := func(h *harness) fetch.Schedule {
		return following{h.s, func(now time.Time) { h.mu.Lock(); defer h.mu.Unlock(); h.now = now }}
	}
	t.Run("TurnsInOrder", func(t *testing.T) {
		s := follow(setup(t))
		RunTurns(t, []fetch.Schedule{s, s, s})
	})
	t.Run("GoneWaiterHoldsBackOnlyItsGrace", func(t *testing.T) {
		goneWaiter(t, follow(setup(t)), t0)
	})
	t.Run("SlotForEachWaiter", func(t *testing.T) {
		slotForEach(t, follow(setup(t)), t0)
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
