package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"github.com/politefetch/politefetch/robots"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/store/redis"
)

// redisServer is a redis-server on a free loopback port, started by a test
// and stopped at its end, keeping nothing on disk.
type redisServer struct {
	t    *testing.T
	bin  string
	port int
	addr string
	cmd  *exec.Cmd
}

// startRedis starts redis-server, or skips t when it is not on PATH.
func startRedis(t *testing.T) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not on PATH: install it (Debian: apt-get install redis-server) to run the several-workers tests")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &redisServer{t: t, bin: bin, port: port, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	s.start()
	t.Cleanup(s.stop)
	return s
}

// start starts the server on its port and waits until it answers.
func (s *redisServer) start() {
	t := s.t
	t.Helper()
	s.cmd = exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--protected-mode", "no", "--loglevel", "warning")
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(&goredis.Options{Addr: s.addr, MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s does not answer: %v", s.addr, err)
		}
		time.Sleep(20 * time.Millisecond) // waiting for another process to listen, not timing logic
	}
}

// stop kills the server and waits for it to end; a stopped server is left
// alone.
func (s *redisServer) stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// redisConfig writes a strict news config of full-text sources, one per
// host news-1 … news-N.example reading its RSS feed, and with atom a second
// per host reading its Atom feed (the same articles) as news-N-atom, its
// state in the Redis the store block redis names; it returns its path.
func redisConfig(t *testing.T, hosts int, atom bool, redis string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`crawler: {name: WorkersBot, version: "1", info_url: "https://bot.example/about"}
policy: {preset: strict-news}
store:
  redis:
` + redis + `
sources:
`)
	for i := 1; i <= hosts; i++ {
		fmt.Fprintf(&b, `  - {id: news-%d, name: News %d, trigger: {feeds: ["https://news-%d.example/feed.xml"]}, admitted: [news-%d.example], full_text: true, active: true}
`, i, i, i, i)
		if atom {
			fmt.Fprintf(&b, `  - {id: news-%d-atom, name: News %d, trigger: {feeds: ["https://news-%d.example/atom.xml"]}, admitted: [news-%d.example], full_text: true, active: true}
`, i, i, i, i)
		}
	}
	path := filepath.Join(t.TempDir(), "sources.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// logBuffer is a worker's output, read by the test while the process
// writes it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// worker is one `politecrawl crawl` process of a test.
type worker struct {
	n    int
	cmd  *exec.Cmd
	out  logBuffer
	code int // set before done is closed
	done chan struct{}
}

func startWorker(t *testing.T, n int, args ...string) *worker {
	t.Helper()
	w := &worker{n: n, done: make(chan struct{})}
	w.cmd = exec.Command(binary, args...)
	w.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.out
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.done)
		err := w.cmd.Wait()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			w.code = ee.ExitCode()
		case err != nil:
			w.code = -1
		}
	}()
	t.Cleanup(func() { w.cmd.Process.Kill(); <-w.done })
	return w
}

// P1, V7: three `crawl -once` workers on one config whose state is in one
// Redis crawl one simulated web of six hosts, each host announced by two
// sources (its RSS and its Atom feed). The first worker starts while the
// Atom sources' pass leases are held (by the test, through the same
// store), so it takes the RSS sources only; the second starts once it is
// under way and half the Atom sources are free, the third once the second
// is under way and the rest are free. So two processes read every host at
// once, and the auditor finds no
// violation over the three (one budget per host: interval, one request in
// flight, robots.txt first), robots.txt is fetched once per host, every
// article is asked once per source and deposited once per source across
// the workers' files, and a worker that found a pass held elsewhere sends
// nothing for it and says so. Two workers share the SQLite file beside the
// config (workers on one machine); the third keeps its own (as a worker
// on another machine would), and report reads both files as one.
func TestCrawl_P1_ThreeWorkersOneRedis(t *testing.T) {
	t.Parallel()
	srv := startRedis(t)
	const hosts, articles = 6, 3
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: hosts, ArticlesPerHost: articles, Seed: 1})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: web.CACert().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := []string{"-connect-to", web.Addr(), "-ca", ca, "-admit-private", "127.0.0.0/8"}
	const prefix = "workers-test:"
	cfg := redisConfig(t, hosts, true, "    addr: "+srv.addr+"\n    prefix: \""+prefix+"\"\n    timeout: 2s")
	shared := filepath.Join(filepath.Dir(cfg), "sources.db") // the default, beside the config
	own := filepath.Join(t.TempDir(), "worker-3.db")

	// The Atom sources' leases, held while the first worker starts.
	ctx := context.Background()
	rc := goredis.NewClient(&goredis.Options{Addr: srv.addr, ContextTimeoutEnabled: true})
	defer rc.Close()
	state := (&redis.Store{Client: rc, Prefix: prefix}).State()
	for i := 1; i <= hosts; i++ {
		if _, err := state.AcquireLease(ctx, fmt.Sprintf("news-%d-atom", i), "test-holder", time.Now(), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{"crawl", "-config", cfg, "-once"}, flags...)
	waitFor := func(path string, n int, w *worker) {
		t.Helper()
		for deadline := time.Now().Add(90 * time.Second); countPathAll(web, path) < n; {
			if time.Now().After(deadline) {
				t.Fatalf("worker %d read %d of %d %s:\n%s", w.n, countPathAll(web, path), n, path, w.out.String())
			}
			time.Sleep(10 * time.Millisecond) // waiting for another process, not timing logic
		}
	}
	release := func(from, to int) {
		t.Helper()
		for i := from; i <= to; i++ {
			if err := state.ReleaseLease(ctx, fmt.Sprintf("news-%d-atom", i), "test-holder"); err != nil {
				t.Fatal(err)
			}
		}
	}
	w1 := startWorker(t, 1, args...)
	waitFor("/feed.xml", hosts, w1) // its passes are under way
	release(1, hosts/2)
	w2 := startWorker(t, 2, args...)
	waitFor("/atom.xml", hosts/2, w2)
	release(hosts/2+1, hosts)
	w3 := startWorker(t, 3, append(args, "-store", own)...)
	workers := []*worker{w1, w2, w3}
	var logs strings.Builder
	for _, w := range workers {
		<-w.done
		fmt.Fprintf(&logs, "worker %d, exit %d:\n%s\n", w.n, w.code, w.out.String())
	}
	defer func() { t.Logf("%d requests\n%s", len(web.Requests()), logs.String()) }()
	deposited := 0
	for _, w := range workers {
		out := w.out.String()
		if !strings.Contains(out, "store=\"redis "+srv.addr) {
			t.Errorf("worker %d does not say its state is in redis", w.n)
		}
		switch w.code {
		case 0, 2:
			// 2: the passes another worker held, each named, and nothing else.
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "pass could not run") && !strings.Contains(l, "pass lease held") {
					t.Errorf("worker %d: a pass could not run for another reason than another worker's lease: %s", w.n, l)
				}
			}
		default:
			t.Errorf("worker %d: exit %d", w.n, w.code)
		}
		if m := summaryRE.FindStringSubmatch(out); m != nil {
			n, _ := strconv.Atoi(m[2])
			deposited += n
			if want := map[int]int{1: hosts * articles, 2: hosts / 2 * articles, 3: hosts / 2 * articles}[w.n]; n != want {
				t.Errorf("worker %d deposited %d, want %d (the sources whose leases were free when it started)", w.n, n, want)
			}
		}
	}
	if w1.code != 2 || !strings.Contains(w1.out.String(), `news-1-atom: another worker is running its pass (worker "test-holder") and holds its lease until`) {
		t.Errorf("the first worker ran while the Atom sources were held: exit %d, want 2 naming them", w1.code)
	}
	if deposited != 2*hosts*articles {
		t.Errorf("%d deposited by the workers, want %d (each article once per source)", deposited, 2*hosts*articles)
	}

	for _, s := range info.Sites {
		if n := countPath(web, s.Name, "/robots.txt"); n != 1 {
			t.Errorf("%s/robots.txt fetched %d times by the workers, want once", s.Name, n)
		}
		for _, a := range s.Articles {
			if n := countPath(web, s.Name, a.Path); n != 2 {
				t.Errorf("%s%s asked %d times, want once per source", s.Name, a.Path, n)
			}
		}
	}
	deposits := map[string]int{}
	for _, store := range []string{shared, own} {
		for k := range exportKeys(t, cfg, store) {
			deposits[k]++
		}
	}
	if len(deposits) != 2*hosts*articles {
		t.Errorf("%d deposits across the workers' files, want %d", len(deposits), 2*hosts*articles)
	}
	for k, n := range deposits {
		if n != 1 {
			t.Errorf("%s deposited %d times across the workers' files", k, n)
		}
	}
	// report on the third worker's file: the references of every source,
	// from the shared state in Redis; the deposits of its own sources.
	rr := politecrawl(t, nil, "report", "-config", cfg, "-store", own, "-json")
	var rep Report
	if err := json.Unmarshal([]byte(rr.stdout), &rep); rr.code != 0 || err != nil {
		t.Fatalf("report: exit %d, %v\n%s", rr.code, err, rr.stderr)
	}
	for _, sr := range rep.Sources {
		mine := map[string]bool{"news-4-atom": true, "news-5-atom": true, "news-6-atom": true}[sr.ID]
		if sr.Refs["deposited"] != articles || (sr.Deposits == articles) != mine || (!mine && sr.Deposits != 0) {
			t.Errorf("report of the third worker's file, %s: %d references deposited (want %d, from Redis), %d deposits here", sr.ID, sr.Refs["deposited"], articles, sr.Deposits)
		}
	}
	// report of both files as one: every source's deposits, each once,
	// and the shared state read once (not once per file).
	rr = politecrawl(t, nil, "report", "-config", cfg, "-store", shared, "-store", own, "-json")
	rep = Report{}
	if err := json.Unmarshal([]byte(rr.stdout), &rep); rr.code != 0 || err != nil {
		t.Fatalf("report of both files: exit %d, %v\n%s", rr.code, err, rr.stderr)
	}
	for _, sr := range rep.Sources {
		if sr.Refs["deposited"] != articles || sr.Deposits != articles || sr.Tally != nil && sr.Tally.Deposits != articles {
			t.Errorf("report of both files, %s: %d references deposited, %d deposits, tally %+v; want %d of each", sr.ID, sr.Refs["deposited"], sr.Deposits, sr.Tally, articles)
		}
	}
	ap := auditPolicy("strict-news")
	ap.MaxConnsPerHost = 2 // a connection per process reading the host (the schedule still lets one request through at a time)
	if rep := web.Audit(ap); !rep.OK() {
		t.Errorf("auditor over the three workers:\n%s", rep)
	}
}

// countPathAll counts the requests for path on any host.
func countPathAll(web *politetest.Web, path string) int {
	n := 0
	for _, q := range web.Requests() {
		if q.Path == path {
			n++
		}
	}
	return n
}

// A Redis that does not answer at start: crawl sends nothing and its error
// names the address and what the OS said.
func TestCrawl_RedisUnreachableAtStart(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	sw := newSimWeb(t, 1, 1)
	cfg := redisConfig(t, 1, false, "    addr: "+addr)
	r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-once"}, sw.flags...)...)
	if r.code == 0 || !strings.Contains(r.stderr, "store redis "+addr) || !strings.Contains(r.stderr, "connection refused") {
		t.Errorf("exit %d, want an error naming %s and the refused connection:\n%s%s", r.code, addr, r.stdout, r.stderr)
	}
	if n := len(sw.web.Requests()); n != 0 {
		t.Errorf("%d requests sent without the shared state", n)
	}
}

// The password is a reference only: an inline one is refused, without
// being repeated; a file: reference is relative to the config's folder;
// the other keys are checked where they are read.
func TestConfig_RedisStore(t *testing.T) {
	t.Parallel()
	base := strings.Replace(minimalConfig, "policy:", "store:\n  redis:\n    addr: 127.0.0.1:6379\nXX\npolicy:", 1)
	for _, tc := range []struct {
		extra, want string
	}{
		{"    password: hunter2", "c.yaml:9: store.redis.password: an inline password is refused: give a reference, env:NAME or file:PATH"},
		{"    password: \"env:\"", "store.redis.password: an inline password is refused"},
		{"    db: -1", "store.redis.db: -1"},
		{"    timeout: 5m", "store.redis.timeout: 5m0s: from 100ms to 1m"},
		{"    prefix: \"a{b}:\"", "store.redis.prefix"},
		{"    pasword: env:X", "store.redis.pasword: unknown key"},
	} {
		_, err := ParseConfig("c.yaml", []byte(strings.Replace(base, "XX", tc.extra, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.extra, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error repeats the inline password: %v", err)
		}
	}
	noAddr := strings.Replace(base, "    addr: 127.0.0.1:6379\nXX", "    db: 1", 1)
	if _, err := ParseConfig("c.yaml", []byte(noAddr)); err == nil || !strings.Contains(err.Error(), "store.redis.addr: required") {
		t.Errorf("no addr: %v", err)
	}
	c, err := ParseConfig(filepath.Join("conf", "c.yaml"), []byte(strings.Replace(base, "XX", "    password: file:redis.pw\n    prefix: \"news:\"\n    timeout: 500ms", 1)))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Store.Redis
	if want := "file:" + filepath.Join("conf", "redis.pw"); r.Password != want || r.Prefix != "news:" || r.timeout() != 500*time.Millisecond {
		t.Errorf("parsed %+v, want the password %s relative to the config's folder", r, want)
	}
	if got, want := c.storeLine(), `state shared in redis 127.0.0.1:6379 db 0 prefix "news:"`; !strings.Contains(got, want) {
		t.Errorf("sources check's store line %q, want it to say %q", got, want)
	}
}

// An inline password is refused by the binary too, before anything is
// opened or fetched, and its value is never printed.
func TestCrawl_RedisInlinePasswordRefused(t *testing.T) {
	t.Parallel()
	sw := newSimWeb(t, 1, 1)
	cfg := redisConfig(t, 1, false, "    addr: 127.0.0.1:6379\n    password: s3cr3t-inline")
	for _, cmd := range [][]string{{"sources", "check", "-config", cfg}, append([]string{"crawl", "-config", cfg, "-once"}, sw.flags...)} {
		r := politecrawl(t, nil, cmd...)
		if r.code == 0 || !strings.Contains(r.stderr, "store.redis.password: an inline password is refused") {
			t.Errorf("%s: exit %d\n%s%s", cmd[0], r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, "s3cr3t-inline") {
			t.Errorf("%s printed the inline password", cmd[0])
		}
	}
	if n := len(sw.web.Requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

// Redis stopped mid-crawl: the crawl fails closed (nothing is fetched
// while it is down, bar the one request whose claim and slot were taken
// before), its log says so once, and says so again when Redis answers.
func TestCrawl_RedisDownMidCrawlFailsClosed(t *testing.T) {
	t.Parallel()
	srv := startRedis(t)
	sw := newSimWeb(t, 1, 8)
	cfg := redisConfig(t, 1, false, "    addr: "+srv.addr+"\n    timeout: 200ms")
	w := startWorker(t, 1, append([]string{"crawl", "-config", cfg}, sw.flags...)...)
	until := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 20 s:\n%s", what, w.out.String())
			}
			time.Sleep(10 * time.Millisecond) // waiting for another process, not timing logic
		}
	}
	articles := func() int {
		n := 0
		for _, q := range sw.web.Requests() {
			if strings.Contains(q.Path, "/article-") {
				n++
			}
		}
		return n
	}
	until("two articles read", func() bool { return articles() >= 2 })
	srv.stop()
	down := len(sw.web.Requests())
	until("the log saying redis is down", func() bool { return strings.Contains(w.out.String(), "redis is not answering") })
	time.Sleep(1500 * time.Millisecond) // a window of the outage to watch (another process's), not timing logic
	if n := len(sw.web.Requests()) - down; n > 1 {
		t.Errorf("%d requests sent while Redis was down, want at most the one already claimed", n)
	}
	srv.start()
	until("the log saying redis is back", func() bool { return strings.Contains(w.out.String(), "redis answers again") })
	w.cmd.Process.Signal(os.Interrupt)
	<-w.done
	if w.code != 0 {
		t.Errorf("exit %d after Ctrl-C\n%s", w.code, w.out.String())
	}
	t.Logf("the crawl's log:\n%s", w.out.String())
	if strings.Count(w.out.String(), "redis is not answering") != 1 {
		t.Errorf("the outage should be logged once:\n%s", w.out.String())
	}
	if rep := sw.web.Audit(auditPolicy("strict-news")); !rep.OK() {
		t.Errorf("auditor:\n%s", rep)
	}
}

// The CLI's counting of robots.txt fetches keeps what the Redis state's
// robots store holds for a fetch: its ReleaseFetch, which ends the fetch
// lease as soon as the record is written, so the other workers waiting for
// that host's robots.txt read it at once instead of waiting out the lease.
func TestStores_RobotsCountingKeepsTheFetchRelease(t *testing.T) {
	t.Parallel()
	srv := startRedis(t)
	cfg, err := LoadConfig(redisConfig(t, 1, false, "    addr: "+srv.addr+"\n    timeout: 2s"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := openStores(context.Background(), cfg, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.Fetch().Robots.(robots.FetchReleaser); !ok {
		t.Errorf("the Redis state's robots store, counted, is a %T: its ReleaseFetch is lost", s.Fetch().Robots)
	}
}
