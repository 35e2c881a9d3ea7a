package redis

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
)

// turnsInOrder runs three processes sharing one host through sched (one
// Schedule each), on a simulated clock the schedule takes from the
// claims: each process wants the host again the moment its request ends
// (10 ms after its grant), with a fresh owner as a Pacer's next request
// has, and asks again when it was told to; the process that held the host
// last asks at the instant it was told, the others 2 ms later (what its
// own view of the interval, against a round trip, gives the holder). It
// returns the processes in the order they were granted the host.
func turnsInOrder(t *testing.T, scheds []fetch.Schedule, grants int) []string {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	const gap, hold, lag = time.Second, 10 * time.Millisecond, 2 * time.Millisecond
	type ask struct {
		at   time.Time
		seq  int
		proc int
	}
	names := []string{"A", "B", "C"}
	owner := make([]string, len(scheds))
	turn := make([]int, len(scheds))
	var queue []ask
	seq := 0
	push := func(at time.Time, proc int) {
		seq++
		queue = append(queue, ask{at, seq, proc})
	}
	for p := range scheds {
		owner[p] = fmt.Sprintf("%s-%d", names[p], turn[p])
		push(t0, p)
	}
	var order []string
	lastHolder := -1
	for len(order) < grants && len(queue) > 0 {
		slices.SortFunc(queue, func(a, b ask) int {
			if c := a.at.Compare(b.at); c != 0 {
				return c
			}
			return a.seq - b.seq
		})
		a := queue[0]
		queue = queue[1:]
		c := fetch.Claim{Key: "shared.example", Owner: owner[a.proc], Now: a.at, Gap: gap, Limit: 1, TTL: time.Minute}
		wait, ok, err := scheds[a.proc].Acquire(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if wait <= 0 {
				t.Fatalf("%s refused at +%v with a wait of %v", c.Owner, a.at.Sub(t0), wait)
			}
			d := wait
			if a.proc != lastHolder {
				d += lag
			}
			push(a.at.Add(d), a.proc)
			continue
		}
		order = append(order, names[a.proc])
		lastHolder = a.proc
		end := a.at.Add(hold)
		if err := scheds[a.proc].Release(ctx, c.Key, c.Owner, end); err != nil {
			t.Fatal(err)
		}
		turn[a.proc]++
		owner[a.proc] = fmt.Sprintf("%s-%d", names[a.proc], turn[a.proc])
		push(end, a.proc)
	}
	return order
}

// checkTurns fails t unless order takes turns: every process in turn, in
// the order they first asked.
func checkTurns(t *testing.T, order []string) {
	t.Helper()
	want := strings.Repeat("ABC", len(order)/3+1)[:len(order)]
	if got := strings.Join(order, ""); got != want {
		t.Fatalf("grants in order %s, want %s: turns in the order of asking", got, want)
	}
	t.Logf("grants: %s", strings.Join(order, ""))
}

// TestSchedule_TurnsInOrder: three processes asking for one host without
// pause take turns in the order they asked (P1's interval holds for each);
// the holder, asking again the moment its request ends and knowing the
// instant the interval ends, no longer wins every turn.
func TestSchedule_TurnsInOrder(t *testing.T) {
	base := realStore(t)
	base.CallerClock = true // the simulated clock of the claims
	var scheds []fetch.Schedule
	for range 3 {
		s := otherProcess(t, base)
		s.CallerClock = true
		scheds = append(scheds, s.Schedule())
	}
	checkTurns(t, turnsInOrder(t, scheds, 12))
}

// TestCluster_TurnsInOrder: TestSchedule_TurnsInOrder on a Redis Cluster.
func TestCluster_TurnsInOrder(t *testing.T) {
	base := clusterStore(t)
	var scheds []fetch.Schedule
	for range 3 {
		s := &Store{Client: requireCluster(t).client(t), Prefix: base.Prefix, CallerClock: true}
		scheds = append(scheds, s.Schedule())
	}
	checkTurns(t, turnsInOrder(t, scheds, 12))
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
