package politetest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRefereeRobots(t *testing.T) {
	t.Parallel()
	groups := "User-agent: PoliteBot\nUser-agent: OtherBot\nDisallow: /bots/\nCrawl-delay: 0.5\n\nUser-agent: *\nDisallow: /\n"
	for _, tc := range []struct {
		name, body, agent, target string
		want                      bool
	}{
		{"empty", "", "PoliteBot", "/x", true},
		{"robots.txt always allowed", "User-agent: *\nDisallow: /\n", "PoliteBot", "/robots.txt", true},
		{"disallow prefix", "User-agent: *\nDisallow: /private/\n", "PoliteBot", "/private/a", false},
		{"other path", "User-agent: *\nDisallow: /private/\n", "PoliteBot", "/public", true},
		{"longest match allow", "User-agent: *\nDisallow: /private/\nAllow: /private/ok$\n", "X", "/private/ok", true},
		{"$ anchors", "User-agent: *\nDisallow: /private/\nAllow: /private/ok$\n", "X", "/private/ok/more", false},
		{"tie: allow wins", "User-agent: *\nDisallow: /a\nAllow: /a\n", "X", "/a", true},
		{"wildcard", "User-agent: *\nDisallow: /*.pdf$\n", "X", "/files/x.pdf", false},
		{"wildcard anchored miss", "User-agent: *\nDisallow: /*.pdf$\n", "X", "/files/x.pdf?x=1", true},
		{"query", "User-agent: *\nDisallow: /search?q=\n", "X", "/search?q=cats", false},
		{"empty disallow", "User-agent: *\nDisallow:\n", "X", "/anything", true},
		{"agent group, case-insensitive", groups, "politebot", "/news/", true},
		{"agent group disallows", groups, "PoliteBot", "/bots/x", false},
		{"second agent in a group", groups, "OtherBot", "/bots/x", false},
		{"fallback to *", groups, "ThirdBot", "/news/", false},
		{"comment", "User-agent: * # all\nDisallow: /x # no\n", "X", "/x", false},
	} {
		if got := parseRobots(tc.body, tc.agent).allowed(tc.target); got != tc.want {
			t.Errorf("%s: allowed(%s) = %v, want %v", tc.name, tc.target, got, tc.want)
		}
	}
	if d := parseRobots(groups, "PoliteBot").crawlDelay; d != 500*time.Millisecond {
		t.Errorf("PoliteBot crawl-delay %v", d)
	}
	if d := parseRobots("User-agent: *\nCrawl-delay: 1e300\n", "X").crawlDelay; d != maxCrawlDelay {
		t.Errorf("huge crawl-delay %v, want the cap", d)
	}
	if d := parseRobots(groups, "ThirdBot").crawlDelay; d != 0 {
		t.Errorf("* crawl-delay %v", d)
	}
}

func FuzzParseRobots(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "robots", "*.txt"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), "PoliteBot", "/private/ok")
	}
	f.Fuzz(func(t *testing.T, body, agent, target string) {
		r := parseRobots(body, agent)
		if r.crawlDelay < 0 {
			t.Fatalf("negative crawl-delay %v", r.crawlDelay)
		}
		if !r.allowed("/robots.txt") {
			t.Fatal("robots.txt disallowed")
		}
		if again := parseRobots(body, agent); again.allowed(target) != r.allowed(target) || again.crawlDelay != r.crawlDelay {
			t.Fatal("not deterministic")
		}
		if len(r.rules) == 0 && !r.allowed(target) {
			t.Fatal("no rules, yet disallowed")
		}
	})
}
