package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/politefetch/politefetch/politetest"
)

// TestRunCrawl_ZeroViolations crawls a small scenario web with rude sites
// (429, 503, challenge pages, 5xx robots.txt, disallowed articles) through the
// fetch chain and checks that the auditor reports zero violations (S2, S3,
// S4, D1, D2, D5, V7, V11) and that the counts add up: every feed read once
// then answered 304 (D4), every article of a well-behaved site read, every
// refusal honoured, the backlog stopped by V4.
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
	if traits["robots-5xx"] > 0 {
		wantRobotsRefused += 2 * traits["robots-5xx"] // both feed reads
	}
	tests := []struct {
		name      string
		got, want int
	}{
		{"sites", sum.Sites, len(info.Sites)},
		{"feeds parsed", sum.FeedsParsed, wantParsed},
		{"feeds failed", sum.FeedsFailed, wantFailed},
		{"304s on the second read (D4)", sum.FeedsNotModified, wantParsed},
		{"articles read", sum.ArticlesRead, wantRead},
		{"articles failed", sum.ArticlesFailed, 0},
		{"articles accounted for", sum.ArticlesRead + sum.ArticlesRefused + sum.ArticlesFailed, sum.Announced + sum.Backlog.New},
		{"refused by robots.txt", sum.RefusedByUs["robots"], wantRobotsRefused},
		{"server 429s", sum.RefusedByServer["429"], traits["429"]},
		{"server 503s", sum.RefusedByServer["503"], traits["503"]},
		{"cooling down", len(sum.CooledDown), traits["429"] + traits["503"] + traits["challenge"]},
		{"progress lines", strings.Count(out.String(), "\n["), len(info.Sites)},
		{"requests audited", sum.Audit.Requests, sum.Requests},
		// The backlog: 6 posts, 3 a page. The start-up walk reads both pages
		// (V4: newest to oldest, references only); the next pass gets page 1
		// answered 304 (the chain sends its validators, D4) and stops there.
		{"backlog pages announced", sum.Backlog.TotalPages, 2},
		{"backlog start-up pages", sum.Backlog.Pages, 2},
		{"backlog start-up refs", sum.Backlog.Refs, 6},
		{"backlog refs not in the feed", sum.Backlog.New, 0},
		{"backlog next-pass pages (V4 stop)", sum.Backlog.NextPages, 1},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
	if !strings.Contains(sum.Backlog.Stopped, "304") {
		t.Errorf("next backlog pass stopped with %q, want page 1 unchanged (304)", sum.Backlog.Stopped)
	}
	if !strings.Contains(out.String(), "0 violations") {
		t.Errorf("the printout does not end with the auditor's zero:\n%s", out.String())
	}
}
