package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

// The demo with the plain client: the web is printed one line per site,
// every site gets one line of crawl, and the auditor finds nothing (D1, D2,
// V9, V11: robots.txt first and obeyed, one request at a time, three
// headers).
func TestDemoPlainClient(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	err := run([]string{"demo", "-client", "plain", "-sites", "10", "-rude", "0.5", "-seed", "4"}, &out, &errOut)
	if err != nil {
		t.Fatalf("demo: %v\n%s%s", err, out.String(), errOut.String())
	}
	s := out.String()
	for _, want := range []string{
		"10 sites, 5 articles each, 5 rude (seed 4)",
		"news-10.example",
		"RUDE:",
		"politetest audit: OK",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if n := strings.Count(s, "robots.txt "); n != 10 {
		t.Errorf("%d crawl lines, want one per site:\n%s", n, s)
	}
}

func TestDemoFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"demo", "-client", "magic"}, "-client must be chain or plain"},
		{[]string{"demo", "extra"}, "unexpected arguments"},
	} {
		var out, errOut bytes.Buffer
		err := run(tc.args, &out, &errOut)
		if err == nil || (tc.want == "" && !errors.Is(err, flag.ErrHelp)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestPlainRobots(t *testing.T) {
	t.Parallel()
	body := "User-agent: PoliteDemo\nDisallow: /feed\nAllow: /feed.xml\nCrawl-delay: 0.5\n\nUser-agent: *\nDisallow: /\n"
	for _, tc := range []struct {
		body, agent, path string
		allowed           bool
		delay             time.Duration
	}{
		{body, "PoliteDemo", "/feed.xml", true, 500 * time.Millisecond},
		{body, "PoliteDemo", "/feed/other", false, 500 * time.Millisecond},
		{body, "Other", "/feed.xml", false, 0},
		{"", "PoliteDemo", "/feed.xml", true, 0},
	} {
		allowed, delay := plainRobots(tc.body, tc.agent, tc.path)
		if allowed != tc.allowed || delay != tc.delay {
			t.Errorf("plainRobots(%q, %s) = %v, %v; want %v, %v", tc.agent, tc.path, allowed, delay, tc.allowed, tc.delay)
		}
	}
}
