package fetchtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
)

// RunTurns checks that scheds grant one host's turns in the order of
// asking. scheds are the Schedules of three processes over one shared state
// (one Schedule each, or the same Schedule three times: to a Schedule, the
// owners tell the processes apart). Each process wants the host again the
// moment its request ends (10 ms after its grant), with a fresh owner as a
// Pacer's next request has, and asks again when it was told to; the process
// that held the host last asks at the instant it was told, the others 2 ms
// later (what its own view of the interval, against a round trip, gives the
// holder). The grants must go to every process in turn, in the order they
// first asked: the holder, asking again first, must not win every turn.
//
// The clock is simulated, from 2026-12-01: every call passes its instant as
// its now argument, and a store that takes the time from a clock of its own
// must take it from the callers' in this test (for store/redis, the Store's
// CallerClock). The store's grace for a waiter that asks again late must be
// more than 2 ms.
func RunTurns(t *testing.T, scheds []fetch.Schedule) {
	t.Helper()
	if len(scheds) != 3 {
		t.Fatalf("RunTurns takes the Schedules of three processes, not %d", len(scheds))
	}
	order := turnsInOrder(t, scheds, 12)
	want := strings.Repeat("ABC", len(order)/3+1)[:len(order)]
	if got := strings.Join(order, ""); got != want {
		t.Fatalf("grants in order %s, want %s: turns in the order of asking", got, want)
	}
}

// turnsInOrder runs RunTurns's processes until grants grants, and returns
// the processes in the order they were granted the host.
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
	var lastGrant time.Time
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
		if !lastGrant.IsZero() && a.at.Sub(lastGrant) < gap {
			t.Fatalf("%s granted at +%v, %v after the previous grant: the interval is %v (P1)", c.Owner, a.at.Sub(t0), a.at.Sub(lastGrant), gap)
		}
		lastGrant = a.at
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
	t.Logf("grants: %s", strings.Join(order, ""))
	return order
}

// following passes each call to s after setting the test's clock to the
// call's now argument, for a store that reads the clock RunSchedule gave
// it rather than the arguments.
type following struct {
	s   fetch.Schedule
	set func(time.Time)
}

func (f following) Acquire(ctx context.Context, c fetch.Claim) (time.Duration, bool, error) {
	f.set(c.Now)
	return f.s.Acquire(ctx, c)
}

func (f following) Started(ctx context.Context, key, owner string, now time.Time) error {
	f.set(now)
	return f.s.Started(ctx, key, owner, now)
}

func (f following) Renew(ctx context.Context, key, owner string, now time.Time, ttl time.Duration) error {
	f.set(now)
	return f.s.Renew(ctx, key, owner, now, ttl)
}

func (f following) Release(ctx context.Context, key, owner string, now time.Time) error {
	f.set(now)
	return f.s.Release(ctx, key, owner, now)
}

// goneWaiter checks that a waiter that never asks again (its request gave
// up, its process died) keeps its turn only until its poll-by: a claim
// asking before that is told to wait for it, one asking after is granted.
// The store's grace, what the wait reveals, must be positive and at most
// the gap.
func goneWaiter(t *testing.T, s fetch.Schedule, t0 time.Time) {
	ctx := context.Background()
	const gap = time.Second
	claim := func(owner string, at time.Duration) (time.Duration, bool) {
		t.Helper()
		wait, ok, err := s.Acquire(ctx, fetch.Claim{Key: "h.example", Owner: owner, Now: t0.Add(at), Gap: gap, Limit: 1, TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return wait, ok
	}
	if _, ok := claim("a-1", 0); !ok {
		t.Fatal("first claim refused")
	}
	must(t, s.Release(ctx, "h.example", "a-1", t0.Add(10*time.Millisecond)))
	if wait, ok := claim("b-1", 500*time.Millisecond); ok || wait != 500*time.Millisecond {
		t.Fatalf("waiter: wait %v, ok %v; want to wait 500 ms", wait, ok)
	}
	// b-1 never asks again. Its poll-by: +500 ms, its 500 ms wait and the
	// store's grace, which a-2 is told to wait for.
	grace, ok := claim("a-2", gap)
	if ok || grace <= 0 || grace > gap {
		t.Fatalf("a claim while the waiter may still come: wait %v, ok %v; want to wait for the waiter's grace (0 < grace <= %v)", grace, ok, gap)
	}
	half := (grace / 2).Truncate(time.Microsecond)
	if wait, ok := claim("a-2", gap+half); ok || wait != grace-half {
		t.Fatalf("a claim halfway through the waiter's grace: wait %v, ok %v; want to wait %v more", wait, ok, grace-half)
	}
	if _, ok := claim("a-2", gap+grace); !ok {
		t.Fatal("a claim at the waiter's poll-by was refused: a gone waiter holds the host back")
	}
	t.Logf("grace: %v", grace)
}

// slotForEach checks that with several slots the waiters get a slot each,
// in any order of their asking again, before a claim that did not wait.
func slotForEach(t *testing.T, s fetch.Schedule, t0 time.Time) {
	ctx := context.Background()
	claim := func(owner string, at time.Duration, wantOK bool) {
		t.Helper()
		wait, ok, err := s.Acquire(ctx, fetch.Claim{Key: "two.example", Owner: owner, Now: t0.Add(at), Limit: 2, TTL: time.Minute})
		if err != nil || ok != wantOK || (!ok && wait <= 0) {
			t.Fatalf("Acquire by %s at +%v = wait %v, ok %v, err %v; want ok %v", owner, at, wait, ok, err, wantOK)
		}
	}
	ms := time.Millisecond
	claim("p1", 0, true)
	claim("p2", 0, true)
	claim("x", time.Second, false) // both slots held: x and y wait, in that order
	claim("y", time.Second, false)
	must(t, s.Release(ctx, "two.example", "p1", t0.Add(time.Second+ms)))
	must(t, s.Release(ctx, "two.example", "p2", t0.Add(time.Second+ms)))
	claim("y", time.Second+ms, true)  // a slot for each waiter: y's, though x asked first
	claim("z", time.Second+ms, false) // the other is x's
	claim("x", time.Second+ms, true)
}
