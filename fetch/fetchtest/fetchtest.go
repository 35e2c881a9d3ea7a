// Package fetchtest checks implementations of the fetch package's pluggable state.
// A store for validators (Redis, SQLite, …) passes Run before it is trusted with
// conditional GET, and a shared pacing schedule passes RunSchedule:
//
//	func TestMyStore(t *testing.T) {
//		fetchtest.Run(t, func(t *testing.T) fetch.ValidatorStore { return newMyStore(t) })
//	}
package fetchtest

import (
	"context"
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
		v1 := fetch.Validator{ETag: `"abc"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT"}
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
// [fetch.Schedule] must: a first claim succeeds at once; a claim less than gap
// after the latest start fails and names the instant it could succeed, which
// then succeeds; Started moves the latest start forward, never back; keys are
// independent; and of concurrent claims for one key at one instant exactly one
// succeeds. Each subtest gets its own schedule from newSchedule.
func RunSchedule(t *testing.T, newSchedule func(t *testing.T) fetch.Schedule) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	claim := func(t *testing.T, s fetch.Schedule, key string, now time.Time, gap time.Duration, wantOK bool, wantNext time.Time) {
		t.Helper()
		next, ok, err := s.Claim(ctx, key, now, gap)
		if err != nil || ok != wantOK || !next.Equal(wantNext) {
			t.Fatalf("Claim(%s, +%v, gap %v) = %v, %v, %v; want +%v, %v", key, now.Sub(t0), gap, next.Sub(t0), ok, err, wantNext.Sub(t0), wantOK)
		}
	}
	t.Run("Spacing", func(t *testing.T) {
		s := newSchedule(t)
		sec := time.Second
		claim(t, s, "a.example", t0, sec, true, t0)                                     // first: now
		claim(t, s, "a.example", t0.Add(500*time.Millisecond), sec, false, t0.Add(sec)) // too soon: when
		claim(t, s, "a.example", t0.Add(sec), sec, true, t0.Add(sec))                   // then it succeeds
		claim(t, s, "a.example", t0.Add(10*sec), 3*sec, true, t0.Add(10*sec))           // idle since: now
		claim(t, s, "a.example", t0.Add(12*sec), 3*sec, false, t0.Add(13*sec))          // a longer gap
		claim(t, s, "b.example", t0, sec, true, t0)                                     // another key
	})
	t.Run("Started", func(t *testing.T) {
		s := newSchedule(t)
		sec := time.Second
		claim(t, s, "a.example", t0, sec, true, t0)
		late := t0.Add(300 * time.Millisecond) // the request left 300 ms after its claim
		if err := s.Started(ctx, "a.example", late); err != nil {
			t.Fatal(err)
		}
		claim(t, s, "a.example", t0.Add(sec), sec, false, late.Add(sec))
		if err := s.Started(ctx, "a.example", t0); err != nil { // never back
			t.Fatal(err)
		}
		claim(t, s, "a.example", late.Add(sec), sec, true, late.Add(sec))
	})
	t.Run("Concurrent", func(t *testing.T) {
		s := newSchedule(t)
		var won atomic.Int32
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				next, ok, err := s.Claim(ctx, "c.example", t0, time.Second)
				switch {
				case err != nil:
					t.Error(err)
				case ok:
					won.Add(1)
				case !next.Equal(t0.Add(time.Second)):
					t.Errorf("a failed claim names %v, want one gap after the winner", next.Sub(t0))
				}
			}()
		}
		wg.Wait()
		if n := won.Load(); n != 1 {
			t.Fatalf("%d of 20 concurrent claims succeeded, want exactly 1", n)
		}
	})
}
