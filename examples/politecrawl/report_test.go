package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// report after a kill -9 counts what the killed crawl did up to the kill:
// the counters are the crawl state's, written with what they count, and no
// side file is left beside the store. The licensed source's articles are
// read one a second (strict news), so the kill lands mid-pass.
func TestReport_AfterKill9CountsTheReadsSoFar(t *testing.T) {
	t.Parallel()
	sw := newSimWeb(t, 2, 8)
	dir := t.TempDir()
	store := filepath.Join(dir, "crawl.db")
	cfg := readyConfig("strict-news")
	cmd := exec.Command(binary, append([]string{"crawl", "-config", cfg, "-store", store, "-once", "-live", "off"}, sw.flags...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	articles := func() int {
		n := 0
		for _, q := range sw.web.Requests() {
			if q.Host == "news-1.example" && strings.HasPrefix(q.Path, "/news/") {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(30 * time.Second); articles() < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("the crawl read %d of news-1's articles in 30 s", articles())
		}
		time.Sleep(10 * time.Millisecond) // waiting for another process, not timing logic
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	sent := articles()
	if sent >= 8 {
		t.Fatalf("the crawl read all %d articles before the kill: nothing to prove", sent)
	}

	r := politecrawl(t, nil, "report", "-config", cfg, "-store", store, "-json")
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, r.stdout)
	}
	var news1 *SourceReport
	for i := range rep.Sources {
		if rep.Sources[i].ID == "news-1" {
			news1 = &rep.Sources[i]
		}
	}
	if news1 == nil {
		t.Fatalf("no news-1 in the report:\n%s", r.stdout)
	}
	tl := news1.Tally
	switch {
	case tl == nil:
		t.Fatalf("news-1 has no counters after the kill:\n%s", r.stdout)
	case tl.TriggerReads != 1:
		t.Errorf("news-1: %d trigger reads counted, the web answered its feed once", tl.TriggerReads)
	case tl.Reads < sent || tl.Reads > sent+1:
		// Counted when asked, before the request is sent: at most the one
		// in flight at the kill was not seen by the web.
		t.Errorf("news-1: %d reads counted, the web saw %d article requests", tl.Reads, sent)
	case tl.Deposits != news1.Deposits:
		t.Errorf("news-1: %d deposits counted, %d in the store", tl.Deposits, news1.Deposits)
	}
	table := politecrawl(t, nil, "report", "-config", cfg, "-store", store)
	if !strings.Contains(table.stdout, "READS") || strings.Contains(table.stdout, "keeps no counters") {
		t.Errorf("report table:\n%s", table.stdout)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(m) > 0 {
		t.Errorf("files beside the store: %v", m)
	}
}

// report per host, all of it from the store (issue 23 §1): a host whose
// feed answered 429 is cooling down, with the cause and the next try; a
// host whose robots.txt cannot be fetched is held back as unreachable,
// not as disallowing us; one whose robots.txt disallows the feed says so;
// a host read in full shows its articles by
// outcome, a gated one's reason, its robots.txt record and the counters
// of the source that reads it alone (S4).
func TestReport_S4_PerHostCausesAndCounters(t *testing.T) {
	t.Parallel()
	sw := newSimWeb(t, 4, 2)
	sw.web.Site("news-4.example").SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /feed.xml\n"})
	sw.web.Site("news-1.example").Misbehave("/feed.xml", politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: 30 * time.Minute})
	sw.web.Site("news-2.example").SetRobots(politetest.Robots{Failure: politetest.FailReset})
	news3 := sw.web.Site("news-3.example")
	gated := news3.AddArticle(politetest.Article{Slug: "members-only"})
	news3.Handle(gated.Path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>%s</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":%q,"isAccessibleForFree":false}</script>
</head><body><article><h1>%s</h1><p>The first paragraph is free to read; the rest is for members only, who log in to read it.</p></article></body></html>`,
			gated.Title, gated.Title, gated.Title)
	}))
	cfg := lifecycleConfig(t, 4)
	store := filepath.Join(t.TempDir(), "crawl.db")
	if r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-store", store, "-once"}, sw.flags...)...); r.code != 1 {
		t.Fatalf("crawl: exit %d, want 1 (news-1, news-2 and news-4 not read)\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := politecrawl(t, nil, "report", "-config", cfg, "-store", store, "-json")
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, r.stdout)
	}
	hosts := map[string]HostReport{}
	for _, h := range rep.Hosts {
		hosts[h.Host] = h
	}
	held := func(h HostReport, prefix string) bool {
		return len(h.HeldBack) == 1 && strings.HasPrefix(h.HeldBack[0], prefix) && strings.Contains(h.HeldBack[0], "next try ")
	}
	if h := hosts["news-1.example"]; h.Strikes != 1 || !strings.Contains(h.LastCause, "429") || h.LastRefusal.IsZero() ||
		!held(h, "cooling down after status 429 (1 in a row)") || h.Tally == nil || h.Tally.TriggerReads+h.Tally.Failures == 0 {
		t.Errorf("news-1.example %+v: want a 429 strike, cooling down with its next try, and news-1's counters", h)
	}
	if h := hosts["news-2.example"]; h.Robots == nil || h.Robots.Outcome != "disallow all" || h.Robots.Failure != "connection reset" ||
		!held(h, "robots.txt unreachable: connection reset") || h.Strikes != 0 {
		t.Errorf("news-2.example %+v (robots.txt %+v): want robots.txt unreachable, held back until its next try", h, h.Robots)
	}
	if h := hosts["news-4.example"]; !held(h, "robots.txt disallows the feed /feed.xml (news-4) for LifecycleBot; next try ") || h.Robots == nil || h.Robots.Outcome != "rules" {
		t.Errorf("news-4.example %+v: want robots.txt disallowing its feed", h)
	}
	articleReads := 0
	for _, q := range sw.web.Requests() {
		if q.Host == "news-3.example" && q.Path != "/robots.txt" && q.Path != "/feed.xml" && !strings.HasPrefix(q.Path, "/images/") {
			articleReads++
		}
	}
	h := hosts["news-3.example"]
	switch {
	case h.Articles["deposited"] != 2 || h.Articles["excluded"] != 1 || h.Deposits != 2:
		t.Errorf("news-3.example: articles %v, %d deposits; want 2 deposited and the gated one excluded", h.Articles, h.Deposits)
	case h.NotDeposited["gated: json-ld:NewsArticle.isAccessibleForFree"] != 1:
		t.Errorf("news-3.example: not deposited %v, want the gated article's reason", h.NotDeposited)
	case h.Robots == nil || h.Robots.Status != 200 || h.Robots.Outcome != "rules" || len(h.HeldBack) != 0:
		t.Errorf("news-3.example: robots.txt %+v, held back %q", h.Robots, h.HeldBack)
	case h.Tally == nil || h.Tally.Reads != articleReads || h.Tally.TriggerReads != 1 || len(h.CountedFrom) != 1:
		t.Errorf("news-3.example: counters %+v from %v; the web saw %d article reads and one feed read", h.Tally, h.CountedFrom, articleReads)
	}

	table := politecrawl(t, nil, "report", "-config", cfg, "-store", store)
	for _, want := range []string{
		"hosts held back now:",
		"  news-1.example: cooling down after status 429 (1 in a row); next try ",
		"  news-2.example: robots.txt unreachable: connection reset; next try ",
		"  news-4.example: robots.txt disallows the feed /feed.xml (news-4) for LifecycleBot; next try ",
		"articles not deposited, by reason:\n  news-3.example: 1 gated: json-ld:NewsArticle.isAccessibleForFree",
		"ROBOTS.TXT",
	} {
		if !strings.Contains(table.stdout, want) {
			t.Errorf("report table lacks %q:\n%s", want, table.stdout)
		}
	}
}
