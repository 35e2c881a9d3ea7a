package sqlite

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/provenance"
)

// crashEnv names the child's configuration file; set only in the child.
const crashEnv = "POLITEFETCH_SQLITE_CRASH_CHILD"

// crashConfig is what the parent tells each child.
type crashConfig struct {
	DB       string        // the SQLite file
	CA       string        // the web's CA certificate, PEM
	Addr     string        // the web's TLS address
	Sites    []string      // one source per site
	Interval time.Duration // the per-host interval
	// Offset is added to the crawler's clock: each run starts where the
	// last one's clock was at its last round, so the leases a killed run
	// held are still unexpired when the next starts.
	Offset time.Duration
}

var crashLoopback = netip.MustParsePrefix("127.0.0.0/8")

// crashPolicy is the policy the children crawl under.
func crashPolicy(t testing.TB, interval time.Duration) fetch.Policy {
	p, err := crawl.PolicySpec{Preset: crawl.StrictNews}.Fetch()
	if err != nil {
		t.Fatal(err)
	}
	p.Name, p.Version, p.InfoURL, p.Contact = "CrashTestBot", "1", "https://crawler.example/about", "bot@crawler.example"
	p.Interval, p.IntervalMax, p.Timeout = interval, 0, 3*time.Second
	return p
}

// TestCrashKill9_V12 crawls a simulated web in a child process over one
// SQLite file (after a first, unkilled run that meets a refusing host),
// kills the child with SIGKILL 20 times (half of the time
// right as it begins a deposit, half after a random time), restarts it on
// the same file each time, then lets a last child finish. Every deposit a
// child reported committed is there and intact (its digest matches, its
// proof verifies), none is duplicated, the file passes SQLite's integrity
// check, and the auditor finds no violation over all the runs together: the
// ledger's cool-downs, the robots.txt records and the pacing schedule
// survived each kill (P1, S4, V6, V12). The feeds' validators are on file
// too, and later runs' feed reads are answered 304 on them; a feed read just
// before a kill is read in full after it (the crawler keeps its validators
// only once its items are recorded), so every article is still learnt.
//
// Each restart is immediate, its crawler's clock where the killed one's
// was, so the killed child's leases (30 s) are still unexpired: no pass of
// the restarted child may be refused for one (its owner's process is gone,
// and the lease is taken over at once), and no claim of the pacing
// schedule is told to wait for an in-flight slot (the killed child's
// requests' leases, which outlive it by the request timeout and more, are
// taken over at once too: a claim only ever waits its host's interval, so
// a restart reads within moments, whatever the machine's load), and no
// article is asked for again once its deposit was reported committed.
func TestCrashKill9_V12(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	const kills = 20
	interval := 200 * time.Millisecond
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{
		Hosts: 8, ArticlesPerHost: 50, // the feeds carry the newest 50 RudeShare: 0.25, Seed: 7,
		Latency: [2]time.Duration{time.Millisecond, 5 * time.Millisecond},
	})
	// refuser.example answers its articles 429 with an hour's Retry-After:
	// after the first, no run may ask it for an article again, however
	// often it is killed and restarted.
	refuser := web.Site("refuser.example")
	for i := range 5 {
		a := refuser.AddArticle(politetest.Article{Published: time.Date(2026, 11, 1+i, 8, 0, 0, 0, time.UTC)})
		refuser.Misbehave(a.Path, politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: time.Hour})
	}
	dir := t.TempDir()
	cfg := crashConfig{DB: filepath.Join(dir, "crawl.db"), CA: filepath.Join(dir, "ca.pem"), Addr: web.Addr(), Interval: interval}
	for _, s := range info.Sites {
		cfg.Sites = append(cfg.Sites, s.Name)
	}
	cfg.Sites = append(cfg.Sites, refuser.Name())
	if err := os.WriteFile(cfg.CA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: web.CACert().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 14))
	log := &crashLog{committed: map[string]bool{}, kept: map[string]time.Time{}}
	committed := log.committed
	killed := 0
	// A first run, not killed, reads the refuser alone, so its refusal is
	// in the ledger before any kill: a kill that lands between a 429 and
	// the ledger's write would lose what the child never got to record.
	warm := cfg
	warm.Sites = []string{refuser.Name()}
	first := runCrashChild(t, warm, 0, 0, 0, log)
	if !first.done {
		t.Fatal("the warm-up run did not finish")
	}
	cfg.Offset = first.clockAtEnd(warm.Offset)
	var restarts []time.Duration // from a restart after a kill to its first request
	for run := 1; ; run++ {
		final := killed == kills
		var mode string
		var afterPuts int
		var afterTime time.Duration
		if !final {
			if run%2 == 1 {
				mode, afterPuts = "at a deposit", 1+rng.IntN(8)
			} else {
				mode, afterTime = "after a time", time.Duration(100+rng.IntN(900))*time.Millisecond
			}
		}
		r := runCrashChild(t, cfg, run, afterPuts, afterTime, log)
		done, wasKilled, puts := r.done, r.killed, r.puts
		if len(r.held) > 0 {
			t.Fatalf("run %d: passes refused for a lease still held: %v (a killed run's lease is taken over at once)", run, r.held)
		}
		if len(r.slotWaits) > 0 {
			t.Fatalf("run %d: claims told to wait for a host's in-flight slot, the killed run's leases waited out: %v", run, r.slotWaits)
		}
		if run > 1 {
			// The previous run was killed: how long until this one read.
			if first, ok := firstRequestAfter(web, r.started); ok {
				restarts = append(restarts, first.Sub(r.started))
			}
		}
		cfg.Offset = r.clockAtEnd(cfg.Offset)
		if wasKilled {
			killed++
			t.Logf("run %d: killed %s after %d deposits begun; %d committed so far", run, mode, puts, len(committed))
		}
		if final {
			if !done {
				t.Fatalf("the last run did not finish the crawl")
			}
			break
		}
		if done && !wasKilled {
			t.Fatalf("run %d finished the crawl before its kill (%d kills of %d): the web is too small", run, killed, kills)
		}
	}

	// Every deposit reported committed is there, once, intact, and proven.
	db, err := Open(ctx, cfg.DB, &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.r.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	found := map[string]bool{}
	total := 0
	var perSite []string
	for _, site := range cfg.Sites {
		ds, err := db.Deposits().List(ctx, site, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]bool{}
		for _, d := range ds {
			k := d.Source + " " + d.Digest
			if found[k] || keys[d.Key] {
				t.Fatalf("deposit %s (key %s) stored twice", k, d.Key)
			}
			found[k], keys[d.Key] = true, true
			if d.Envelope == nil {
				continue
			}
			if _, err := provenance.Verify(d.Proof, d.Envelope, provenance.VerifyOptions{Roots: web.RootCAs(), AllowPrefixes: []netip.Prefix{crashLoopback}}); err != nil {
				t.Fatalf("deposit %s: proof does not verify: %v", k, err)
			}
		}
		total += len(ds)
		perSite = append(perSite, fmt.Sprintf("%s %d", site, len(ds)))
	}
	for k := range committed {
		if !found[k] {
			t.Fatalf("deposit %s was reported committed but is not in the file", k)
		}
	}
	// The tallies are the file's, counted in the transactions of what they
	// count: after twenty kills each source's deposits are its references
	// settled as deposited, and every deposit was a read.
	for _, site := range cfg.Sites {
		tally, err := db.CrawlState().Tally(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		var settled int
		if err := db.r.QueryRow(`SELECT count(*) FROM crawl_ref WHERE source = ?1 AND outcome = 1`, site).Scan(&settled); err != nil {
			t.Fatal(err)
		}
		if tally.Deposits != settled || tally.Reads < tally.Deposits {
			t.Fatalf("%s: tally %+v after the kills, want %d deposits, each read", site, tally, settled)
		}
	}
	// Nothing read twice: no article is asked for again once its deposit
	// was reported committed.
	for _, r := range web.Requests() {
		if at, ok := log.kept[r.Host+" "+r.Path]; ok && r.Arrived.After(at) {
			t.Fatalf("%s%s read again at %v, after its deposit was committed at %v", r.Host, r.Path, r.Arrived, at)
		}
	}
	// Every restart read (how soon is a matter of the machine's load: the
	// property, no slot waited for, is checked at each run).
	if len(restarts) < kills/2 {
		t.Fatalf("only %d of the %d restarts read anything", len(restarts), kills)
	}
	t.Logf("restarts after a kill: first request after %v at the slowest, %v at the median, over %d restarts (the web's clock)",
		slices.Max(restarts), median(restarts), len(restarts))
	want := 0
	for _, s := range info.Sites {
		if !s.Rude {
			want += len(s.Articles)
		}
	}
	if total < want {
		rows, err := db.r.Query(`SELECT r.source, r.key, r.outcome, r.note, (SELECT count(*) FROM deposit d WHERE d.source = r.source AND d.key = r.key) FROM crawl_ref r
			WHERE NOT EXISTS (SELECT 1 FROM deposit d WHERE d.source = r.source AND d.key = r.key) LIMIT 20`)
		if err == nil {
			for rows.Next() {
				var src, key, note string
				var outcome, n int
				rows.Scan(&src, &key, &outcome, &note, &n)
				t.Logf("not deposited: %s %s outcome %d note %q", src, key, outcome, note)
			}
			rows.Close()
		}
		t.Fatalf("%d deposits in the file, want at least the %d articles of the well-behaved sites", total, want)
	}
	st, ok, err := db.Ledger().Get(ctx, "refuser.example")
	if err != nil || !ok || st.LastStatus != 429 || !st.Until.After(time.Now()) {
		t.Fatalf("the refuser's ledger record after the runs: %+v, %v, %v; want a 429 cooling down", st, ok, err)
	}
	asked, notModified := 0, 0
	for _, r := range web.Requests() {
		if r.Host == "refuser.example" && strings.HasPrefix(r.Path, "/20") {
			asked++
		}
		if r.Path == "/feed.xml" && r.Status == 304 {
			notModified++
		}
	}
	// The validators are on file: a later run's feed reads are conditional on
	// what an earlier run recorded.
	if notModified == 0 {
		t.Fatal("no feed read answered 304 over all the runs: the validators on file were never used")
	}
	if asked != 1 {
		t.Fatalf("the refuser was asked for %d articles over all the runs, want 1 (then its cool-down)", asked)
	}
	t.Logf("deposits per site: %v", perSite)
	rep := web.Audit(crashAudit(crashPolicy(t, interval)))
	if !rep.OK() {
		t.Fatalf("auditor, over all %d runs: %v", killed+1, rep)
	}
	t.Logf("%d kills; %d deposits (%d reported committed before a kill or the end), all intact; the refuser asked once; %d feed reads answered 304; %d requests audited, 0 violations",
		killed, total, len(committed), notModified, rep.Requests)
}

func crashAudit(p fetch.Policy) politetest.Policy {
	ap := politetest.Policy{
		Interval:     p.Interval,
		MaxInFlight:  1,
		StrictRobots: p.Robots.Status != 0,
		UserAgent:    regexp.MustCompile("^" + regexp.QuoteMeta(p.UserAgent()) + "$"),
		RobotsAgent:  p.Name,
		Slack:        politetest.Slack(p.Interval / 2),
		HTTPSOnly:    !p.AllowHTTP,
	}
	ap.AllowedHeaders = []string{"User-Agent", "Accept", "Accept-Encoding"}
	if !p.NoConditional {
		ap.AllowedHeaders = append(ap.AllowedHeaders, "If-None-Match", "If-Modified-Since")
	}
	return ap
}

// crashLog is what the children reported over all the runs.
type crashLog struct {
	committed map[string]bool      // "source digest" reported stored
	kept      map[string]time.Time // "host path" of each article deposited: when the parent learnt it
}

// childRun is what one child did.
type childRun struct {
	done, killed bool
	puts         int
	rounds       int       // rounds begun
	held         []string  // passes refused for a lease held: "source: error"
	slotWaits    []string  // schedule claims told to wait for an in-flight slot: "host wait gap"
	started      time.Time // when it was started
}

// clockAtEnd is the crawler's clock offset at the child's last round, for
// the next child to start at: the leases the child held are unexpired
// then.
func (r childRun) clockAtEnd(offset time.Duration) time.Duration {
	return offset + time.Duration(max(r.rounds-1, 0))*16*time.Minute
}

// firstRequestAfter is when the first request arriving after t reached the
// web.
func firstRequestAfter(web *politetest.Web, t time.Time) (time.Time, bool) {
	for _, r := range web.Requests() {
		if r.Arrived.After(t) {
			return r.Arrived, true
		}
	}
	return time.Time{}, false
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// runCrashChild runs one child and reads its report. With afterPuts > 0 it
// kills the child as soon as that many deposits have begun; with afterTime
// > 0, that long after the start; with neither it lets the child finish.
// Each deposit the child reports stored goes into the log.
func runCrashChild(t *testing.T, cfg crashConfig, run, afterPuts int, afterTime time.Duration, log *crashLog) (r childRun) {
	t.Helper()
	b, _ := json.Marshal(cfg)
	path := filepath.Join(filepath.Dir(cfg.DB), fmt.Sprintf("run-%d.json", run))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var wasKilled atomic.Bool
	kill := func() {
		once.Do(func() {
			wasKilled.Store(true)
			cmd.Process.Signal(syscall.SIGKILL)
		})
	}
	if afterTime > 0 {
		timer := time.AfterFunc(afterTime, kill)
		defer timer.Stop()
	}
	sc := bufio.NewScanner(out)
	done := false
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "PUT":
			r.puts++
			if afterPuts > 0 && r.puts >= afterPuts {
				kill()
			}
		case len(f) == 5 && f[0] == "OK":
			log.committed[f[1]+" "+f[2]] = true
			if u, err := url.Parse(f[4]); err == nil {
				log.kept[u.Hostname()+" "+u.Path] = time.Now()
			}
		case len(f) == 2 && f[0] == "ROUND":
			r.rounds++
		case len(f) == 4 && f[0] == "SLOTWAIT":
			r.slotWaits = append(r.slotWaits, strings.Join(f[1:], " "))
		case len(f) > 0 && f[0] == "HELD":
			r.held = append(r.held, strings.TrimPrefix(line, "HELD "))
		case len(f) == 1 && f[0] == "DONE":
			done = true
		}
	}
	io.Copy(io.Discard, out)
	err = cmd.Wait()
	if !wasKilled.Load() && err != nil {
		t.Fatalf("run %d: child failed: %v\n%s", run, err, stderr.String())
	}
	r.done, r.killed = done && !wasKilled.Load(), wasKilled.Load()
	return r
}

// TestCrashChild is the child of TestCrashKill9_V12: it does nothing in a
// plain test run.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("run by TestCrashKill9_V12")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg crashConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	pemCA, err := os.ReadFile(cfg.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemCA)
	db, err := Open(ctx, cfg.DB, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	web, err := netip.ParseAddrPort(cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	client, err := fetch.New(crashPolicy(t, cfg.Interval),
		fetch.WithNetwork(fetch.Network{Resolver: fixedResolver{web.Addr()},
			Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, cfg.Addr)
			},
			RootCAs: roots, Allow: []netip.Prefix{crashLoopback}}),
		// Validators on file too: the crawler keeps a feed's only once its
		// items are recorded (fetch.GetOptions.DeferValidators), so a feed read just
		// before a kill is read in full again after the restart.
		fetch.WithStores(fetch.Stores{Validators: db.Validators()}),
		fetch.WithStores(fetch.Stores{Ledger: db.Ledger()}), fetch.WithStores(fetch.Stores{Robots: db.Robots()}),
		fetch.WithStores(fetch.Stores{Schedule: reportingSchedule{db.Schedule()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	clk := &steppedClock{offset: cfg.Offset}
	c := &crawl.Crawler{Client: client, State: db.CrawlState(), Deposits: reportingDeposits{db.Deposits()},
		Clock: clk, // the default lease: 30 s, held by a killed child when the next starts
		OnEvent: func(ev crawl.Event) {
			if ev.Kind == crawl.EventFailed {
				fmt.Fprintf(os.Stderr, "failed: %s %s: %v\n", ev.Source, ev.URL, ev.Err)
			}
		}}
	for _, site := range cfg.Sites {
		c.Sources = append(c.Sources, crawl.Source{
			ID: site, Name: site, Trigger: crawl.Trigger{Feeds: []string{"https://" + site + "/feed.xml"}},
			Admitted: []string{site}, FullText: true, Policy: crawl.PolicySpec{Preset: crawl.StrictNews}, Active: true,
		})
	}
	for round := 0; round < 50; round++ {
		fmt.Printf("ROUND %d\n", round)
		reps, err := c.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reps {
			if errors.Is(r.Err, crawl.ErrLeaseHeld) {
				fmt.Printf("HELD %s: %v\n", r.Source, r.Err)
			}
		}
		// Settled when a round deposits nothing, fails nothing, and queues
		// nothing but on a host the chain refuses (the refuser, cooling
		// down).
		busy := 0
		for _, r := range reps {
			busy += r.Deposited + r.Failed + r.Deferred
			if r.Refused == 0 {
				busy += r.Queued
			}
			if r.Err != nil {
				busy++
			}
		}
		if busy == 0 {
			fmt.Println("DONE")
			return
		}
		clk.step.Add(1) // the next round is a new pass of every source
	}
	t.Fatal("the crawl did not settle in 50 rounds")
}

// reportingDeposits says on stdout when a deposit begins and when it was
// stored, for the parent to kill and to check.
type reportingDeposits struct{ *Deposits }

func (r reportingDeposits) Put(ctx context.Context, d *crawl.Deposit) (bool, error) {
	fmt.Printf("PUT %s %s\n", d.Source, d.Digest)
	added, err := r.Deposits.Put(ctx, d)
	if err == nil {
		fmt.Printf("OK %s %s %v %s\n", d.Source, d.Digest, added, d.URL)
	}
	return added, err
}

// reportingSchedule says on stdout when a claim is told to wait longer
// than its Gap: that wait is for an in-flight slot, a lease, since a wait
// for the host's interval is a Gap at most. The child has one Client, whose
// pacer claims a host only while it holds none of the host's slots itself,
// so the lease is another process's: the killed child's.
type reportingSchedule struct{ *Schedule }

func (s reportingSchedule) Acquire(ctx context.Context, c fetch.Claim) (time.Duration, bool, error) {
	wait, ok, err := s.Schedule.Acquire(ctx, c)
	if err == nil && !ok && wait > c.Gap {
		fmt.Printf("SLOTWAIT %s %v %v\n", c.Key, wait, c.Gap)
	}
	return wait, ok, err
}

// steppedClock is real time, offset, plus 16 minutes per step: each round
// of a child, and each child, starts a new pass.
type steppedClock struct {
	offset time.Duration
	step   atomic.Int64
}

func (c *steppedClock) Now() time.Time {
	return time.Now().Add(c.offset + time.Duration(c.step.Load())*16*time.Minute)
}

func (c *steppedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// fixedResolver answers every name with the web's address.
type fixedResolver struct{ addr netip.Addr }

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{r.addr}, nil
}
