package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
)

// An override may only make the policy more polite, and fetch decides it
// (Policy.Tighten): each of the config's seven policy keys, set less
// politely than the strict-news preset, is refused by `sources check` and by
// `crawl` before anything is opened, exit 2, with fetch's own words for the
// rule at the key's line; the refusal matches fetch.ErrLessPolite. The
// preset's own values, restated, are accepted.
func TestOverrides_LessPoliteRefusedAtCheckAndCrawl(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ key, less, same, why string }{
		{"interval", "500ms", "1s", "500ms is shorter than the policy's 1s"},
		{"interval_max", "500ms", "1s", "500ms is below the interval band's 1s"},
		{"robots_ttl", "2h", "1h", "2h0m0s: from 1m0s to the policy's 1h0m0s"},
		{"robots_retry", "1m", "15m", "1m0s is shorter than the policy's 15m0s"},
		{"max_redirects", "6", "5", "6: from 1 to the policy's 5"},
		{"timeout", "2m", "1m", "2m0s: from 1s to the policy's 1m0s"},
		{"max_bytes", "33554432", "16777216", "33554432: from 1024 to the policy's 16777216"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			edit := func(v string) string {
				return strings.Replace(minimalConfig, "  preset: strict-news\n", "  preset: strict-news\n  "+tc.key+": "+v+"\n", 1)
			}
			if _, err := ParseConfig("c.yaml", []byte(edit(tc.same))); err != nil {
				t.Errorf("the preset's own value restated: %v", err)
			}
			_, err := ParseConfig("c.yaml", []byte(edit(tc.less)))
			if !errors.Is(err, fetch.ErrLessPolite) || !errors.Is(err, ErrConfig) {
				t.Errorf("%s: %s: %v, want a configuration error matching fetch.ErrLessPolite", tc.key, tc.less, err)
			}
			path := filepath.Join(dir, tc.key+".yaml")
			if err := os.WriteFile(path, []byte(edit(tc.less)), 0o600); err != nil {
				t.Fatal(err)
			}
			want := path + ":8: policy." + tc.key + ": override would make the policy less polite: " + tc.why + " (the strict-news preset)"
			for _, args := range [][]string{{"sources", "check", "-config", path}, {"crawl", "-once", "-config", path}} {
				r := politecrawl(t, nil, args...)
				if r.code != 2 || !strings.Contains(r.stderr, want) {
					t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", args[0], r.code, r.stderr, want)
				}
				if r.stdout != "" {
					t.Errorf("%s printed before refusing: %q", args[0], r.stdout)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, tc.key+".db")); err == nil {
				t.Errorf("crawl created its store before refusing the config")
			}
		})
	}
}

// The crawl's limits are the crawler's to judge (crawl.Crawler.CheckLimits):
// each out of bounds is refused at its key with crawl's reason, and the
// refusal matches crawl.ErrInvalidLimit.
func TestConfig_CrawlLimitsJudgedByTheCrawler(t *testing.T) {
	t.Parallel()
	for key, v := range map[string]string{"backlog_interval": "30m", "refresh_guard": "30s", "max_reads": "4", "max_failures": "11"} {
		text := strings.Replace(minimalConfig, "policy:\n", "crawl:\n  "+key+": "+v+"\npolicy:\n", 1)
		_, err := ParseConfig("c.yaml", []byte(text))
		if !errors.Is(err, crawl.ErrInvalidLimit) || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "c.yaml:7: crawl."+key+": ") {
			t.Errorf("crawl.%s: %s: %v, want a configuration error at its line matching crawl.ErrInvalidLimit", key, v, err)
		}
	}
}
