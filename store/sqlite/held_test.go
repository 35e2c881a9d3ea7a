package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/backoff/backofftest"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/fetch/fetchtest"
	"github.com/politefetch/politefetch/internal/clock"
)

const holdChildEnv = "POLITEFETCH_SQLITE_HOLD_CHILD"

// heldClaim is a claim on key at takeoverT0+at, a 100 ms gap, one slot.
func heldClaim(key, owner string, at time.Duration) fetch.Claim {
	return fetch.Claim{Key: key, Owner: owner, Now: takeoverT0.Add(at), Gap: 100 * time.Millisecond, Limit: 1, TTL: 10 * time.Second}
}

// openAt opens the file at path with the DB's clock standing at
// takeoverT0+at.
func openAt(t *testing.T, path string, at time.Duration) *DB {
	t.Helper()
	db, err := Open(ctx, path, &Options{SweepEvery: -1, Clock: clock.NewManual(takeoverT0.Add(at))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func hold(t *testing.T, db *DB) *HeldSchedule {
	t.Helper()
	h, err := db.HoldSchedule(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHeldSchedule_P1_Conformance(t *testing.T) {
	fetchtest.RunSchedule(t, func(t *testing.T, now func() time.Time) fetch.Schedule {
		return hold(t, openTest(t, &Options{Clock: clock.NewManual(now())}))
	})
}

// TestHeldSchedule_P1_OneHolderTheOthersWait: while one DB holds the
// file's schedule, a second hold is refused with ErrHeld and a claim
// through another DB's shared Schedule is told to wait, with nothing
// queued; at the release the holder's starts are in the file, so the
// shared claim waits out the holder's last start, and the file may be
// held again.
func TestHeldSchedule_P1_OneHolderTheOthersWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.db")
	a, b := openAt(t, path, 0), openAt(t, path, 0)
	h := hold(t, a)
	if _, err := b.HoldSchedule(ctx); !errors.Is(err, ErrHeld) {
		t.Fatalf("a second hold: %v, want ErrHeld", err)
	}
	if _, ok, err := h.Acquire(ctx, heldClaim("a.example", "one", 0)); err != nil || !ok {
		t.Fatalf("the holder's first claim: ok %v, %v", ok, err)
	}
	wait, ok, err := b.Schedule().Acquire(ctx, heldClaim("b.example", "two", time.Second))
	if err != nil || ok || wait <= 0 || wait > time.Second {
		t.Fatalf("a shared claim while the file is held: wait %v, ok %v, %v; want told to wait at most a second", wait, ok, err)
	}
	var waiters int
	if err := b.r.QueryRow(`SELECT count(*) FROM schedule_waiter`).Scan(&waiters); err != nil || waiters != 0 {
		t.Fatalf("waiters queued while the file is held: %d, %v; want none", waiters, err)
	}
	if err := h.Release(ctx, "a.example", "one", takeoverT0.Add(10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := h.Acquire(ctx, heldClaim("a.example", "one", 150*time.Millisecond)); err != nil || !ok {
		t.Fatalf("the holder's claim a gap later: ok %v, %v", ok, err)
	}
	if err := h.Release(ctx, "a.example", "one", takeoverT0.Add(160*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Acquire(ctx, heldClaim("a.example", "one", time.Second)); !errors.Is(err, ErrClosed) {
		t.Fatalf("a claim after the release: %v, want ErrClosed", err)
	}
	wait, ok, err = b.Schedule().Acquire(ctx, heldClaim("a.example", "two", 200*time.Millisecond))
	if err != nil || ok || wait != 50*time.Millisecond {
		t.Fatalf("a shared claim after the release, 50 ms before the holder's gap ends: wait %v, ok %v, %v; want 50ms", wait, ok, err)
	}
	if _, ok, err := b.Schedule().Acquire(ctx, heldClaim("a.example", "two", 250*time.Millisecond)); err != nil || !ok {
		t.Fatalf("a shared claim as the gap ends: ok %v, %v", ok, err)
	}
	if err := b.Schedule().Release(ctx, "a.example", "two", takeoverT0.Add(260*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	h2 := hold(t, b)
	wait, ok, err = h2.Acquire(ctx, heldClaim("a.example", "three", 300*time.Millisecond))
	if err != nil || ok || wait != 50*time.Millisecond {
		t.Fatalf("the next hold's first claim, 50 ms before the shared claim's gap ends: wait %v, ok %v, %v; want 50ms", wait, ok, err)
	}
}

// TestHeldSchedule_RefusedWhileASharedRequestIsInFlight: a live lease of
// the shared Schedule (a crawl sharing the file) refuses the hold.
func TestHeldSchedule_RefusedWhileASharedRequestIsInFlight(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.db")
	a, b := openAt(t, path, 0), openAt(t, path, 0)
	if _, ok, err := b.Schedule().Acquire(ctx, heldClaim("a.example", "two", 0)); err != nil || !ok {
		t.Fatalf("the shared claim: ok %v, %v", ok, err)
	}
	if _, err := a.HoldSchedule(ctx); !errors.Is(err, ErrHeld) {
		t.Fatalf("a hold while a shared lease lives: %v, want ErrHeld", err)
	}
	if err := b.Schedule().Release(ctx, "a.example", "two", takeoverT0.Add(10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	h := hold(t, a)
	wait, ok, err := h.Acquire(ctx, heldClaim("a.example", "one", 60*time.Millisecond))
	if err != nil || ok || wait != 40*time.Millisecond {
		t.Fatalf("the hold's first claim 60 ms after the shared start: wait %v, ok %v, %v; want 40ms", wait, ok, err)
	}
}

// TestHeldSchedule_ExpiredHoldIsAFloor: a hold that cannot be judged
// ended (another boot's) refuses a new one until it expires; then it is
// taken over, and every host's latest start counts as at its expiry.
func TestHeldSchedule_ExpiredHoldIsAFloor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.db")
	a := openAt(t, path, 0)
	p := strings.Split(a.proc, ":")
	if len(p) == 4 {
		p[0] = "00000000-0000-0000-0000-000000000000"
	}
	other := strings.Join(p, ":")
	expires := toNS(takeoverT0.Add(time.Second))
	if _, err := a.w.ExecContext(ctx, `INSERT INTO schedule_hold (id, proc, expires_ns) VALUES (1, ?1, ?2)`, other, expires); err != nil {
		t.Fatal(err)
	}
	if _, err := a.HoldSchedule(ctx); !errors.Is(err, ErrHeld) {
		t.Fatalf("a hold before the other's expiry: %v, want ErrHeld", err)
	}
	wait, ok, err := a.Schedule().Acquire(ctx, heldClaim("a.example", "two", 500*time.Millisecond))
	if err != nil || ok || wait != 500*time.Millisecond {
		t.Fatalf("a shared claim half a second before the hold expires: wait %v, ok %v, %v; want 500ms", wait, ok, err)
	}
	b := openAt(t, path, 2*time.Second)
	h := hold(t, b)
	if h.floor != expires {
		t.Fatalf("floor %v, want the expired hold's expiry %v", fromNS(h.floor), fromNS(expires))
	}
	wait, ok, err = h.Acquire(ctx, heldClaim("a.example", "one", time.Second+40*time.Millisecond))
	if err != nil || ok || wait != 60*time.Millisecond {
		t.Fatalf("a claim 40 ms after the expired hold's end: wait %v, ok %v, %v; want 60ms", wait, ok, err)
	}
	if _, ok, err := h.Acquire(ctx, heldClaim("a.example", "one", time.Second+100*time.Millisecond)); err != nil || !ok {
		t.Fatalf("a claim a gap after the expired hold's end: ok %v, %v", ok, err)
	}
	// Released, the hold keeps the floor for the hosts it did not claim.
	if err := h.Release(ctx, "a.example", "one", takeoverT0.Add(1200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	wait, ok, err = b.Schedule().Acquire(ctx, heldClaim("c.example", "two", time.Second+30*time.Millisecond))
	if err != nil || ok || wait != 70*time.Millisecond {
		t.Fatalf("a shared claim on a host nobody claimed, 30 ms after the floor: wait %v, ok %v, %v; want 70ms", wait, ok, err)
	}
	if s, err := b.Sweep(ctx, takeoverT0.Add(2*time.Hour)); err != nil || s.Schedule == 0 {
		t.Fatalf("sweep two hours on: %+v, %v; want the floor swept", s, err)
	}
	var n int
	if err := b.r.QueryRow(`SELECT count(*) FROM schedule_hold`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("hold rows after the sweep: %d, %v", n, err)
	}
}

// TestHeldSchedule_LostHoldFailsItsClaims: a hold taken over by another
// process (the row no longer this one's) fails its renewal and every
// later claim with ErrHeld, and its Close leaves the new holder's row.
func TestHeldSchedule_LostHoldFailsItsClaims(t *testing.T) {
	db := openAt(t, filepath.Join(t.TempDir(), "held.db"), 0)
	h := hold(t, db)
	if _, err := db.w.ExecContext(ctx, `UPDATE schedule_hold SET proc = 'elsewhere'`); err != nil {
		t.Fatal(err)
	}
	if err := h.renew(ctx, 0); !errors.Is(err, ErrHeld) {
		t.Fatalf("renewal of a hold taken over: %v, want ErrHeld", err)
	}
	if _, _, err := h.Acquire(ctx, heldClaim("a.example", "one", 0)); !errors.Is(err, ErrHeld) {
		t.Fatalf("a claim of a lost hold: %v, want ErrHeld", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	var proc string
	if err := db.r.QueryRow(`SELECT proc FROM schedule_hold`).Scan(&proc); err != nil || proc != "elsewhere" {
		t.Fatalf("the hold's row after the lost hold's Close: %q, %v; want the new holder's", proc, err)
	}
}

// TestHeldSchedule_LeaseOutlastingTheHoldRenewsIt: a claim whose lease
// would outlast the hold is granted only with the hold renewed past it.
func TestHeldSchedule_LeaseOutlastingTheHoldRenewsIt(t *testing.T) {
	db := openAt(t, filepath.Join(t.TempDir(), "held.db"), 0)
	h := hold(t, db)
	c := heldClaim("a.example", "one", 0)
	c.TTL = time.Hour
	if _, ok, err := h.Acquire(ctx, c); err != nil || !ok {
		t.Fatalf("claim: ok %v, %v", ok, err)
	}
	var expires int64
	if err := db.r.QueryRow(`SELECT expires_ns FROM schedule_hold`).Scan(&expires); err != nil || expires < toNS(c.Now.Add(c.TTL)) {
		t.Fatalf("the hold expires at %v, %v; want at the lease's end (%v) or later", fromNS(expires), err, c.Now.Add(c.TTL))
	}
}

// TestHeldSchedule_V12_KilledHolderTakenOver: a child process holds the
// file's schedule and starts a request, then is killed with SIGKILL, its
// hold never released. The next process takes the hold over at once (not
// after the hold's two minutes) and counts every host's latest start as
// at the takeover: a host's first claim waits one gap from then.
func TestHeldSchedule_V12_KilledHolderTakenOver(t *testing.T) {
	if os.Getenv(holdChildEnv) != "" {
		t.Skip("in the child")
	}
	if runtime.GOOS != "linux" {
		t.Skip("a hold's process is told only where /proc is")
	}
	path := filepath.Join(t.TempDir(), "held.db")
	cmd := startHoldingChild(t, "TestHoldChild", holdChildEnv, path)
	db := openAt(t, path, time.Second)
	if _, err := db.HoldSchedule(ctx); !errors.Is(err, ErrHeld) {
		t.Fatalf("a hold while the child lives: %v, want ErrHeld", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	h := hold(t, db)
	if want := toNS(takeoverT0.Add(time.Second)); h.floor != want {
		t.Fatalf("floor %v, want the takeover %v", fromNS(h.floor), fromNS(want))
	}
	for _, host := range []string{"a.example", "b.example"} { // claimed by the child, and not
		wait, ok, err := h.Acquire(ctx, heldClaim(host, "parent", time.Second+30*time.Millisecond))
		if err != nil || ok || wait != 70*time.Millisecond {
			t.Fatalf("%s: a claim 30 ms after the takeover: wait %v, ok %v, %v; want 70ms", host, wait, ok, err)
		}
		if _, ok, err := h.Acquire(ctx, heldClaim(host, "parent", time.Second+100*time.Millisecond)); err != nil || !ok {
			t.Fatalf("%s: a claim a gap after the takeover: ok %v, %v", host, ok, err)
		}
	}
}

// TestHoldChild is the child of TestHeldSchedule_V12_KilledHolderTakenOver:
// it holds the schedule, claims a.example, says so, and waits to be killed.
func TestHoldChild(t *testing.T) {
	path := os.Getenv(holdChildEnv)
	if path == "" {
		t.Skip("run by TestHeldSchedule_V12_KilledHolderTakenOver")
	}
	db, err := Open(ctx, path, &Options{SweepEvery: -1, Clock: clock.NewManual(takeoverT0)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := db.HoldSchedule(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := h.Acquire(ctx, heldClaim("a.example", "child", 900*time.Millisecond)); err != nil || !ok {
		t.Fatalf("the child's claim: ok %v, %v", ok, err)
	}
	os.Stdout.WriteString("HELD\n")
	os.Stdin.Read(make([]byte, 1)) // until the parent kills us (or goes)
	os.Exit(0)                     // never release
}

// TestHeldSchedule_HolderUnknownToThePlatform: where the platform does not
// tell a process's identity, the hold still names a holder (never "",
// which stands for an ended hold's floor), so a second hold is refused.
func TestHeldSchedule_HolderUnknownToThePlatform(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.db")
	a, b := openAt(t, path, 0), openAt(t, path, 0)
	a.proc, b.proc = "", ""
	hold(t, a)
	var proc string
	if err := a.r.QueryRow(`SELECT proc FROM schedule_hold`).Scan(&proc); err != nil || proc == "" {
		t.Fatalf("the hold's process %q, %v; want a token", proc, err)
	}
	if _, err := b.HoldSchedule(ctx); !errors.Is(err, ErrHeld) {
		t.Fatalf("a second hold: %v, want ErrHeld", err)
	}
	if _, ok, err := b.Schedule().Acquire(ctx, heldClaim("a.example", "two", 0)); err != nil || ok {
		t.Fatalf("a shared claim while held: ok %v, %v; want told to wait", ok, err)
	}
}

// TestHeldSchedule_S4_LedgerReadOnceUnderTheHold: while the DB holds the
// file's schedule, a host's ledger record is read from the file once and
// then from memory (a row written behind the store's back is not seen),
// yet a refusal this process records is seen by the very next Check, a
// sweep's deletion too, and once the hold ends every Get reads the file
// again.
func TestHeldSchedule_S4_LedgerReadOnceUnderTheHold(t *testing.T) {
	db := openAt(t, filepath.Join(t.TempDir(), "held.db"), 0)
	h := hold(t, db)
	now := takeoverT0
	ledger := &backoff.Ledger{Store: db.Ledger()}
	if d := ledger.Check(ctx, "a.example", backoff.Article, now); !d.Allowed || d.Recorded {
		t.Fatalf("a host with no record: %+v", d)
	}
	// Only this process writes the ledger while it holds the file; a row
	// put there by hand stands for one it did not write, to show that the
	// second Check did not read the file.
	if _, err := db.w.ExecContext(ctx, `INSERT INTO ledger (key, strikes, refused_kind, last_status, last_challenge, last_at_ns, until_ns, suspended, next_check_ns, rev)
		VALUES ('a.example', 1, 2, 429, '', ?1, ?2, 0, 0, 7)`, toNS(now), toNS(now.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if d := ledger.Check(ctx, "a.example", backoff.Article, now); !d.Allowed || d.Recorded {
		t.Fatalf("the second Check under the hold: %+v; want the first read's answer, from memory", d)
	}
	if _, err := db.w.ExecContext(ctx, `DELETE FROM ledger`); err != nil {
		t.Fatal(err)
	}

	// A refusal recorded by this process: the next Check sees it.
	if _, err := ledger.Observe(ctx, "a.example", backoff.Outcome{Kind: backoff.Article, Status: 429, RetryAfter: "600"}, now); err != nil {
		t.Fatal(err)
	}
	d := ledger.Check(ctx, "a.example", backoff.Article, now.Add(time.Second))
	if d.Allowed || d.Reason != backoff.Cooldown || !d.Until.Equal(now.Add(600*time.Second)) {
		t.Fatalf("the Check after a 429 with Retry-After 600: %+v; want a cool-down to %v", d, now.Add(600*time.Second))
	}
	// A record holding nothing, read under the hold, then deleted by the
	// sweep: the hold forgets it too.
	if _, err := db.w.ExecContext(ctx, `INSERT INTO ledger (key, strikes, refused_kind, last_status, last_challenge, last_at_ns, until_ns, suspended, next_check_ns, rev)
		VALUES ('c.example', 0, 2, 429, '', ?1, ?1, 0, 0, 7)`, toNS(now)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.Ledger().Get(ctx, "c.example"); err != nil || !ok {
		t.Fatalf("c.example, first read under the hold: ok %v, %v", ok, err)
	}
	if n, err := db.Ledger().Sweep(ctx, now.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("sweep: %d deleted, %v; want 1", n, err)
	}
	if st, ok, err := db.Ledger().Get(ctx, "c.example"); err != nil || ok {
		t.Fatalf("Get after the sweep: %+v, %v, %v; want no record", st, ok, err)
	}

	// The hold released: the file is read again.
	if _, err := db.w.ExecContext(ctx, `INSERT INTO ledger (key, strikes, refused_kind, last_status, last_challenge, last_at_ns, until_ns, suspended, next_check_ns, rev)
		VALUES ('b.example', 1, 2, 429, '', ?1, ?2, 0, 0, 7)`, toNS(now), toNS(now.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.Ledger().Get(ctx, "b.example"); err != nil || !ok {
		t.Fatalf("b.example, first read under the hold: ok %v, %v", ok, err)
	}
	if _, err := db.w.ExecContext(ctx, `DELETE FROM ledger`); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.Ledger().Get(ctx, "b.example"); err != nil || ok {
		t.Fatalf("b.example after the hold's end: ok %v, %v; want the file's answer (no record)", ok, err)
	}
}

// TestHeldSchedule_P1_LedgerConformance: the ledger store of a DB holding
// its file's schedule passes the ledger's conformance suite.
func TestHeldSchedule_P1_LedgerConformance(t *testing.T) {
	backofftest.Run(t, func(t *testing.T) backoff.Store {
		db := openTest(t, nil)
		hold(t, db)
		return db.Ledger()
	})
}

// TestHeldSchedule_LostHoldReadsTheLedgerAgain: a hold taken over by
// another process (still the DB's until Close) keeps no ledger record:
// every Get reads the file again, where the new holder may record.
func TestHeldSchedule_LostHoldReadsTheLedgerAgain(t *testing.T) {
	db := openAt(t, filepath.Join(t.TempDir(), "held.db"), 0)
	h := hold(t, db)
	if _, ok, err := db.Ledger().Get(ctx, "a.example"); err != nil || ok {
		t.Fatalf("a host with no record: ok %v, %v", ok, err)
	}
	if _, err := db.w.ExecContext(ctx, `UPDATE schedule_hold SET proc = 'elsewhere'`); err != nil {
		t.Fatal(err)
	}
	if err := h.renew(ctx, 0); !errors.Is(err, ErrHeld) {
		t.Fatalf("renewal of a hold taken over: %v, want ErrHeld", err)
	}
	// The new holder's refusal, in the file.
	if _, err := db.w.ExecContext(ctx, `INSERT INTO ledger (key, strikes, refused_kind, last_status, last_challenge, last_at_ns, until_ns, suspended, next_check_ns, rev)
		VALUES ('a.example', 1, 2, 429, '', ?1, ?2, 0, 0, 7)`, toNS(takeoverT0), toNS(takeoverT0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if st, ok, err := db.Ledger().Get(ctx, "a.example"); err != nil || !ok || st.Strikes != 1 {
		t.Fatalf("Get after the hold was lost: %+v, ok %v, %v; want the file's record (1 strike)", st, ok, err)
	}
}
