package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// explain answers from the state the crawl left in its store: an article
// allowed now, one disallowed by robots.txt (with its rule and line), one
// on a host cooling down after a 429 (S4, with until when), and URLs the
// policy blocks before anything is asked (https only, V10). Exit status 0
// for allowed, 1 for refused.
func TestExplain_AllowedDisallowedCoolingBlocked(t *testing.T) {
	t.Parallel()
	sw := newSimWeb(t, 2, 1)
	sw.web.Site("news-1.example").Misbehave("/feed.xml", politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: 10 * time.Minute})
	sw.web.Site("news-2.example").SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /news/\n"})
	store := filepath.Join(t.TempDir(), "crawl.db")
	cfg := readyConfig("strict-news")
	// news-1's 429 leaves it unread: exit 1, the cause named.
	if r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-store", store, "-once"}, sw.flags...)...); r.code != 1 ||
		!strings.Contains(r.stdout, "news-1.example (news-1): the site asked us to wait (HTTP 429)") {
		t.Fatalf("crawl: exit %d, want 1 naming news-1's 429\n%s%s", r.code, r.stdout, r.stderr)
	}
	explain := func(u string) result {
		return politecrawl(t, nil, append([]string{"explain", "-config", cfg, "-store", store}, append(sw.flags, u)...)...)
	}
	for _, tc := range []struct {
		name, url string
		code      int
		want      []string
	}{
		{"allowed", "https://news-2.example/?utm_source=x", 0, []string{
			"verdict                      allowed",
			"https://news-2.example/ (as it would be requested: tracking parameters removed)",
			"news-2 (News Two), active, policy strict-news",
			`group "*" (line 1); no rule matches`,
			"ledger                       clear"}},
		{"disallowed", "https://news-2.example/news/article-1/", 1, []string{
			"verdict                      refused: ",
			`"Disallow: /news/" (line 2)`}},
		{"cooling down", "https://news-1.example/news/article-1/", 1, []string{
			"verdict                      refused: ",
			"cooling down until ",
			"last status 429"}},
		{"blocked scheme", "http://news-2.example/", 1, []string{
			"verdict                      refused: ",
			"scheme http not allowed",
			"robots.txt                   not asked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := explain(tc.url)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, r.stdout)
				}
			}
		})
	}
	if rep := sw.web.Audit(readyAudit("strict-news")); !rep.OK() {
		t.Errorf("auditor:\n%s", rep)
	}
}

// Without -config, explain (like verify, report, export and withdraw)
// reads sources.yaml in the current folder.
func TestExplain_DefaultConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := os.ReadFile(readyConfig("strict-news"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sources.yaml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "explain", "http://news-1.example/")
	cmd.Dir, cmd.Env = dir, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "source                       news-1 (News One)") {
		t.Errorf("explain in a folder with sources.yaml: %v\n%s", err, out)
	}
}
