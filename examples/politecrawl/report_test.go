package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
