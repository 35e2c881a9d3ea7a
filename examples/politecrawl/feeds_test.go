package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crawl -feeds FILE crawls each listed feed as a source of its own: with
// -full-text its articles are deposited in full, without it kept as the
// feed describes them; the simulated web's auditor finds nothing.
func TestCrawl_FeedsFileOneSourceAFeed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		full      bool
		deposited string
		excerpts  string
	}{{true, "6", "0"}, {false, "0", "6"}} {
		sw := newSimWeb(t, 3, 2)
		dir := t.TempDir()
		list := filepath.Join(dir, "feeds.txt")
		text := "# three feeds\nhttps://news-1.example/feed.xml\n\nhttps://news-2.example/feed.xml\nhttps://news-3.example/feed.xml\n"
		if err := os.WriteFile(list, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"crawl", "-config", readyConfig("strict-news"), "-store", filepath.Join(dir, "c.db"), "-once", "-feeds", list}
		if tc.full {
			args = append(args, "-full-text")
		}
		r := politecrawl(t, nil, append(args, sw.flags...)...)
		m := summaryRE.FindStringSubmatch(r.stdout)
		if r.code != 0 || m == nil || m[2] != tc.deposited || m[3] != tc.excerpts {
			t.Errorf("-full-text=%v: exit %d, want %s deposited and %s excerpts\n%s%s", tc.full, r.code, tc.deposited, tc.excerpts, r.stdout, r.stderr)
		}
		if rep := sw.web.Audit(readyAudit("strict-news")); !rep.OK() {
			t.Errorf("auditor:\n%s", rep)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(bad, []byte("http://plain.example/feed.xml\n"), 0o600)
	if r := politecrawl(t, nil, "crawl", "-config", readyConfig("strict-news"), "-once", "-feeds", bad); r.code != 2 || !strings.Contains(r.stderr, "bad.txt:1") {
		t.Errorf("a plain-http feed: exit %d\n%s", r.code, r.stderr)
	}
}
