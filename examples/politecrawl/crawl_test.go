package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/politefetch/politefetch/politetest"
)

// TestRunCrawl_ZeroViolations crawls a small scenario web with rude sites
// (429, 503, challenge pages, 5xx robots.txt, disallowed articles) with a
// crawl.Crawler over the fetch chain, in three rounds of a simulated day,
// and checks that the auditor reports zero violations (S2, S3, S4, D1, D2,
// D5, V7, V11) and that the counts add up: every feed parsed at start-up
// then answered 304 at +15 min and +24 h (D4), every article of a
// well-behaved site deposited, every refusal honoured, the backlog's next
// walk stopped by V4.
func TestRunCrawl_ZeroViolations(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{
		Hosts: 12, ArticlesPerHost: 6, RudeShare: 0.5, Seed: 4, // seed 4: every rude trait, and robots.txt allowing all, disallowing sections, or missing
		RobotsMix: politetest.RobotsMix{Disallow: 0.3, Missing: 0.3},
	})
	var out bytes.Buffer
	sum, err := RunCrawl(context.Background(), web, info, CrawlConfig{}, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + info.String() + "\n" + out.String())
	if !sum.Audit.OK() {
		t.Fatalf("auditor: %v", sum.Audit)
	}

	// What each site should give, from what the scenario built.
	var wantParsed, wantFailed, wantRead, wantRobotsRefused int
	traits := map[string]int{}
	for _, s := range info.Sites {
		traits[s.Trait]++
		switch s.Trait {
		case "":
			wantParsed++
			wantRead += len(s.Articles)
		case "disallow":
			wantParsed++
			wantRobotsRefused += len(s.Articles)
		default:
			wantFailed++
		}
	}
	for _, tr := range politetest.RudeTraits() {
		if traits[tr] == 0 {
			t.Errorf("the scenario has no %q site: the counts below would not cover it", tr)
		}
	}
	wantRobotsRefused += traits["robots-5xx"] // the start-up feed read
	tests := []struct {
		name      string
		got, want int
	}{
		{"sites", sum.Sites, len(info.Sites)},
		{"feeds parsed", sum.FeedsParsed, wantParsed},
		{"feeds failed", sum.FeedsFailed, wantFailed},
		{"304s at +15 min and +24 h (D4)", sum.FeedsNotModified, 2 * wantParsed},
		{"articles deposited", sum.ArticlesRead, wantRead},
		{"articles failed", sum.ArticlesFailed, 0},
		{"articles accounted for", sum.ArticlesRead + sum.ArticlesRefused + sum.ArticlesFailed, sum.Announced},
		{"refused by robots.txt", sum.RefusedByUs["robots"], wantRobotsRefused},
		{"excerpts of refused articles (S5)", sum.Excerpts, sum.ArticlesRefused},
		{"server 429s", sum.RefusedByServer["429"], traits["429"]},
		{"server 503s", sum.RefusedByServer["503"], traits["503"]},
		{"cooling down", len(sum.CooledDown), traits["429"] + traits["503"] + traits["challenge"]},
		{"progress lines", strings.Count(out.String(), "\n["), len(info.Sites)},
		{"requests audited", sum.Audit.Requests, sum.Requests},
		// The backlog: 6 posts, 3 a page. The start-up walk reads both pages
		// (V4: newest to oldest, references only); the walk a day later gets
		// page 1 wholly known (or answered 304, the chain sending its
		// validators, D4) and stops there.
		{"backlog start-up pages", sum.Backlog.Pages, 2},
		{"backlog start-up refs", sum.Backlog.Refs, 6},
		{"backlog a day later (V4 stop)", sum.Backlog.NextPages, 1},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
	if !strings.Contains(out.String(), "0 violations") {
		t.Errorf("the printout does not end with the auditor's zero:\n%s", out.String())
	}
}
