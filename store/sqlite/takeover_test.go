package sqlite

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
)

// leaseChildEnv names the file the lease-holding child opens; set only in
// the child.
const leaseChildEnv = "POLITEFETCH_SQLITE_LEASE_CHILD"

var takeoverT0 = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

// takeoverClaim is the claim on a.example both processes make, at t0+at.
func takeoverClaim(owner string, at time.Duration) fetch.Claim {
	return fetch.Claim{Key: "a.example", Owner: owner, Now: takeoverT0.Add(at), Gap: 100 * time.Millisecond, Limit: 1, TTL: time.Hour}
}

// TestSchedule_DeadProcessLeaseTakenOver_V12: a child process takes the
// only in-flight slot of a host for an hour (its request's start pending
// for the release), then is killed with SIGKILL. While it lives, another
// process's claim is told to wait out its lease; once it is dead, the next
// claim takes the slot over at once, as a request started at the takeover:
// it waits one Gap from then, not for the lease's hour, and the claim a Gap
// later is granted. The parent's claims are one request's, asking again
// with its owner as a Pacer's request does (and keeping its turn).
func TestSchedule_DeadProcessLeaseTakenOver_V12(t *testing.T) {
	if os.Getenv(leaseChildEnv) != "" {
		t.Skip("in the child")
	}
	if runtime.GOOS != "linux" {
		t.Skip("a lease's process is told only where /proc is")
	}
	path := filepath.Join(t.TempDir(), "lease.db")
	cmd := startHoldingChild(t, "TestLeaseChild", leaseChildEnv, path)
	db, err := Open(ctx, path, &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := db.Schedule()

	// The child lives: its lease holds the slot, the Gap long passed.
	wait, ok, err := s.Acquire(ctx, takeoverClaim("parent", 150*time.Millisecond))
	if err != nil || ok || wait < 59*time.Minute {
		t.Fatalf("claim while the lease's process lives: wait %v, ok %v, %v; want the lease waited out", wait, ok, err)
	}

	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	wait, ok, err = s.Acquire(ctx, takeoverClaim("parent", 151*time.Millisecond))
	if err != nil || ok || wait != 100*time.Millisecond {
		t.Fatalf("first claim after the lease's process was killed: wait %v, ok %v, %v; want a Gap from the takeover (100ms), not the dead lease's hour", wait, ok, err)
	}
	wait, ok, err = s.Acquire(ctx, takeoverClaim("parent", 251*time.Millisecond))
	if err != nil || !ok {
		t.Fatalf("claim a Gap after the takeover: wait %v, ok %v, %v; want it granted", wait, ok, err)
	}
}

// TestLeaseChild is the child of TestSchedule_DeadProcessLeaseTakenOver_V12:
// it takes its lease, says so, and holds it until killed.
func TestLeaseChild(t *testing.T) {
	path := os.Getenv(leaseChildEnv)
	if path == "" {
		t.Skip("run by TestSchedule_DeadProcessLeaseTakenOver_V12")
	}
	db, err := Open(ctx, path, &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.Schedule().Acquire(ctx, takeoverClaim("child", 0)); err != nil || !ok {
		t.Fatalf("the child's claim: ok %v, %v", ok, err)
	}
	os.Stdout.WriteString("HELD\n")
	os.Stdin.Read(make([]byte, 1)) // until the parent kills us (or goes)
	os.Exit(0)                     // never release
}

// TestSchedule_LeaseTakenOverOnlyFromAnEndedProcess_V12: a lease is taken
// over only when its process is known to have ended on this machine: one
// taken by this process's pid at another start time (a process that wore
// the pid before) is; one of another boot, one of another pid namespace,
// one whose process is unknown (a file written before leases named it) and
// one of this very process are left to expire.
func TestSchedule_LeaseTakenOverOnlyFromAnEndedProcess_V12(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a lease's process is told only where /proc is")
	}
	db, err := Open(ctx, filepath.Join(t.TempDir(), "lease.db"), &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
		{"another pid namespace", with(1, "1"), false},
		{"unknown", "", false},
		{"this process", db.proc, false},
	} {
		key := "host-" + strings.ReplaceAll(c.name, " ", "-")
		at := toNS(takeoverT0)
		if _, err := db.w.ExecContext(ctx, `INSERT INTO schedule (host, last_start_ns) VALUES (?1, ?2)`, key, at); err != nil {
			t.Fatal(err)
		}
		if _, err := db.w.ExecContext(ctx, `INSERT INTO schedule_lease (host, owner, expires_ns, start_pending, proc) VALUES (?1, 'other', ?2, 1, ?3)`,
			key, at+int64(time.Hour), c.proc); err != nil {
			t.Fatal(err)
		}
		cl := takeoverClaim("me", time.Second)
		cl.Key = key
		wait, ok, err := db.Schedule().Acquire(ctx, cl)
		if err != nil || ok {
			t.Fatalf("%s: wait %v, ok %v, %v", c.name, wait, ok, err)
		}
		if took := wait == cl.Gap; took != c.ended {
			t.Errorf("%s: the claim waits %v; taken over: %v, want %v", c.name, wait, took, c.ended)
		}
	}
}

// startHoldingChild runs this test binary's test named run in a child
// process, with env set to path, and returns once the child has printed
// HELD. The child's stdin stays open until the test ends: a child waits on
// it, and is killed by the test that started it.
func startHoldingChild(t *testing.T, run, env, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+run+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	held := false
	for !held && sc.Scan() {
		held = sc.Text() == "HELD"
	}
	if !held {
		cmd.Wait()
		t.Fatalf("the child (%s) did not say HELD: %s", run, stderr.String())
	}
	return cmd
}
