package sqlite

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/fetch/fetchtest"
)

var turnsT0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// turnsClaim is a claim on h.example with a 1 s gap, at turnsT0+at.
func turnsClaim(owner string, at time.Duration) fetch.Claim {
	return fetch.Claim{Key: "h.example", Owner: owner, Now: turnsT0.Add(at), Gap: time.Second, Limit: 1, TTL: time.Minute}
}

// TestSchedule_P1_TurnsAcrossThreeOpens: three DBs opened on one file, as
// three processes would, take one host's turns in the order they asked
// (fetchtest.RunTurns): the holder, asking again the moment its request
// ends, no longer wins every turn.
func TestSchedule_P1_TurnsAcrossThreeOpens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "turns.db")
	var scheds []fetch.Schedule
	for range 3 {
		db, err := Open(ctx, path, &Options{SweepEvery: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		scheds = append(scheds, db.Schedule())
	}
	fetchtest.RunTurns(t, scheds)
}

// TestSchedule_P1_TurnGraceOption: a waiter that never asks again holds
// its host back until the wait it was told and the DB's TurnGrace, no
// longer.
func TestSchedule_P1_TurnGraceOption(t *testing.T) {
	s := openTest(t, &Options{TurnGrace: 100 * time.Millisecond}).Schedule()
	claim := func(owner string, at time.Duration) (time.Duration, bool) {
		t.Helper()
		wait, ok, err := s.Acquire(ctx, turnsClaim(owner, at))
		if err != nil {
			t.Fatal(err)
		}
		return wait, ok
	}
	if _, ok := claim("a-1", 0); !ok {
		t.Fatal("first claim refused")
	}
	if err := s.Release(ctx, "h.example", "a-1", turnsT0.Add(10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if wait, ok := claim("b-1", 500*time.Millisecond); ok || wait != 500*time.Millisecond {
		t.Fatalf("waiter: wait %v, ok %v; want to wait 500 ms", wait, ok)
	}
	if wait, ok := claim("a-2", time.Second); ok || wait != 100*time.Millisecond {
		t.Fatalf("a claim while the waiter may still come: wait %v, ok %v; want to wait 100 ms for it", wait, ok)
	}
	if _, ok := claim("a-2", 1100*time.Millisecond); !ok {
		t.Fatal("a claim at the waiter's poll-by was refused")
	}
}

// TestSchedule_P1_WaiterOfEndedProcessForgotten: a waiter whose process
// has ended (judged as a lease's holder is) holds its host back not even
// until its poll-by; one whose process cannot be judged keeps its place
// until then.
func TestSchedule_P1_WaiterOfEndedProcessForgotten(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a waiter's process is told only where /proc is")
	}
	db := openTest(t, nil)
	self := strings.Split(db.proc, ":")
	if len(self) != 4 {
		t.Fatalf("this process's identity %q", db.proc)
	}
	with := func(i int, v string) string {
		p := append([]string(nil), self...)
		p[i] = v
		return strings.Join(p, ":")
	}
	for _, c := range []struct {
		name, proc string
		ended      bool
	}{
		{"this pid, an earlier start", with(3, self[3]+"0"), true},
		{"another boot", with(0, "00000000-0000-0000-0000-000000000000"), false},
		{"unknown", "", false},
	} {
		cl := turnsClaim("me", 0)
		cl.Key = "host-" + strings.ReplaceAll(c.name, " ", "-")
		if _, err := db.w.ExecContext(ctx, `INSERT INTO schedule_waiter (host, owner, seq, poll_by_ns, proc) VALUES (?1, 'other', 1, ?2, ?3)`,
			cl.Key, toNS(cl.Now.Add(300*time.Millisecond)), c.proc); err != nil {
			t.Fatal(err)
		}
		wait, ok, err := db.Schedule().Acquire(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if ok != c.ended || (!ok && wait != 300*time.Millisecond) {
			t.Errorf("%s: wait %v, ok %v; want granted %v (else to wait 300ms for the waiter)", c.name, wait, ok, c.ended)
		}
	}
}

// TestSweep_P1_WaitersBounded: the waiters' rows are bounded: a granted
// waiter's row goes at its grant, and those of waiters that never asked
// again go at their host's next claim or, for a host not claimed again,
// at the sweep after their poll-by.
func TestSweep_P1_WaitersBounded(t *testing.T) {
	db := openTest(t, nil)
	s := db.Schedule()
	waiters := func() int {
		t.Helper()
		var n int
		if err := db.r.QueryRow(`SELECT count(*) FROM schedule_waiter`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for k := range 10 {
		for o := range 5 {
			cl := turnsClaim(fmt.Sprint("w", o), 10*time.Millisecond)
			cl.Key = fmt.Sprintf("h%d.example", k)
			if o == 0 {
				cl.Owner, cl.Now = "holder", turnsT0
			}
			if _, _, err := s.Acquire(ctx, cl); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := waiters(); n != 40 {
		t.Fatalf("%d waiters, want 40", n)
	}
	for _, key := range []string{"h0.example", "h1.example"} {
		if err := s.Release(ctx, key, "holder", turnsT0.Add(20*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	cl := turnsClaim("w1", time.Second)
	cl.Key = "h0.example"
	if _, ok, err := s.Acquire(ctx, cl); err != nil || !ok {
		t.Fatalf("the first waiter asking again when told: ok %v, %v", ok, err)
	}
	if n := waiters(); n != 39 {
		t.Fatalf("%d waiters after one was granted, want 39", n)
	}
	cl = turnsClaim("late", 5*time.Second)
	cl.Key = "h1.example"
	if _, ok, err := s.Acquire(ctx, cl); err != nil || !ok {
		t.Fatalf("a claim past every waiter's poll-by: ok %v, %v", ok, err)
	}
	if n := waiters(); n != 35 {
		t.Fatalf("%d waiters after h1's next claim, want 35", n)
	}
	sw, err := db.Sweep(ctx, turnsT0.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if sw.Waiters != 35 || waiters() != 0 {
		t.Fatalf("the sweep deleted %d waiters, %d left; want 35, 0", sw.Waiters, waiters())
	}
}
