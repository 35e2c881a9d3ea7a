package redis

import (
	"context"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/fetch/fetchtest"
)

// TestSchedule_TurnsInOrder: three processes (three Stores on one Redis)
// asking for one host without pause take turns in the order they asked
// (fetchtest.RunTurns; P1's interval holds for each): the holder, asking
// again the moment its request ends and knowing the instant the interval
// ends, no longer wins every turn.
func TestSchedule_TurnsInOrder(t *testing.T) {
	base := realStore(t)
	base.CallerClock = true // the simulated clock of the claims
	var scheds []fetch.Schedule
	for range 3 {
		s := otherProcess(t, base)
		s.CallerClock = true
		scheds = append(scheds, s.Schedule())
	}
	fetchtest.RunTurns(t, scheds)
}

// TestCluster_TurnsInOrder: TestSchedule_TurnsInOrder on a Redis Cluster.
func TestCluster_TurnsInOrder(t *testing.T) {
	base := clusterStore(t)
	var scheds []fetch.Schedule
	for range 3 {
		s := &Store{Client: requireCluster(t).client(t), Prefix: base.Prefix, CallerClock: true}
		scheds = append(scheds, s.Schedule())
	}
	fetchtest.RunTurns(t, scheds)
}

// TestSchedule_GoneWaiterHoldsBackOnlyItsGrace: a waiter that never asks
// again (its request gave up, its process died) keeps its turn only until
// its poll-by, the wait it was told and the TurnGrace: a claim asking
// before that is told to wait for it, one asking after is granted.
func TestSchedule_GoneWaiterHoldsBackOnlyItsGrace(t *testing.T) {
	s := realStore(t)
	s.CallerClock = true
	s.TurnGrace = 100 * time.Millisecond
	sc := s.Schedule()
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	claim := func(owner string, at time.Duration) (time.Duration, bool) {
		t.Helper()
		wait, ok, err := sc.Acquire(ctx, fetch.Claim{Key: "h.example", Owner: owner, Now: t0.Add(at), Gap: time.Second, Limit: 1, TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return wait, ok
	}
	if _, ok := claim("a-1", 0); !ok {
		t.Fatal("first claim refused")
	}
	if err := sc.Release(ctx, "h.example", "a-1", t0.Add(10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if wait, ok := claim("b-1", 500*time.Millisecond); ok || wait != 500*time.Millisecond {
		t.Fatalf("waiter: wait %v, ok %v; want to wait 500 ms", wait, ok)
	}
	// b-1 never asks again. Its poll-by: +500 ms, its 500 ms wait and 100 ms.
	if wait, ok := claim("a-2", time.Second); ok || wait != 100*time.Millisecond {
		t.Fatalf("a claim while the waiter may still come: wait %v, ok %v; want to wait 100 ms for it", wait, ok)
	}
	if _, ok := claim("a-2", 1100*time.Millisecond); !ok {
		t.Fatal("a claim after the waiter's poll-by was refused: a gone waiter holds the host back")
	}
}
