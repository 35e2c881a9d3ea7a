package redis

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// crawlRun is one crawl of a politetest web by worker processes sharing one
// redis-server.
type crawlRun struct {
	t      testing.TB
	web    *politetest.Web
	info   *politetest.ScenarioInfo
	srv    *server  // one redis-server, or
	clu    *cluster // a cluster
	cfg    workerConfig
	mu     sync.Mutex
	procs  []*exec.Cmd
	waits  []chan error
	done   map[string]int         // source → worker that finished it
	errs   []passErr              // the passes that ended in an error
	claims map[string][]time.Time // host → when each granted claim's Acquire began
	traces map[string][]trace     // host → what the workers' Stores owed Redis for it, and when
	// excuse, when set, forgives a violation the test explains.
	excuse func(politetest.Violation) bool
}

const workerInterval = 100 * time.Millisecond

// trace is one event of a worker's Store for a host: a refusal it began
// to owe Redis (its write failed), wrote since, or a release that failed.
type trace struct {
	worker int
	at     time.Time
	what   string
}

// passErr is a pass a worker ran that ended in an error.
type passErr struct {
	worker int
	source string
	typed  bool // a Redis *Error, a lost lease, a request not sent
	msg    string
	at     time.Time
}

func newCrawlRun(t testing.TB, hosts int, aof bool) *crawlRun {
	t.Helper()
	return newCrawlRunOf(t, politetest.Scenario{
		Hosts: hosts, ArticlesPerHost: 3, RudeShare: 0.1, Seed: 18,
		Latency: [2]time.Duration{time.Millisecond, 10 * time.Millisecond},
	}, workerInterval, aof)
}

func newCrawlRunOf(t testing.TB, sc politetest.Scenario, interval time.Duration, aof bool) *crawlRun {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip(noServer)
	}
	var srv *server
	if aof {
		srv = startServerAOF(t, 0)
	} else {
		srv = startServer(t, 0)
	}
	r := newRun(t, sc, interval)
	r.srv, r.cfg.Redis = srv, srv.Addr
	return r
}

// newClusterRun is newCrawlRunOf on a cluster of the run's own.
func newClusterRun(t testing.TB, sc politetest.Scenario, interval, nodeTimeout time.Duration) *crawlRun {
	t.Helper()
	clu := startCluster(t, nodeTimeout)
	r := newRun(t, sc, interval)
	r.clu, r.cfg.Cluster = clu, clu.Addrs()
	return r
}

func newRun(t testing.TB, sc politetest.Scenario, interval time.Duration) *crawlRun {
	t.Helper()
	web, info := politetest.NewScenarioWeb(t, sc)
	r := &crawlRun{t: t, web: web, info: info, done: map[string]int{}, claims: map[string][]time.Time{},
		traces: map[string][]trace{}}
	r.cfg = workerConfig{
		Prefix: "crawl:", Web: web.Addr(),
		CA:       string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: web.CACert().Raw})),
		Sites:    info.Names(),
		Interval: interval, LeaseTTL: 2 * time.Second,
	}
	return r
}

// client is a new client of the run's Redis (a cluster's: a ClusterClient).
func (r *crawlRun) client() goredis.UniversalClient {
	if r.clu != nil {
		return goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: r.clu.Addrs(), ContextTimeoutEnabled: true})
	}
	return goredis.NewClient(&goredis.Options{Addr: r.srv.Addr, ContextTimeoutEnabled: true})
}

// start starts worker id, with its clock moved by skew.
func (r *crawlRun) start(id int, skew time.Duration) *exec.Cmd {
	r.t.Helper()
	cfg := r.cfg
	cfg.ID, cfg.Skew, cfg.Verbose = id, skew, testing.Verbose()
	b, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	ch := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var src, what string
			var n int64
			if _, err := fmt.Sscanf(sc.Text(), "done %s %d", &src, &n); err == nil {
				r.mu.Lock()
				r.done[src] = id
				r.mu.Unlock()
			} else if line, ok := strings.CutPrefix(sc.Text(), "passerr "); ok {
				var e passErr
				if _, err := fmt.Sscanf(line, "%s %t %q", &e.source, &e.typed, &e.msg); err == nil {
					e.worker, e.at = id, time.Now()
					r.mu.Lock()
					r.errs = append(r.errs, e)
					r.mu.Unlock()
				}
			} else if _, err := fmt.Sscanf(sc.Text(), "trace %s %d %s", &src, &n, &what); err == nil {
				r.mu.Lock()
				r.traces[src] = append(r.traces[src], trace{id, time.Unix(0, n), what})
				r.mu.Unlock()
			} else if _, err := fmt.Sscanf(sc.Text(), "claim %s %d", &src, &n); err == nil {
				r.mu.Lock()
				r.claims[src] = append(r.claims[src], time.Unix(0, n))
				r.mu.Unlock()
			}
		}
		ch <- cmd.Wait()
	}()
	r.t.Cleanup(func() {
		cmd.Process.Kill()
		<-ch
	})
	r.mu.Lock()
	r.procs = append(r.procs, cmd)
	r.waits = append(r.waits, ch)
	r.mu.Unlock()
	return cmd
}

// wait waits for every worker started (a killed one included) to exit, at
// most d.
func (r *crawlRun) wait(d time.Duration) {
	r.t.Helper()
	deadline := time.After(d)
	for i, ch := range r.waits {
		select {
		case err := <-ch:
			ch <- err
			if err != nil && !killed(err) {
				r.t.Errorf("worker %d: %v", i, err)
			}
		case <-deadline:
			r.t.Fatalf("workers still running after %v; finished %d of %d sources%s", d, r.finished(), len(r.cfg.Sites), r.unfinished())
		}
	}
}

func killed(err error) bool {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// unfinished says, one a line, what Redis holds of the first sources no
// worker has finished (their schedule and references), and how their last
// passes failed.
func (r *crawlRun) unfinished() string {
	c := r.client()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done, err := c.SMembers(ctx, r.cfg.Prefix+"test:done").Result()
	if err != nil {
		return "; redis: " + err.Error()
	}
	finished := map[string]bool{}
	for _, s := range done {
		finished[s] = true
	}
	st := (&Store{Client: c, Prefix: r.cfg.Prefix}).State()
	var b strings.Builder
	n := 0
	for _, src := range r.cfg.Sites {
		if finished[src] {
			continue
		}
		if n++; n > 3 {
			break
		}
		sc, err := st.Schedule(ctx, src)
		refs, rerr := st.Refs(ctx, src)
		fmt.Fprintf(&b, "\n  %s: schedule %+v (err %v), %d references (err %v):", src, sc, err, len(refs), rerr)
		for _, ref := range refs {
			fmt.Fprintf(&b, " %s=%v", ref.Key, ref.Outcome)
		}
		r.mu.Lock()
		errs := []passErr{}
		for _, e := range r.errs {
			if e.source == src {
				errs = append(errs, e)
			}
		}
		var traces []trace
		for _, e := range r.traces[src] {
			if !strings.HasPrefix(e.what, "get:") {
				traces = append(traces, e)
			}
		}
		requests := 0
		for _, q := range r.web.Requests() {
			if q.Host == src {
				requests++
			}
		}
		r.mu.Unlock()
		fmt.Fprintf(&b, "\n    %d requests reached the host", requests)
		for _, e := range traces[max(0, len(traces)-6):] {
			fmt.Fprintf(&b, "\n    %s worker %d %s", e.at.Format("15:04:05.000"), e.worker, e.what)
		}
		for _, e := range errs[max(0, len(errs)-3):] {
			fmt.Fprintf(&b, "\n    %s worker %d pass failed: %s", e.at.Format("15:04:05.000"), e.worker, e.msg)
		}
		fmt.Fprintf(&b, "\n    %d passes failed", len(errs))
		b.WriteString(hostKeys(ctx, c, r.cfg.Prefix, src))
	}
	return b.String()
}

// hostKeys says what Redis holds for host (every key whose hash tag names
// it: its schedule, leases, waiters, ledger record, robots.txt and its fetch
// lease), against Redis's clock, so that a host nobody was granted can be
// told apart from one a stale claim or waiter held.
func hostKeys(ctx context.Context, c goredis.UniversalClient, prefix, host string) string {
	var b strings.Builder
	if now, err := c.Time(ctx).Result(); err == nil {
		fmt.Fprintf(&b, "\n    Redis now %s (%d µs)", now.Format("15:04:05.000"), now.UnixMicro())
	}
	scan := func(ctx context.Context, n *goredis.Client) error {
		iter := n.Scan(ctx, 0, prefix+"*{"+host+"*", 100).Iterator()
		for iter.Next(ctx) {
			k := iter.Val()
			typ, _ := n.Type(ctx, k).Result()
			ttl, _ := n.PTTL(ctx, k).Result()
			var v any
			switch typ {
			case "hash":
				v, _ = n.HGetAll(ctx, k).Result()
			case "zset":
				v, _ = n.ZRangeWithScores(ctx, k, 0, -1).Result()
			case "set":
				v, _ = n.SMembers(ctx, k).Result()
			case "string":
				s, _ := n.Get(ctx, k).Result()
				v = s[:min(len(s), 120)]
			default:
				v = typ
			}
			fmt.Fprintf(&b, "\n    %s (ttl %v): %v", strings.TrimPrefix(k, prefix), ttl, v)
		}
		return iter.Err()
	}
	var err error
	switch c := c.(type) {
	case *goredis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *goredis.Client:
		err = scan(ctx, c)
	}
	if err != nil {
		fmt.Fprintf(&b, "\n    keys not read: %v", err)
	}
	return b.String()
}

func (r *crawlRun) finished() int {
	c := r.client()
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, _ := c.SCard(ctx, r.cfg.Prefix+"test:done").Result()
	return int(n)
}

// audit checks the crawl: zero violations with one request in flight per
// host across every worker (a worker keeps its own connection to a host, so
// as many connections as workers), and every article of a well-behaved site
// requested exactly once (at most twice with a worker killed: an article it
// was reading when it died is read again by another, an interval later at
// least, which the audit checks; at most twice too on a source a pass of
// which failed, whose Settle may not have answered).
//
// With unreached set, an article never requested is allowed on a host
// whose robots.txt record in Redis says no response arrived (see
// TestWorkers_P1_OneKilled), and counted.
func (r *crawlRun) audit(workers, maxReads int, unreached ...bool) *politetest.Report {
	r.t.Helper()
	p, err := workerPolicy(r.cfg.Interval)
	if err != nil {
		r.t.Fatal(err)
	}
	ap := politetest.Policy{
		Interval: p.Interval, MaxInFlight: 1, MaxConnsPerHost: workers,
		StrictRobots: p.Robots.Status != 0,
		UserAgent:    regexp.MustCompile("^" + regexp.QuoteMeta(p.UserAgent()) + "$"),
		RobotsAgent:  p.Name, Slack: politetest.Slack(p.Interval / 2), HTTPSOnly: true,
		AllowedHeaders: []string{"User-Agent", "Accept", "Accept-Encoding", "If-None-Match", "If-Modified-Since"},
	}
	rep := r.web.Audit(ap)
	var left []politetest.Violation
	for _, v := range rep.Violations {
		if v.Rule == politetest.RuleCooldown {
			r.explain(v)
		}
		if r.excuse != nil && r.excuse(v) {
			r.t.Logf("excused: %v", v)
			continue
		}
		left = append(left, v)
	}
	if len(left) > 0 {
		r.t.Errorf("auditor: %v", rep)
	}
	if got := r.finished(); got != len(r.cfg.Sites) {
		r.t.Errorf("%d of %d sources finished", got, len(r.cfg.Sites))
	}
	reads := map[string]int{}
	kinds := map[string]int{}
	for _, q := range r.web.Requests() {
		reads[q.Host+q.Path]++
		switch {
		case q.Path == "/robots.txt":
			kinds["robots.txt"]++
		case strings.HasPrefix(q.Path, "/feed"):
			kinds["feed"]++
		default:
			kinds["other"]++
		}
	}
	bad, skipped, retried := 0, map[string]bool{}, 0
	failed := map[string]bool{} // sources a pass of which ended in an error
	r.mu.Lock()
	for _, e := range r.errs {
		failed[e.source] = true
	}
	r.mu.Unlock()
	rc := r.client()
	defer rc.Close()
	rs := (&Store{Client: rc, Prefix: r.cfg.Prefix, RobotsFetchLease: time.Millisecond}).Robots()
	for _, s := range r.info.Sites {
		if s.Rude {
			continue
		}
		if len(unreached) > 0 && reads[s.Name+"/feed.xml"] == 0 {
			rec, ok, err := rs.Get(context.Background(), s.Name)
			if err == nil && ok && rec.Outcome == robots.DisallowAll && rec.Status == 0 {
				skipped[s.Name] = true
				continue
			}
		}
		most := maxReads
		if failed[s.Name] {
			retried++
		}
		if failed[s.Name] && most < 2 {
			// A pass of the source failed (a Redis call that timed out, a
			// lease that ran out before its renewal, both on a loaded
			// machine): an article it read may not be recorded as
			// deposited (Settle did not answer), or another worker's pass
			// may have begun while its last request was in flight, and
			// the article is read again (V12: retried on the next pass).
			// Once more at most; never no read.
			most = 2
		}
		for _, a := range s.Articles {
			if n := reads[s.Name+a.Path]; n < 1 || n > most {
				if bad++; bad <= 5 {
					r.t.Errorf("%s%s requested %d times, want 1 to %d%s", s.Name, a.Path, n, most, r.tracesOf(s.Name, a.Path))
				}
			}
		}
	}
	if bad > 5 {
		r.t.Errorf("and %d more articles", bad-5)
	}
	by := map[int]int{}
	r.mu.Lock()
	for _, w := range r.done {
		by[w]++
	}
	r.mu.Unlock()
	r.t.Logf("%d requests to %d hosts (%v), 0 violations; sources finished per worker: %v; %d well-behaved sources with a failed pass (an article read twice allowed)",
		rep.Requests, rep.Hosts, kinds, by, retried)
	if len(skipped) > 0 {
		r.t.Logf("%d well-behaved hosts not read: robots.txt recorded as unreachable (the chain's own wait for the slot a dead worker held timed out)", len(skipped))
	}
	return rep
}

// TestWorkers_P1_ThreeProcessesOneBudget: three worker processes, each with
// its own fetch client and crawler over one redis-server, crawl one web of
// publishers (a tenth rude): the auditor finds no violation across all of
// them, and every article is read once (twice at most on a source a pass
// of which failed: see audit).
func TestWorkers_P1_ThreeProcessesOneBudget(t *testing.T) {
	r := newCrawlRun(t, workerHosts(), false)
	for id := range 3 {
		r.start(id, 0)
	}
	r.wait(50 * time.Second)
	r.audit(3, 1)
}

// TestWorkers_P1_OneKilled: one of three workers is killed (SIGKILL) in
// the middle of the crawl; its leases expire (nobody else releases them),
// the other two finish its sources, and the auditor still finds no
// violation but for refusals the dead worker alone had seen (below). A host whose robots.txt the dead worker was fetching stays
// blocked until that request's lease expires (the robots fetch's 30 s
// bound and 2 s more); a request of another worker that times out waiting
// for it sends nothing and records nothing (robots.ErrNotSent), so the
// worker tries its source's pass again until robots.txt is read, once the
// lease has expired.
func TestWorkers_P1_OneKilled(t *testing.T) {
	r := newCrawlRun(t, workerHosts(), false)
	var victim *exec.Cmd
	for id := range 3 {
		if c := r.start(id, 0); id == 0 {
			victim = c
		}
	}
	r.waitRequests(len(r.cfg.Sites))
	killed := time.Now()
	if err := victim.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.wait(50*time.Second + time.Minute) // the passes that sent nothing, tried again after the lease
	// A refusal the victim received and died before recording is known to
	// nobody: a store cannot keep what never reached it. The auditor still
	// counts the next request to that host, an expired lease later, as a
	// breach of the cool-down; such a breach is excused when the refusal
	// was the last answer on a connection that closed as the victim died.
	conns := map[int]politetest.Conn{}
	for _, c := range r.web.Connections() {
		conns[c.ID] = c
	}
	last := map[int]int{} // connection → its last request's Seq
	for _, q := range r.web.Requests() {
		last[q.Conn] = max(last[q.Conn], q.Seq)
	}
	r.excuse = func(v politetest.Violation) bool {
		if v.Rule != politetest.RuleCooldown || v.Other == nil {
			return false
		}
		c := conns[v.Other.Conn]
		return last[c.ID] == v.Other.Seq && !c.Closed.Before(killed) && c.Closed.Before(killed.Add(500*time.Millisecond))
	}
	r.audit(3, 2, true)
}

// TestWorkers_ClockSkew: one worker's clock runs an hour ahead of the
// others' (and of Redis's): pacing, leases and cool-downs are on Redis's
// clock, so nothing changes.
func TestWorkers_ClockSkew(t *testing.T) {
	r := newCrawlRun(t, workerHosts(), false)
	r.start(0, time.Hour)
	r.start(1, 0)
	r.start(2, -time.Minute)
	r.wait(50 * time.Second)
	r.audit(3, 1)
}

// TestWorkers_RedisDown: redis-server is stopped in the middle of the crawl
// and started again a second and a half later (from its append-only file):
// no request reaches the web while it is down, and the crawl resumes and
// finishes with no violation. A refusal received around the outage is
// honoured by every worker: the workers' ledger cools the host down (see
// workerPolicy), its write, when Redis was away, is made before the refused
// request's slot is freed (TestSchedule_ReleaseWaitsForOwedRefusal), and
// the worker never makes a pass whose trigger the publisher refused due
// again at once.
func TestWorkers_RedisDown(t *testing.T) {
	hosts := workerHosts()
	if raceEnabled {
		// Three worker processes under the race detector, 200 hosts each,
		// on 2 busy cores: requests take seconds, and the test times out
		// its own harness (pass leases, Redis calls) rather than the code.
		hosts = min(hosts, 60)
	}
	r := newCrawlRun(t, hosts, true)
	// Pass leases that outlive the outage: a pass whose renewal fails stops
	// at once, and one whose lease expires while it still reads (a request
	// taking seconds on a loaded machine) is run by another worker at the
	// same time, which reads a trigger the first left unrecorded as read.
	r.cfg.LeaseTTL = 6 * time.Second
	for id := range 3 {
		r.start(id, 0)
	}
	r.waitRequests(len(r.cfg.Sites))
	r.srv.Stop() // SIGKILL, and waits for the process's end: nothing is granted after this
	down := time.Now()
	<-time.After(1500 * time.Millisecond) // the outage, in real time: the workers run in real time
	up := time.Now()
	r.srv = startServerAOF(t, r.srv.Port, r.srv.dir)
	r.wait(50*time.Second + time.Minute) // as in the kill test: a pass that sent nothing is tried again after its leases expire
	// A request may reach the web after the stop only on a claim granted
	// before it (and still being set up: a TLS handshake on a busy
	// machine): per host, no more requests arrive during the outage than
	// claims were granted before it and not used by a request arrived
	// before it.
	before, during := map[string]int{}, map[string]int{}
	for _, q := range r.web.Requests() {
		switch {
		case q.Arrived.Before(down):
			before[q.Host]++
		case q.Arrived.Before(up):
			during[q.Host]++
		}
	}
	r.mu.Lock()
	n := 0
	for host, k := range during {
		granted := 0
		for _, at := range r.claims[host] {
			if at.Before(down) {
				granted++
			}
		}
		if k > granted-before[host] {
			t.Errorf("%s: %d requests arrived while Redis was down, with %d claims granted before and %d of them used", host, k, granted, before[host])
		}
		n += k
	}
	r.mu.Unlock()
	t.Logf("Redis down for %v: %d requests arrived meanwhile, each on a claim granted before the stop", up.Sub(down), n)
	r.audit(3, 2)
}

// explain logs what the workers' Stores did for a cool-down breach's host
// between the refused answer and the breach: the refusals they began to owe
// Redis and wrote, the releases that failed, and the claims granted.
func (r *crawlRun) explain(v politetest.Violation) {
	r.t.Helper()
	if v.Other == nil {
		return
	}
	from, to := v.Other.Arrived.Add(-time.Second), v.Request.Arrived.Add(time.Second)
	type line struct {
		at   time.Time
		text string
	}
	var lines []line
	r.mu.Lock()
	for key, ts := range r.traces {
		if !strings.Contains(key, v.Host) {
			continue
		}
		for _, e := range ts {
			if !e.at.Before(from) && e.at.Before(to) {
				lines = append(lines, line{e.at, fmt.Sprintf("worker %d %s %s", e.worker, e.what, key)})
			}
		}
	}
	for _, at := range r.claims[v.Host] {
		if !at.Before(from) && at.Before(to) {
			lines = append(lines, line{at, "claim granted (its Acquire began then)"})
		}
	}
	r.mu.Unlock()
	sort.Slice(lines, func(i, j int) bool { return lines[i].at.Before(lines[j].at) })
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "\n  %+.3fs %s", l.at.Sub(v.Other.Finished).Seconds(), l.text)
	}
	r.t.Logf("cool-down breach at %s: %s (%d %s) answered at 0, %s asked at %+.3fs; %s%s", v.Host, v.Other.Path, v.Other.Status,
		v.Other.ResponseHeader.Get("Retry-After"), v.Request.Path, v.Request.Arrived.Sub(v.Other.Finished).Seconds(), v.Detail, b.String())
}

// tracesOf returns, one a line, what the workers traced for host (the
// events naming path, or none of the host's URLs).
func (r *crawlRun) tracesOf(host, path string) string {
	var b strings.Builder
	// The source's references in Redis that name the path.
	rc := r.client()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	refs, err := rc.HGetAll(ctx, r.cfg.Prefix+"refs:{"+host+"}").Result()
	cancel()
	defer rc.Close()
	for k, v := range refs {
		if strings.Contains(k+v, path) {
			fmt.Fprintf(&b, "\n  ref %s: %s", k, v)
		}
	}
	if err != nil {
		fmt.Fprintf(&b, "\n  refs: %v", err)
	}
	// The host's robots.txt record: a fetch that got no answer in time
	// disallows the host until it is asked again.
	rs := (&Store{Client: rc, Prefix: r.cfg.Prefix, RobotsFetchLease: time.Millisecond}).Robots()
	if rec, ok, err := rs.Get(context.Background(), host); err != nil || ok {
		fmt.Fprintf(&b, "\n  robots.txt record: %v %d %q (err %v)", rec.Outcome, rec.Status, rec.Failure, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.web.Requests() {
		if q.Host == host && (strings.HasPrefix(q.Path, "/feed") || q.Path == "/robots.txt") {
			fmt.Fprintf(&b, "\n  %s %s answered %d (If-None-Match %q)", q.Arrived.Format("15:04:05.000"), q.Path, q.Status, q.Header.Get("If-None-Match"))
		}
	}
	for _, e := range r.errs {
		if e.source == host {
			fmt.Fprintf(&b, "\n  %s worker %d pass failed: %s", e.at.Format("15:04:05.000"), e.worker, e.msg)
		}
	}
	if w, ok := r.done[host]; ok {
		fmt.Fprintf(&b, "\n  finished by worker %d", w)
	}
	for _, e := range r.traces[host] {
		if strings.HasPrefix(e.what, "get:") {
			continue
		}
		if strings.Contains(e.what, path) || strings.Contains(e.what, "/feed") || !strings.Contains(e.what, "https://") {
			fmt.Fprintf(&b, "\n  %s worker %d %s", e.at.Format("15:04:05.000"), e.worker, e.what)
		}
	}
	return b.String()
}

// waitRequests waits until the web has served n requests.
func (r *crawlRun) waitRequests(n int) {
	r.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); len(r.web.Requests()) < n; {
		if time.Now().After(deadline) {
			r.t.Fatalf("only %d requests in 30 s", len(r.web.Requests()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func workerHosts() int {
	if testing.Short() {
		return 30
	}
	return 200
}

// BenchmarkWorkersCrawl: three worker processes on one redis-server crawl
// 500 hosts of 20 articles each, every answer 20 to 200 ms late, under a
// 1 s interval per host: robots.txt, the feed, then the 20 articles. The
// politeness bound is 21 intervals per host plus the last answer's
// latency, about 21.2 s; it reports the crawl's span (first request's
// arrival to last answer) against it, and the auditor's violations. Run it
// once: -benchtime=1x.
func BenchmarkWorkersCrawl(b *testing.B) {
	for b.Loop() {
		r := newCrawlRunOf(b, politetest.Scenario{Hosts: 500, ArticlesPerHost: 20, Seed: 18,
			Latency: [2]time.Duration{20 * time.Millisecond, 200 * time.Millisecond}}, time.Second, false)
		r.crawlSpan(b)
	}
}

// crawlSpan runs three workers to the end and reports the span of the crawl
// and where its excess over the politeness bound is.
func (r *crawlRun) crawlSpan(b *testing.B) {
	before := r.redisUse(b)
	for id := range 3 {
		r.start(id, 0)
	}
	r.wait(5 * time.Minute)
	after := r.redisUse(b)
	rep := r.audit(3, 1)
	reqs := r.web.Requests()
	first, last := reqs[0].Arrived, reqs[0].Finished
	for _, q := range reqs {
		if q.Arrived.Before(first) {
			first = q.Arrived
		}
		if q.Finished.After(last) {
			last = q.Finished
		}
	}
	span := last.Sub(first)
	// Where the excess is: hosts started late (the last host's first
	// request after the first host's), or each host's own span (its
	// first request to its last answer) beyond the bound.
	type hostSpan struct{ first, last time.Time }
	hosts := map[string]*hostSpan{}
	for _, q := range reqs {
		h := hosts[q.Host]
		if h == nil {
			h = &hostSpan{q.Arrived, q.Finished}
			hosts[q.Host] = h
		}
		if q.Arrived.Before(h.first) {
			h.first = q.Arrived
		}
		if q.Finished.After(h.last) {
			h.last = q.Finished
		}
	}
	var lateStart, hostMax, hostSum time.Duration
	for _, h := range hosts {
		lateStart = max(lateStart, h.first.Sub(first))
		d := h.last.Sub(h.first)
		hostMax, hostSum = max(hostMax, d), hostSum+d
	}
	b.ReportMetric(lateStart.Seconds(), "late-start-s")
	b.ReportMetric(hostMax.Seconds(), "host-span-max-s")
	b.ReportMetric(hostSum.Seconds()/float64(len(hosts)), "host-span-mean-s")
	b.ReportMetric(span.Seconds(), "s-span")
	b.ReportMetric(span.Seconds()/21.2, "x-bound")
	b.ReportMetric(float64(len(rep.Violations)), "violations")
	b.ReportMetric(float64(rep.Requests), "requests")
	// What it cost: the workers' CPU, Redis's CPU (every node, replicas
	// included) per request, and the memory the crawl left in the masters
	// per host.
	var workerCPU time.Duration
	r.mu.Lock()
	for _, p := range r.procs {
		if ps := p.ProcessState; ps != nil {
			workerCPU += ps.UserTime() + ps.SystemTime()
		}
	}
	r.mu.Unlock()
	b.ReportMetric(workerCPU.Seconds(), "worker-cpu-s")
	b.ReportMetric((after.cpu-before.cpu)*1e6/float64(rep.Requests), "redis-cpu-µs/req")
	b.ReportMetric((after.masterCPU-before.masterCPU)*1e6/float64(rep.Requests), "master-cpu-µs/req")
	b.ReportMetric(float64(after.mem-before.mem)/float64(len(r.cfg.Sites)), "B/host")
	// The same figures in the log, which a run whose audit failed (an
	// article read twice) still prints.
	b.Logf("span %.2f s (%.3f× the bound), late start %.2f s, host span mean %.2f s max %.2f s; %d requests, %d violations; workers' CPU %.1f s; Redis CPU %.0f µs per request (masters %.0f µs); %.0f B per host in the masters",
		span.Seconds(), span.Seconds()/21.2, lateStart.Seconds(), hostSum.Seconds()/float64(len(hosts)), hostMax.Seconds(),
		rep.Requests, len(rep.Violations), workerCPU.Seconds(), (after.cpu-before.cpu)*1e6/float64(rep.Requests),
		(after.masterCPU-before.masterCPU)*1e6/float64(rep.Requests), float64(after.mem-before.mem)/float64(len(r.cfg.Sites)))
}

// redisUse is what the run's Redis nodes have used so far.
type redisUse struct {
	cpu, masterCPU float64 // seconds of CPU, user and system: every node's, the masters'
	mem            int64   // bytes in use in the masters (used_memory)
}

// redisUse reads INFO of every live node of the run's Redis.
func (r *crawlRun) redisUse(t testing.TB) redisUse {
	t.Helper()
	var addrs []string
	if r.clu != nil {
		addrs = r.clu.Addrs()
	} else {
		addrs = []string{r.srv.Addr}
	}
	var u redisUse
	for _, addr := range addrs {
		rc := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		info, err := rc.Info(ctx, "cpu", "memory", "replication").Result()
		cancel()
		rc.Close()
		if err != nil {
			continue
		}
		field := func(name string) string {
			_, rest, _ := strings.Cut(info, "\n"+name+":")
			return firstLine(rest)
		}
		user, _ := strconv.ParseFloat(field("used_cpu_user"), 64)
		sys, _ := strconv.ParseFloat(field("used_cpu_sys"), 64)
		u.cpu += user + sys
		if field("role") == "master" {
			u.masterCPU += user + sys
			mem, _ := strconv.ParseInt(field("used_memory"), 10, 64)
			u.mem += mem
		}
	}
	return u
}
