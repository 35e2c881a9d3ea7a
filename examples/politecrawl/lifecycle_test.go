package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/politefetch/politefetch/politetest"
)

// lifecycleConfig is a strict news config of n full-text sources on
// news-1 … news-n.example.
func lifecycleConfig(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`crawler: {name: LifecycleBot, version: "1", info_url: "https://bot.example/about"}
policy: {preset: strict-news}
sources:
`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `  - id: news-%d
    name: News %d
    trigger: {feeds: ["https://news-%d.example/feed.xml"]}
    admitted: [news-%d.example]
    full_text: true
    active: true
`, i, i, i, i)
	}
	path := filepath.Join(t.TempDir(), "sources.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Ctrl-C mid-crawl, then a restart on the same store: the first run stops
// cleanly (exit 0, state kept), the second settles what the first left
// pending, no deposit is lost or duplicated, and no request falls inside
// the cool-down a 429 announced before the restart (S4). The first run
// also serves -metrics, scraped and parsed with Prometheus's own text
// parser; the report then shows per source and per host what was done.
func TestCrawl_SIGINTThenRestart_S4_NoLostDepositNoRequestInCooldown(t *testing.T) {
	t.Parallel()
	sw := newSimWeb(t, 3, 5)
	sw.web.Site("news-1.example").Misbehave("/feed.xml", politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: 30 * time.Minute})
	cfg := lifecycleConfig(t, 3)
	store := filepath.Join(t.TempDir(), "crawl.db")

	cmd := exec.Command(binary, append([]string{"crawl", "-config", cfg, "-store", store, "-metrics", "127.0.0.1:0", "-log-format", "json", "-log-level", "debug"}, sw.flags...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]any, 1024)
	var logText bytes.Buffer
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(io.TeeReader(stderr, &logText))
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	// Wait for the metrics address and then for the first deposits.
	var metricsURL string
	deposited := 0
	deadline := time.After(60 * time.Second)
	for metricsURL == "" || deposited < 3 {
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatalf("crawl ended early:\n%s", logText.String())
			}
			if m["msg"] == "metrics" {
				metricsURL, _ = m["addr"].(string)
			}
			if m["msg"] == "crawl: deposited" {
				deposited++
			}
		case <-deadline:
			t.Fatalf("no metrics address or deposits after 60 s:\n%s", logText.String())
		}
	}
	families := scrape(t, metricsURL)
	for _, name := range []string{"politecrawl_reads_total", "politecrawl_responses_total", "politecrawl_deposits_total", "politecrawl_hosts", "politecrawl_events_total"} {
		if families[name] == nil {
			t.Errorf("metric %s missing", name)
		}
	}
	// The fetch client's own events reach the metrics (fetch.WithObserver):
	// three deposits mean robots.txt was fetched, and a feed or an article
	// waited for its host's slot after it.
	if f := families["politecrawl_pacing_wait_seconds"]; f == nil || f.GetMetric()[0].GetHistogram().GetSampleCount() == 0 {
		t.Errorf("no pacing wait observed: %v", f)
	}
	robotsFetches := 0.0
	for _, m := range families["politecrawl_robots_fetches_total"].GetMetric() {
		robotsFetches += m.GetCounter().GetValue()
	}
	if robotsFetches < 1 {
		t.Errorf("%v robots.txt fetches counted after three deposits", robotsFetches)
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), "://") || strings.Contains(l.GetValue(), ".example") {
					t.Errorf("%s has a per-URL or per-host label %s=%q", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	// The interruption is no failure; news-1's 429 is: the exit status is
	// 1 and the summary names the host and why (docs/exit-codes.md).
	if err := cmd.Wait(); err == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("after SIGINT: %v, want exit status 1 for news-1's 429\n%s\n%s", err, stdout.String(), logText.String())
	}
	if !strings.Contains(stdout.String(), "news-1.example (news-1): the site asked us to wait (HTTP 429)") {
		t.Errorf("the summary does not name news-1's 429:\n%s", stdout.String())
	}
	if !strings.Contains(logText.String(), `"interrupted":true`) {
		t.Errorf("the log does not say the crawl was interrupted:\n%s", logText.String())
	}
	first := len(exportKeys(t, cfg, store))

	// Restart, one pass: what the first run left is settled.
	r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-store", store, "-once"}, sw.flags...)...)
	if r.code != 1 || !strings.Contains(r.stdout, "news-1.example (news-1): held back") {
		t.Fatalf("restart: exit %d, want 1 with news-1 held back by its 429\n%s%s", r.code, r.stdout, r.stderr)
	}
	keys := exportKeys(t, cfg, store)
	if len(keys) != 10 || first > len(keys) {
		t.Errorf("%d deposits after the restart (%d before it), want the 10 of news-2 and news-3", len(keys), first)
	}
	pol := auditPolicy("strict-news")
	pol.UserAgent = regexp.MustCompile(`^LifecycleBot/1 \(\+https://bot\.example/about\)$`)
	if rep := sw.web.Audit(pol); !rep.OK() {
		t.Errorf("auditor over both runs:\n%s", rep)
	} else if n := countPath(sw.web, "news-1.example", "/feed.xml"); n != 1 {
		t.Errorf("news-1's feed asked %d times: the restart asked again inside its cool-down", n)
	}

	// The report, as JSON, all of it the store's: the refusal and the
	// cool-down, and each source's counters over both runs.
	r = politecrawl(t, nil, "report", "-config", cfg, "-store", store, "-json")
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, r.stdout)
	}
	if rep.Counted == "" || len(rep.Sources) != 3 {
		t.Errorf("report: counted in %q, %d sources", rep.Counted, len(rep.Sources))
	}
	for _, s := range rep.Sources {
		want := 5
		if s.ID == "news-1" {
			want = 0
		}
		if s.Deposits != want {
			t.Errorf("report: %s has %d deposits, want %d", s.ID, s.Deposits, want)
		}
		if s.ID == "news-1" {
			continue
		}
		// Every article request the web saw was counted as asked (a read
		// abandoned by the SIGINT may be counted and never sent).
		h := s.ID + ".example"
		sent := 0
		for _, q := range sw.web.Requests() {
			if q.Host == h && strings.HasPrefix(q.Path, "/news/") {
				sent++
			}
		}
		if tl := s.Tally; tl == nil || tl.Deposits != 5 || tl.Reads < sent || sent < 5 || tl.TriggerReads != countPath(sw.web, h, "/feed.xml") {
			t.Errorf("report: %s tally %+v; the web saw %d article requests, %d feed reads", s.ID, tl, sent, countPath(sw.web, h, "/feed.xml"))
		}
	}
	for _, h := range rep.Hosts {
		switch h.Host {
		case "news-1.example":
			if h.Strikes != 1 || h.CoolUntil.IsZero() || !strings.Contains(h.LastCause, "429") {
				t.Errorf("report: news-1.example %+v: want one 429 strike, cooling down", h)
			}
		default:
			if h.Deposits != 5 || h.Bytes == 0 {
				t.Errorf("report: %s %+v: want its 5 deposits", h.Host, h)
			}
		}
	}
	r = politecrawl(t, nil, "report", "-config", cfg, "-store", store)
	for _, want := range []string{"SOURCE", "news-2", "HOST", "news-1.example", "COOLING UNTIL"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("report table lacks %q:\n%s", want, r.stdout)
		}
	}
}

// exportKeys exports the store as JSON Lines and returns source/key of each
// deposit, failing on a duplicate.
func exportKeys(t *testing.T, cfg, store string) map[string]bool {
	t.Helper()
	r := politecrawl(t, nil, "export", "-config", cfg, "-store", store, "-format", "jsonl")
	if r.code != 0 {
		t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
	}
	keys := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if l == "" {
			continue
		}
		var d depositLine
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		k := d.Source + "/" + d.Key
		if keys[k] {
			t.Errorf("deposit %s twice", k)
		}
		keys[k] = true
	}
	return keys
}

func countPath(web *politetest.Web, host, path string) int {
	n := 0
	for _, q := range web.Requests() {
		if q.Host == host && q.Path == path {
			n++
		}
	}
	return n
}

// scrape reads a Prometheus endpoint with Prometheus's text parser.
func scrape(t *testing.T, u string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", u, err)
	}
	return fams
}
