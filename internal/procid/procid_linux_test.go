package procid

import (
	"io"
	"os"
	"os/exec"
	"runtime"
	"testing"
)

const childEnv = "POLITEFETCH_PROCID_CHILD"

// TestChildProcess is the process the tests start: it lives until its
// stdin is closed. It does nothing in a plain test run.
func TestChildProcess(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("started by the other tests")
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// child starts a process of this machine that lives until killed.
func child(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

func requireLinux(t *testing.T) Process {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("processes are told apart through Linux's /proc")
	}
	self := Self()
	if !self.Known() {
		t.Skipf("/proc does not tell this process's identity here: %+v", self)
	}
	return self
}

// TestEnded_KilledProcessOnly: a live process is not ended; once killed it
// is, whether reaped or still a zombie; this process never is.
func TestEnded_KilledProcessOnly(t *testing.T) {
	self := requireLinux(t)
	if Ended(self, self) {
		t.Fatal("this process judged ended")
	}
	for _, reap := range []bool{true, false} {
		cmd := child(t)
		p, err := Of(cmd.Process.Pid)
		if err != nil || !p.Known() {
			t.Fatalf("Of(%d) = %+v, %v", cmd.Process.Pid, p, err)
		}
		if Ended(self, p) {
			t.Fatalf("live child %+v judged ended", p)
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		if reap {
			_ = cmd.Wait()
		} else {
			// Killed, not yet reaped: a zombie (or, once the kernel has
			// got round to it, a dead process) with the same start.
			waitNotRunning(t, cmd.Process.Pid)
		}
		if !Ended(self, p) {
			t.Errorf("killed child (reaped %v) %+v not judged ended", reap, p)
		}
	}
}

// waitNotRunning polls the child's state until SIGKILL has taken effect.
func waitNotRunning(t *testing.T, pid int) {
	t.Helper()
	for range 10000 {
		if _, state, err := stat(pid); err != nil || state == 'Z' || state == 'X' {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("pid %d still running after SIGKILL", pid)
}

// TestEnded_OnlyWhatIsCertain: an identity of another boot or namespace,
// or one with a field unknown, is never judged ended, however dead its pid;
// this process's pid with another start time (an earlier process that wore
// it) is.
func TestEnded_OnlyWhatIsCertain(t *testing.T) {
	self := requireLinux(t)
	cmd := child(t)
	dead, err := Of(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !Ended(self, dead) {
		t.Fatalf("killed child %+v not judged ended", dead)
	}
	for name, edit := range map[string]func(*Process){
		"another boot":      func(p *Process) { p.Boot = "another" },
		"another namespace": func(p *Process) { p.PIDNS = "1" },
		"no start":          func(p *Process) { p.Start = "" },
		"no boot":           func(p *Process) { p.Boot = "" },
		"no pid":            func(p *Process) { p.PID = 0 },
	} {
		p := dead
		edit(&p)
		if Ended(self, p) {
			t.Errorf("%s: %+v judged ended", name, p)
		}
		if Ended(Process{PID: self.PID}, dead) {
			t.Errorf("judged ended by an identity that does not know itself")
		}
	}
	earlier := self
	earlier.Start += "0"
	if !Ended(self, earlier) {
		t.Error("an earlier process that wore this pid not judged ended")
	}
}
