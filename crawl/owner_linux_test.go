package crawl

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/politefetch/politefetch/internal/procid"
	"github.com/politefetch/politefetch/politetest"
)

const ownerChildEnv = "POLITEFETCH_CRAWL_OWNER_CHILD"

// TestOwnerChildProcess is the process the owner tests start: it lives
// until its stdin is closed. It does nothing in a plain test run.
func TestOwnerChildProcess(t *testing.T) {
	if os.Getenv(ownerChildEnv) == "" {
		t.Skip("started by the owner tests")
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// startChild starts a process of this machine and returns it with the
// identity a Crawler in it would have written; stop ends it and waits.
func startChild(t *testing.T) (id ownerID, stop func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOwnerChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), ownerChildEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Kill()
			in.Close()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	p, err := procid.Of(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	self := newOwner()
	return ownerID{host: self.host, proc: p, id: "0123456789ab"}, stop
}

func requireProc(t *testing.T) ownerID {
	t.Helper()
	self := newOwner()
	if !self.proc.Known() {
		t.Skip("this system's /proc does not tell a process's start, the boot id or the pid namespace")
	}
	return self
}

// An owner's identity reads back as written, and a string of the user's
// own is no identity.
func TestOwnerID_RoundTrip(t *testing.T) {
	t.Parallel()
	self := requireProc(t)
	got, ok := parseOwner(self.String())
	if !ok || got != self {
		t.Fatalf("parseOwner(%q) = %+v, %v; want %+v", self.String(), got, ok, self)
	}
	for _, s := range []string{"", "a", "worker-1", "host pid=0", "host pid=x", "host pid=12 colour=red", "host pid=12 start="} {
		if _, ok := parseOwner(s); ok {
			t.Errorf("parseOwner(%q) ok, want not an identity", s)
		}
	}
}

// ownerGone is true only of a process of this machine that has certainly
// ended: killed (its pid free), or its pid worn by another process; never of
// a live one, this one, another host's or boot's, or a name of the user's
// (V7).
func TestOwnerGone_V7_OnlyAProcessCertainlyEnded(t *testing.T) {
	t.Parallel()
	self := requireProc(t)
	child, stop := startChild(t)
	if ownerGone(self, child.String()) {
		t.Fatal("a live process's lease owner is gone")
	}
	if ownerGone(self, self.String()) {
		t.Fatal("this process's own identity is gone")
	}
	other := self
	other.id = "another-crawler"
	if ownerGone(self, other.String()) {
		t.Fatal("another Crawler of this live process is gone")
	}
	reused := self
	reused.proc.Start = self.proc.Start + "0" // this pid, but a process started at another time
	if !ownerGone(self, reused.String()) {
		t.Fatal("an earlier process of this pid is not gone")
	}
	stop() // killed and reaped
	if !ownerGone(self, child.String()) {
		t.Fatal("a killed process's lease owner is not gone")
	}
	with := func(host string, f func(p *procid.Process)) ownerID {
		o := ownerID{host: host, proc: child.proc}
		f(&o.proc)
		return o
	}
	for name, o := range map[string]ownerID{
		"another host":          with(self.host+"-b", func(*procid.Process) {}),
		"another boot":          with(child.host, func(p *procid.Process) { p.Boot = "b" + p.Boot }),
		"another pid namespace": with(child.host, func(p *procid.Process) { p.PIDNS += "1" }),
		"no start":              with(child.host, func(p *procid.Process) { p.Start = "" }),
		"no boot":               with(child.host, func(p *procid.Process) { p.Boot = "" }),
	} {
		if ownerGone(self, o.String()) {
			t.Errorf("%s: the dead process's lease is taken for gone, though that cannot be told for certain", name)
		}
	}
	if ownerGone(self, "worker-1") {
		t.Fatal("an Owner of the user's own is gone")
	}
}

// A restart on the same machine takes over at once the lease of a crawler
// whose process was killed, and reads; the lease of a live process's
// crawler holds, and nothing is sent (V7).
func TestCrawler_V7_DeadOwnersLeaseTakenOverAtOnce(t *testing.T) {
	t.Parallel()
	requireProc(t)
	web := politetest.NewWeb(t)
	s := web.Site("restart.example")
	s.AddArticle(politetest.Article{})
	st := new(MemoryState)
	live, _ := startChild(t)
	dead, kill := startChild(t)
	kill()
	var ev events
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), State: st, OnEvent: ev.on,
		Sources: []Source{siteSource(s.Name(), StrictNews, false)}}

	// A live owner's lease: held, nothing sent.
	if _, err := st.AcquireLease(context.Background(), s.Name(), live.String(), time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err := c.Pass(context.Background(), s.Name())
	var le *LeaseError
	if !errors.As(err, &le) || !errors.Is(err, ErrLeaseHeld) || le.Held.Owner != live.String() {
		t.Fatalf("pass under a live process's lease: %v, want ErrLeaseHeld by it", err)
	}
	if n := len(web.Requests()); n != 0 {
		t.Fatalf("%d requests sent under a live owner's lease", n)
	}

	// A dead owner's lease, an hour from expiring: taken over at once.
	if err := st.ReleaseLease(context.Background(), s.Name(), live.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AcquireLease(context.Background(), s.Name(), dead.String(), time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	rep, err := c.Pass(context.Background(), s.Name())
	if err != nil || rep.Deposited != 1 {
		t.Fatalf("pass after the dead owner: %+v, %v; want its lease taken over and the article deposited", rep, err)
	}
	if got := ev.of(EventLeaseTakenOver); len(got) != 1 || got[0].Source != s.Name() {
		t.Fatalf("lease-taken-over events %+v, want one", got)
	}
}
