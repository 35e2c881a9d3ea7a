package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politefetch/politefetch/politetest"
)

// fetch URL reads one page as a crawl would (robots.txt first, the
// config's identity), prints the status, the headers and the proof, and
// writes the body with -o; a URL robots.txt disallows is refused with
// explain's reasons and exit 1, nothing sent for it.
func TestFetch_OneShotPoliteThenRefused(t *testing.T) {
	t.Parallel()
	sw := newSimWeb(t, 2, 1)
	sw.web.Site("news-2.example").SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /news/\n"})
	dir := t.TempDir()
	cfg := readyConfig("strict-news")
	store := filepath.Join(dir, "c.db")
	body := filepath.Join(dir, "page.html")
	r := politecrawl(t, nil, append([]string{"fetch", "-config", cfg, "-store", store, "https://news-1.example/news/article-1/", "-o", body}, sw.flags...)...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "200 https://news-1.example/news/article-1/\n") || !strings.Contains(r.stdout, "proof: sha256:") {
		t.Fatalf("fetch: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(body); err != nil || !strings.Contains(string(b), "<html") {
		t.Errorf("-o wrote %d bytes, %v", len(b), err)
	}
	r = politecrawl(t, nil, append([]string{"fetch", "-config", cfg, "-store", store, "https://news-2.example/news/article-1/"}, sw.flags...)...)
	if r.code != 1 || !strings.Contains(r.stdout, `"Disallow: /news/" (line 2)`) || !strings.Contains(r.stderr, "fetch: refused: disallowed by robots.txt") {
		t.Errorf("fetch of a disallowed URL: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, q := range sw.web.Requests() {
		if q.Host == "news-2.example" && strings.HasPrefix(q.Path, "/news/") {
			t.Errorf("a disallowed page was requested: %s", q.Path)
		}
	}
	if rep := sw.web.Audit(readyAudit("strict-news")); !rep.OK() {
		t.Errorf("auditor:\n%s", rep)
	}
}
