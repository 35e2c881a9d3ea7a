package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// S8: an excluded source leaves the list (active: false) and its stored
// content is withdrawn; withdrawing an active source is refused, and
// another source's deposits stay.
func TestWithdraw_S8_ExcludedSourceRemoved(t *testing.T) {
	t.Parallel()
	sw := newSimWeb(t, 2, 2)
	dir := t.TempDir()
	b, err := os.ReadFile(readyConfig("strict-news"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "sources.yaml")
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-once"}, sw.flags...)...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := politecrawl(t, nil, "withdraw", "-config", cfg, "-source", "news-1"); r.code == 0 || !strings.Contains(r.stderr, "is active") {
		t.Errorf("withdrawing an active source: exit %d\n%s", r.code, r.stderr)
	}
	// Exclude news-1: the first "active: true" in the file is news-1's.
	excluded := strings.Replace(string(b), "    active: true\n", "    active: false\n", 1)
	if err := os.WriteFile(cfg, []byte(excluded), 0o600); err != nil {
		t.Fatal(err)
	}
	r := politecrawl(t, nil, "withdraw", "-config", cfg, "-source", "news-1")
	if r.code != 0 || !strings.Contains(r.stdout, "2 deposits of news-1 removed") {
		t.Fatalf("withdraw: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	keys := exportKeys(t, cfg, filepath.Join(dir, "strict-news.db"))
	if len(keys) != 2 || !keys["news-2/1"] || !keys["news-2/2"] {
		t.Errorf("after the withdrawal: %v, want news-2's two excerpts only", keys)
	}
	// The excluded source is never fetched again.
	before := len(sw.web.Requests())
	if r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-once"}, sw.flags...)...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s", r.code, r.stderr)
	}
	for _, q := range sw.web.Requests()[before:] {
		if q.Host == "news-1.example" {
			t.Errorf("the excluded source's host was asked: %s", q.Path)
		}
	}
	if rep := sw.web.Audit(readyAudit("strict-news")); !rep.OK() {
		t.Errorf("auditor:\n%s", rep)
	}
}
