package fetch

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestMemorySchedule_P1_TurnGrace: a waiter that never asks again holds
// its key back until the wait it was told and the MemorySchedule's
// TurnGrace, no longer.
func TestMemorySchedule_P1_TurnGrace(t *testing.T) {
	s := &MemorySchedule{TurnGrace: 100 * time.Millisecond}
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	claim := func(owner string, at time.Duration) (time.Duration, bool) {
		t.Helper()
		wait, ok, err := s.Acquire(ctx, Claim{Key: "h.example", Owner: owner, Now: t0.Add(at), Gap: time.Second, Limit: 1, TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return wait, ok
	}
	if _, ok := claim("a-1", 0); !ok {
		t.Fatal("first claim refused")
	}
	if err := s.Release(ctx, "h.example", "a-1", t0.Add(10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if wait, ok := claim("b-1", 500*time.Millisecond); ok || wait != 500*time.Millisecond {
		t.Fatalf("waiter: wait %v, ok %v; want to wait 500 ms", wait, ok)
	}
	if wait, ok := claim("a-2", time.Second); ok || wait != 100*time.Millisecond {
		t.Fatalf("a claim while the waiter may still come: wait %v, ok %v; want to wait 100 ms for it", wait, ok)
	}
	if wait, ok := claim("a-2", 1100*time.Millisecond-time.Nanosecond); ok || wait != time.Nanosecond {
		t.Fatalf("a claim a nanosecond before the waiter's poll-by: wait %v, ok %v; want 1 ns", wait, ok)
	}
	if _, ok := claim("a-2", 1100*time.Millisecond); !ok {
		t.Fatal("a claim at the waiter's poll-by was refused")
	}
}

// TestMemorySchedule_P1_WaitersForgotten: the waiters a MemorySchedule
// keeps are bounded: a key's waiters whose poll-by has come are dropped at
// its next claim, a granted waiter leaves at once, and keys holding only
// gone waiters are swept with the idle keys.
func TestMemorySchedule_P1_WaitersForgotten(t *testing.T) {
	s := &MemorySchedule{Retain: time.Minute}
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	acquire := func(key, owner string, at time.Duration) bool {
		t.Helper()
		_, ok, err := s.Acquire(ctx, Claim{Key: key, Owner: owner, Now: t0.Add(at), Gap: time.Second, Limit: 1, TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	waiters := func(key string) int {
		s.mu.Lock()
		defer s.mu.Unlock()
		if e := s.keys[key]; e != nil {
			return len(e.waiters)
		}
		return -1
	}
	for k := range 50 {
		key := fmt.Sprintf("h%d.example", k)
		if !acquire(key, "holder", 0) {
			t.Fatal("first claim refused")
		}
		for o := range 20 {
			if acquire(key, fmt.Sprint("w", o), 10*time.Millisecond) {
				t.Fatal("a claim inside the interval was granted")
			}
		}
	}
	if n := waiters("h0.example"); n != 20 {
		t.Fatalf("%d waiters, want 20", n)
	}
	// w0, the first waiter, asks again in time and is granted: it leaves.
	if err := s.Release(ctx, "h0.example", "holder", t0.Add(20*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if !acquire("h0.example", "w0", time.Second) {
		t.Fatal("the first waiter, asking again when told, was refused")
	}
	if n := waiters("h0.example"); n != 19 {
		t.Fatalf("%d waiters after the first was granted, want 19", n)
	}
	// The others never ask again: the key's next claim after their poll-by
	// forgets them.
	if err := s.Release(ctx, "h0.example", "w0", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if !acquire("h0.example", "late", 3*time.Second) {
		t.Fatal("a claim after every waiter's poll-by was refused")
	}
	if n := waiters("h0.example"); n != 0 {
		t.Fatalf("%d waiters kept past their poll-by, want 0", n)
	}
	// An hour on, claims on another key sweep the idle keys, gone waiters
	// and all.
	for i := range 200 {
		acquire("other.example", fmt.Sprint("o", i), time.Hour+time.Duration(i)*time.Second)
	}
	s.mu.Lock()
	n := len(s.keys)
	s.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d keys kept, want only the one in use", n)
	}
}
