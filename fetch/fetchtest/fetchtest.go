// Package fetchtest checks implementations of the fetch package's pluggable state.
// A store for validators (Redis, SQLite, …) passes Run before it is trusted with
// conditional GET, and a shared pacing schedule passes RunSchedule:
//
//	func TestMyStore(t *testing.T) {
//		fetchtest.Run(t, func(t *testing.T) fetch.Store { return newMyStore(t) })
//	}
package fetchtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
)

// Run checks that the stores newStore makes behave as a [fetch.Store] must: a
// fresh store is empty, Put then Get returns what was put, Put replaces, Delete
// forgets (and deleting an unknown key is no error), keys are exact strings, and
// concurrent use is safe. Each subtest gets its own store from newStore.
func Run(t *testing.T, newStore func(t *testing.T) fetch.Store) {
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
// [fetch.Schedule] must: a first reservation starts now; each later one for the
// same key starts at least gap after the previous one; keys are independent;
// concurrent reservations for one key get distinct starts at least gap apart.
// Each subtest gets its own schedule from newSchedule.
func RunSchedule(t *testing.T, newSchedule func(t *testing.T) fetch.Schedule) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t.Run("Spacing", func(t *testing.T) {
		s := newSchedule(t)
		for i, tc := range []struct {
			now  time.Time
			gap  time.Duration
			want time.Time
		}{
			{t0, time.Second, t0},                                                  // first: now
			{t0, time.Second, t0.Add(time.Second)},                                 // one gap after
			{t0.Add(500 * time.Millisecond), time.Second, t0.Add(2 * time.Second)}, // queued behind
			{t0.Add(10 * time.Second), time.Second, t0.Add(10 * time.Second)},      // idle since: now
			{t0.Add(10 * time.Second), 3 * time.Second, t0.Add(13 * time.Second)},  // a longer gap
		} {
			got, err := s.Reserve(ctx, "a.example", tc.now, tc.gap)
			if err != nil || !got.Equal(tc.want) {
				t.Fatalf("reservation %d: %v, %v; want %v", i, got, err, tc.want)
			}
		}
		if got, _ := s.Reserve(ctx, "b.example", t0, time.Second); !got.Equal(t0) {
			t.Fatalf("another key waited: %v", got)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		s := newSchedule(t)
		var mu sync.Mutex
		var starts []time.Time
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := s.Reserve(ctx, "c.example", t0, time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				starts = append(starts, st)
				mu.Unlock()
			}()
		}
		wg.Wait()
		slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
		for i := 1; i < len(starts); i++ {
			if d := starts[i].Sub(starts[i-1]); d < time.Second {
				t.Fatalf("starts %d and %d only %v apart", i-1, i, d)
			}
		}
	})
}
