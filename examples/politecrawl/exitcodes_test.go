package main

import (
	"net"
	"os"
	"strings"
	"testing"
)

// closedPort is a loopback address where nothing listens: every host
// mapped there is unreachable (connection refused), and nothing leaves the
// machine.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// A crawl that could read none of its sources exits 1, not 0, and names
// each host with the cause in words and the next try; run again at once,
// while robots.txt's failure is cached, it says the same instead of
// nothing (docs/exit-codes.md).
func TestCrawl_UnreachableSourcesExit1WithTheirCause(t *testing.T) {
	t.Parallel()
	store := t.TempDir() + "/crawl.db"
	args := []string{"crawl", "-config", readyConfig("strict-news"), "-store", store, "-once",
		"-connect-to", closedPort(t), "-admit-private", "127.0.0.0/8"}
	for run := range 2 {
		r := politecrawl(t, nil, args...)
		if r.code != 1 {
			t.Fatalf("run %d: exit %d, want 1\n%s%s", run, r.code, r.stdout, r.stderr)
		}
		for _, want := range []string{
			"2 of 2 sources could not be read",
			"news-1.example (news-1): robots.txt unreachable: connection refused; next try ",
			"news-2.example (news-2): robots.txt unreachable: connection refused; next try ",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("run %d: the summary lacks %q:\n%s", run, want, r.stdout)
			}
		}
		if run == 0 && !strings.Contains(r.stdout, "robots.txt read 2 times") {
			t.Errorf("the robots.txt fetches are not counted apart:\n%s", r.stdout)
		}
	}
}

// Every due source read: exit 0, nothing listed as failed. A second pass at
// once finds nothing due, which is no failure either.
func TestCrawl_AllReadExit0AndNothingDueExit0(t *testing.T) {
	t.Parallel()
	sw := newSimWeb(t, 3, 2)
	store := t.TempDir() + "/crawl.db"
	args := append([]string{"crawl", "-config", readyConfig("strict-news"), "-store", store, "-once"}, sw.flags...)
	for run := range 2 {
		r := politecrawl(t, nil, args...)
		if r.code != 0 || strings.Contains(r.stdout, "could not be read") {
			t.Fatalf("run %d: exit %d\n%s%s", run, r.code, r.stdout, r.stderr)
		}
		if run == 1 && !strings.Contains(r.stdout, "not due yet: news-1 at ") {
			t.Errorf("the second run does not say its sources are not due:\n%s", r.stdout)
		}
	}
}

// A crawl that cannot run at all exits 2.
func TestCrawl_CannotRunExit2(t *testing.T) {
	t.Parallel()
	r := politecrawl(t, nil, "crawl", "-config", t.TempDir()+"/missing.yaml", "-once")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// report, export and verify open the store read-only: each failure names
// its cause, and a store a crawl wrote reads without being written.
func TestReadOnlyCommands_NameTheCause(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notStore := dir + "/notes.db"
	if err := os.WriteFile(notStore, []byte("these are notes, not a database; long enough to be read as a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := readyConfig("strict-news")
	for _, cmd := range [][]string{{"report"}, {"export", "-format", "jsonl"}, {"verify"}} {
		for _, tc := range []struct{ store, want string }{
			{dir + "/no-such-dir/crawl.db", "no such directory"},
			{dir + "/crawl.db", "no such file"},
			{notStore, "corrupt"},
		} {
			r := politecrawl(t, nil, append(cmd, "-config", cfg, "-store", tc.store)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "(14)") {
				t.Errorf("%s -store %s: exit %d, want 2 saying %q:\n%s", cmd, tc.store, r.code, tc.want, r.stderr)
			}
		}
	}
	if _, err := os.Stat(dir + "/crawl.db"); err == nil {
		t.Error("a read-only command created the store")
	}
}
