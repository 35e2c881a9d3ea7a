package redis

import (
	"syscall"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestCluster_Failover: three workers crawl over a Redis Cluster whose
// cluster-node-timeout is 1 s; in the middle of the crawl one master is
// killed (SIGKILL), and its replica is promoted. The crawl completes; the
// auditor over the whole run finds no violation; every article of a
// well-behaved site is read once, or twice where a pass cut short by the
// switch is run again (the documented exception, as for a dead worker);
// and every pass that failed during the switch failed with a typed error
// (a Redis *Error, a lost lease, a request not sent): nothing is sent
// without a claim granted. The failures end once the replica is promoted,
// not a minute later when go-redis would reload the slots by itself.
func TestCluster_Failover(t *testing.T) {
	r := newClusterRun(t, politetest.Scenario{
		Hosts: 60, ArticlesPerHost: 5, RudeShare: 0.1, Seed: 28,
		Latency: [2]time.Duration{time.Millisecond, 10 * time.Millisecond},
	}, workerInterval, time.Second)
	for id := range 3 {
		r.start(id, 0)
	}
	r.waitRequests(len(r.cfg.Sites))
	masters := r.clu.masters(t)
	if len(masters) != 3 {
		t.Fatalf("%d masters, want 3", len(masters))
	}
	victim := masters[0]
	killed := time.Now()
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	// The replica's promotion: three live masters again, and every node
	// seeing every slot served.
	for deadline := time.Now().Add(30 * time.Second); len(r.clu.masters(t)) < 3; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d live masters 30 s after the kill: no replica promoted", len(r.clu.masters(t)))
		}
	}
	if err := r.clu.waitOK(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	promoted := time.Since(killed)
	r.wait(50*time.Second + time.Minute)
	r.audit(3, 2)
	r.mu.Lock()
	defer r.mu.Unlock()
	untyped, during := 0, 0
	var last time.Time
	bySec := map[int]int{}
	for _, e := range r.errs {
		if e.at.After(last) {
			last = e.at
		}
		bySec[int(e.at.Sub(killed).Seconds())]++
		if !e.typed {
			untyped++
			t.Errorf("worker %d: %s: an error of no type a caller can act on: %s", e.worker, e.source, e.msg)
		}
		if !e.at.Before(killed) && e.at.Before(killed.Add(promoted+10*time.Second)) {
			during++
		}
	}
	t.Logf("failed passes by second after the kill: %v; the last %v after", bySec, last.Sub(killed).Round(time.Millisecond))
	// go-redis reloads the slots once a minute by itself: a Store that did
	// not ask for it after a failure kept failing on the dead master's slots
	// for up to that minute (59 s here), not for the switch alone.
	if tail := last.Sub(killed) - promoted; tail > 20*time.Second {
		t.Errorf("passes kept failing %v after the replica's promotion: the client still routes to the dead master", tail)
	}
	t.Logf("master %s killed; cluster ok again %v later (replica promoted); %d passes failed (%d within 10 s of the switch), %d of no type",
		victim.Addr, promoted.Round(time.Millisecond), len(r.errs), during, untyped)
}
