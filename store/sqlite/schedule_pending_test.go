package sqlite

import (
	"errors"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
)

// TestSchedule_P1_StartAtRelease: two opens of one file, as two processes.
// A request holding a host's only slot has its start written at its
// release, and until then no claim of the other process succeeds, even one
// allowing two in flight (the start may be as late as now). A process that
// dies before its release, its start never written, still leaves the other
// a Gap behind that start once its lease has expired; a lease that would
// not outlive its start by the Gap has the start written at once.
func TestSchedule_P1_StartAtRelease(t *testing.T) {
	dbs := twoOpens(t)
	a, b := dbs[0].Schedule(), dbs[1].Schedule()
	t0 := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ms := time.Millisecond
	claim := func(s *Schedule, owner string, now time.Duration, limit int, ttl time.Duration) (time.Duration, bool) {
		t.Helper()
		wait, ok, err := s.Acquire(ctx, fetch.Claim{Key: "h.example", Owner: owner, Now: at(now), Gap: time.Second, Limit: limit, TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		return wait, ok
	}
	written := func() time.Time {
		t.Helper()
		var ns int64
		if err := dbs[1].r.QueryRow(`SELECT last_start_ns FROM schedule WHERE host = 'h.example'`).Scan(&ns); err != nil {
			t.Fatal(err)
		}
		return fromNS(ns)
	}

	if _, ok := claim(a, "o1", 0, 1, 10*time.Second); !ok {
		t.Fatal("first claim refused")
	}
	if err := a.Started(ctx, "h.example", "o1", at(300*ms)); err != nil {
		t.Fatal(err)
	}
	if got := written(); !got.Equal(t0) {
		t.Errorf("latest start on file %v after Started, want the claim's %v until the release", got.Sub(t0), time.Duration(0))
	}
	if wait, ok := claim(b, "o2", 1100*ms, 2, time.Minute); ok || wait <= 0 {
		t.Errorf("a claim allowing two in flight, while the start is pending: ok %v, wait %v; want refused", ok, wait)
	}
	if err := a.Release(ctx, "h.example", "o1", at(400*ms)); err != nil {
		t.Fatal(err)
	}
	if got := written(); !got.Equal(at(300 * ms)) {
		t.Errorf("latest start on file %v after the release, want 300ms", got.Sub(t0))
	}
	if wait, ok := claim(b, "o2", 1200*ms, 1, time.Minute); ok || wait != 100*ms {
		t.Errorf("claim 1.2 s after a start at 300 ms: ok %v, wait %v; want a 100ms wait", ok, wait)
	}
	if _, ok := claim(b, "o2", 1300*ms, 1, time.Minute); !ok {
		t.Error("claim a Gap after the start refused")
	}
	if err := b.Release(ctx, "h.example", "o2", at(1300*ms)); err != nil {
		t.Fatal(err)
	}

	// o3's process dies after its start at +10.5 s, before its release.
	if _, ok := claim(a, "o3", 10*time.Second, 1, 2*time.Second); !ok {
		t.Fatal("o3's claim refused")
	}
	if err := a.Started(ctx, "h.example", "o3", at(10500*ms)); err != nil {
		t.Fatal(err)
	}
	if _, ok := claim(b, "o4", 11900*ms, 1, time.Minute); ok {
		t.Error("a claim while the dead process's lease lives succeeded")
	}
	if _, ok := claim(b, "o4", 12*time.Second, 1, time.Minute); !ok {
		t.Error("a claim once the dead lease expired, 1.5 s after its start, refused")
	}
	if err := b.Release(ctx, "h.example", "o4", at(12*time.Second)); err != nil {
		t.Fatal(err)
	}

	// A lease that ends 0.7 s after its start: the start is written at once.
	if _, ok := claim(a, "o5", 20*time.Second, 1, 1200*ms); !ok {
		t.Fatal("o5's claim refused")
	}
	if err := a.Started(ctx, "h.example", "o5", at(20500*ms)); err != nil {
		t.Fatal(err)
	}
	if got := written(); !got.Equal(at(20500 * ms)) {
		t.Errorf("latest start on file %v, want 20.5s written at once", got.Sub(t0))
	}
	if wait, ok := claim(b, "o6", 21200*ms, 1, time.Minute); ok || wait != 300*ms {
		t.Errorf("claim once o5's lease expired: ok %v, wait %v; want a 300ms wait from its start", ok, wait)
	}

	// A release of a lease already lost still records the start it held.
	if _, ok := claim(a, "o7", 30*time.Second, 1, 2*time.Second); !ok {
		t.Fatal("o7's claim refused")
	}
	if err := a.Started(ctx, "h.example", "o7", at(30100*ms)); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, "h.example", "o7", at(33*time.Second)); !errors.Is(err, fetch.ErrLeaseNotHeld) {
		t.Errorf("release after expiry: %v, want ErrLeaseNotHeld", err)
	}
	if got := written(); !got.Equal(at(30100 * ms)) {
		t.Errorf("latest start on file %v, want 30.1s recorded at the late release", got.Sub(t0))
	}
}
