package main

// The acceptance suites (suite_strictnews_test.go, suite_digest_test.go,
// suite_vault_test.go): each policy document's ready config from configs/,
// loaded as the CLI loads it, read through the CLI's own client and SQLite
// stores (openClient) and crawled by package crawl, against a
// politetest web holding the config's hosts (news-1.example …), with the
// auditor's verdict at the end of every phase. Each test names the
// requirements it proves; testdata/requirements.txt maps them.
//
// Time: two clocks, as in the demo. Requests are paced by the chain in
// real time at the config's own intervals (1 s, 2–5 s), which the auditor
// checks exactly over the whole record. The crawler's schedule (feed
// intervals, the refresh guard, backlog walks, the 48-hour window) runs on
// a clock the test moves on (suiteClock), so hours and days pass for it in
// an instant. What the chain times itself (robots.txt lifetimes, cool-downs)
// is proven on an injected clock by the tests of robots, backoff and fetch,
// which the mapping names; a suite test that needs it too sets
// suite.chainClock, and then moves time only by phase (nextPhase): the
// record so far is audited and cleared before the clock jumps, so each
// phase is audited as the web saw it (the web's own times do not jump).

import (
	"context"
	"encoding/pem"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// suiteClock is the crawler's clock: real time plus an offset the test
// moves forward, its waits real.
type suiteClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *suiteClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *suiteClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// suite is one ready config crawling one simulated web.
type suite struct {
	t      *testing.T
	preset string
	web    *politetest.Web
	info   *politetest.ScenarioInfo
	cfg    *Config
	fp     fetch.Policy // the policy as the config gives it
	clk    *suiteClock
	// chainClock, set by newSuite's edit, puts the chain on the crawler's
	// clock too.
	chainClock bool
	// allowHeaders adds request headers the auditor allows (a source's
	// credential header), set by newSuite's edit.
	allowHeaders []string
	// conns, when positive, is the most connections per host the auditor
	// allows (several processes each keep their own).
	conns int
	// nf and dbPath are the CLI's network flags and store file, for a
	// second process on the same store.
	nf     netFlags
	dbPath string
	client *fetch.Client
	c      *crawl.Crawler
}

// newSuite loads the ready config of preset, lets edit change its sources
// (the web is built and ready to misbehave), and builds the CLI's client
// and stores over the web and a crawler over them. hosts and articles size
// the web (news-1.example … with that many articles each).
func newSuite(t *testing.T, preset string, hosts, articles int, edit func(s *suite)) *suite {
	t.Helper()
	if testing.Short() {
		t.Skip("the policy suites crawl at their documents' real intervals (about a minute in all): they run without -short, as .ci/run's race pass does")
	}
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: hosts, ArticlesPerHost: articles, Seed: 1})
	cfg, err := LoadConfig(readyConfig(preset))
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{t: t, preset: preset, web: web, info: info, cfg: cfg, clk: &suiteClock{}}
	if edit != nil {
		edit(s)
	}
	if s.fp, err = cfg.FetchPolicy(); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: web.CACert().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	s.nf = netFlags{connectTo: web.Addr(), caFile: ca, admit: prefixList{netip.MustParsePrefix("127.0.0.0/8")}}
	s.dbPath = filepath.Join(t.TempDir(), preset+".db")
	ctx := context.Background()
	var opts []fetch.Option
	if s.chainClock {
		opts = append(opts, fetch.WithClock(s.clk))
	}
	client, db, err := openClient(ctx, cfg, s.dbPath, &s.nf, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	t.Cleanup(func() { client.Close() })
	s.client = client
	state, deposits := db.Crawl().State, db.Crawl().Deposits
	s.c = &crawl.Crawler{
		Client:          client,
		Sources:         cfg.Sources,
		State:           state,
		Deposits:        deposits,
		Clock:           s.clk,
		BacklogInterval: time.Duration(cfg.Crawl.BacklogInterval),
		RefreshGuard:    time.Duration(cfg.Crawl.RefreshGuard),
		MaxReads:        cfg.Crawl.MaxReads,
		MaxFailures:     cfg.Crawl.MaxFailures,
	}
	t.Cleanup(s.audit)
	return s
}

// source returns the config's source id, to edit before the crawl.
func (s *suite) source(id string) *crawl.Source {
	for i := range s.cfg.Sources {
		if s.cfg.Sources[i].ID == id {
			return &s.cfg.Sources[i]
		}
	}
	s.t.Fatalf("no source %q in the %s config", id, s.preset)
	return nil
}

// site returns the web's site of the config's host name.
func (s *suite) site(name string) *politetest.Site { return s.web.Site(name) }

// runOnce runs one pass of every active source and fails on a pass error.
func (s *suite) runOnce() map[string]*crawl.PassReport {
	s.t.Helper()
	reps, err := s.c.RunOnce(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]*crawl.PassReport{}
	for _, r := range reps {
		if r.Err != nil {
			s.t.Fatalf("%s: %v", r.Source, r.Err)
		}
		out[r.Source] = r
	}
	return out
}

// audit checks the web's record against the document's policy.
func (s *suite) audit() {
	s.t.Helper()
	ap := auditPolicy(s.preset)
	if ap.AllowedHeaders != nil {
		ap.AllowedHeaders = append(ap.AllowedHeaders, s.allowHeaders...)
	}
	if s.conns > 0 {
		ap.MaxConnsPerHost = s.conns
	}
	if rep := s.web.Audit(ap); !rep.OK() {
		s.t.Errorf("auditor (%d requests):\n%s", len(s.web.Requests()), rep)
	}
}

// later moves the crawler's clock on by d.
func (s *suite) later(d time.Duration) {
	s.clk.mu.Lock()
	s.clk.offset += d
	s.clk.mu.Unlock()
}

// nextPhase audits the record so far, clears it and moves the clock (the
// crawler's and, with chainClock, the chain's) on by d.
func (s *suite) nextPhase(d time.Duration) {
	s.t.Helper()
	s.audit()
	s.web.Reset()
	s.later(d)
}

// requests returns the web's requests to host, in order; path "" for all.
func (s *suite) requests(host, path string) []politetest.Request {
	var out []politetest.Request
	for _, q := range s.web.Requests() {
		if q.Host == host && (path == "" || q.Path == path) {
			out = append(out, q)
		}
	}
	return out
}

// deposits returns what the store holds for source.
func (s *suite) deposits(source string) []*crawl.Deposit {
	s.t.Helper()
	ds, err := s.c.Deposits.List(context.Background(), source, time.Time{})
	if err != nil {
		s.t.Fatal(err)
	}
	return ds
}
