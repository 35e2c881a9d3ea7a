package main

// crawl -feeds FILE: a list of feed URLs, one a line, each crawled as a
// source of its own with the defaults below, so a first-time user (or
// politecheck) crawls a list without writing a source per feed.

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/politefetch/politefetch/crawl"
)

// feedInterval is a listed feed's interval: the strictest policy's floor.
const feedInterval = 15 * time.Minute

// readFeedList reads path: one https feed URL a line; blank lines and lines
// starting with "#" are skipped. Each becomes an active source named after
// its host (news-1.example, then news-1.example-2 for a second feed of the
// same host), admitting that host alone, read every 15 minutes, keeping
// under the config's policy, keeping full text only when fullText says the operator's licence allows it
// (otherwise each story is kept as the feed describes it).
func readFeedList(path string, cfg *Config, fullText bool) ([]crawl.Source, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-feeds: %w", err)
	}
	var out []crawl.Source
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u, err := url.Parse(line)
		if err != nil || u.Scheme != "https" || u.Hostname() == "" {
			return nil, fmt.Errorf("-feeds %s:%d: %q is not an https feed URL", path, n, line)
		}
		host := strings.ToLower(u.Hostname())
		seen[host]++
		id := host
		if seen[host] > 1 {
			id = fmt.Sprintf("%s-%d", host, seen[host])
		}
		s := crawl.Source{
			ID: id, Name: host,
			Trigger:  crawl.Trigger{Feeds: []string{line}},
			Admitted: []string{u.Host},
			Interval: crawl.Duration(feedInterval),
			FullText: fullText,
			Policy:   crawl.PolicySpec{Preset: cfg.Policy.Preset, Interval: cfg.Policy.Interval},
			Active:   true,
		}
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("-feeds %s:%d: %w", path, n, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("-feeds %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-feeds %s: no feed URL in the file", path)
	}
	return out, nil
}
