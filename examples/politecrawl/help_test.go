package main

import (
	"flag"
	"reflect"
	"strings"
	"testing"
)

// -h, -help and --help print the command's usage on stdout and exit 0,
// also after a positional argument.
func TestHelp_OnStdoutExit0(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-h"}, {"--help"}, {"help"},
		{"explain", "-h"}, {"explain", "https://news.example/a", "--help"},
		{"verify", "some.warc.gz", "-h"}, {"crawl", "-help"}, {"demo", "-h"}, {"sources", "check", "-h"},
	} {
		r := politecrawl(t, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "-") || r.stderr != "" {
			t.Errorf("politecrawl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if r := politecrawl(t, nil, "explain", "-h"); !strings.Contains(r.stdout, "-kind") {
		t.Errorf("explain -h does not list -kind:\n%s", r.stdout)
	}
}

// Flags may follow positional arguments; "--" ends the flags.
func TestInterspersed_FlagsAfterPositionals(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	kind := fs.String("kind", "article", "")
	once := fs.Bool("once", false, "")
	if err := parseFlags(fs, []string{"https://a.example/", "-kind", "feed", "-once", "--", "-literal"}); err != nil {
		t.Fatal(err)
	}
	if *kind != "feed" || !*once || !reflect.DeepEqual(fs.Args(), []string{"https://a.example/", "-literal"}) {
		t.Errorf("kind %q once %v args %q", *kind, *once, fs.Args())
	}
}

// The test-web flags crawl takes are accepted by verify too, and a
// negative latency is refused.
func TestFlags_VerifyTakesWebFlagsDemoRefusesNegativeLatency(t *testing.T) {
	t.Parallel()
	r := politecrawl(t, nil, "verify", "-connect-to", "127.0.0.1:1", "-admit-private", "127.0.0.0/8", t.TempDir()+"/none.warc")
	if strings.Contains(r.stderr, "flag provided but not defined") {
		t.Errorf("verify refuses -connect-to:\n%s", r.stderr)
	}
	r = politecrawl(t, nil, "demo", "-latency", "-5ms")
	if r.code != 2 || !strings.Contains(r.stderr, "cannot be negative") {
		t.Errorf("demo -latency -5ms: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
