package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/store/sqlite"
)

// demoStoreLine is the summary's store line.
var demoStoreLine = regexp.MustCompile(`known from the store: (\d+) references, (\d+) deposits; this run: (\d+) new deposits, (\d+) × 304`)

// demoStoreRun runs the demo on the file and returns its output and the
// store line's four numbers: references and deposits known at the start,
// deposits added, 304s.
func demoStoreRun(t *testing.T, path string) (string, [4]int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run([]string{"demo", "-sites", "8", "-articles", "3", "-rude", "0.4", "-seed", "4", "-store", path}, &out, &errOut)
	s := out.String()
	if err != nil {
		t.Fatalf("demo -store: %v\n%s%s", err, s, errOut.String())
	}
	if !strings.Contains(s, "0 violations: polite") {
		t.Fatalf("the auditor's zero is missing:\n%s", s)
	}
	m := demoStoreLine.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no store line in the summary:\n%s", s)
	}
	var n [4]int
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	return s, n
}

// demoDeposits lists the file's deposits, source by source, as
// "source digest" lines.
func demoDeposits(t *testing.T, path string) []string {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got []string
	for i := 1; i <= 8; i++ {
		src := fmt.Sprintf("news-%d.example", i)
		ds, err := db.Deposits().List(ctx, src, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			got = append(got, d.Source+" "+d.Digest)
		}
	}
	slices.Sort(got)
	return got
}

// The demo on an SQLite file, twice with the same seed (issue 14's and
// 15's done-when): the second run, on a new server serving the same web,
// finds the first run's references in the file and deposits nothing new
// (V12: nothing read twice), its feeds answer 304 to the validators the
// file kept (D4), the refusals the file remembers are still honoured, and
// the auditor finds nothing in either run. The file still holds exactly
// the first run's deposits.
func TestDemoStore_V12_D4_SecondRunKnowsTheFirst(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "demo.db")

	out1, n1 := demoStoreRun(t, path)
	t.Log("first run:\n" + out1)
	if n1[0] != 0 || n1[1] != 0 {
		t.Errorf("the first run on a new file knew %d references and %d deposits", n1[0], n1[1])
	}
	if n1[2] == 0 {
		t.Fatalf("the first run deposited nothing:\n%s", out1)
	}
	first := demoDeposits(t, path)
	if len(first) != n1[2] {
		t.Errorf("the file holds %d deposits, the first run reported %d", len(first), n1[2])
	}

	out2, n2 := demoStoreRun(t, path)
	t.Log("second run:\n" + out2)
	if n2[0] < n1[2] {
		t.Errorf("the second run knew %d references from the file, fewer than the first run's %d deposits", n2[0], n1[2])
	}
	if n2[1] != n1[2] {
		t.Errorf("the second run found %d deposits in the file, the first made %d", n2[1], n1[2])
	}
	if n2[2] != 0 {
		t.Errorf("the second run deposited %d articles again", n2[2])
	}
	if n2[3] == 0 || !strings.Contains(out2, "feed 304") {
		t.Errorf("the second run's start-up feeds did not answer 304 to the validators kept:\n%s", out2)
	}
	if strings.Contains(out2, "feed 0 items") {
		t.Errorf("a feed parsed with nothing in it on the second run (a 200 where a 304 was due):\n%s", out2)
	}
	if got := demoDeposits(t, path); !slices.Equal(got, first) {
		t.Errorf("the file's deposits changed on the second run:\nfirst  %q\nsecond %q", first, got)
	}
}

// The demo's flags that cannot work are refused before anything starts:
// -store without the chain (the plain client keeps no state), a store that
// cannot be opened (named, with what the system said), a negative
// -interval, a -timeout that leaves no time.
func TestDemoStore_BadFlagsRefused(t *testing.T) {
	t.Parallel()
	blocked := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "-client", "plain", "-store", filepath.Join(t.TempDir(), "x.db")}, "-store needs -client=chain"},
		{[]string{"demo", "-sites", "1", "-store", filepath.Join(blocked, "demo.db")}, "demo: store " + filepath.Join(blocked, "demo.db") + ": "},
		{[]string{"demo", "-interval", "-1s"}, "-interval -1s: want a positive duration"},
		{[]string{"demo", "-timeout", "0s"}, "-timeout 0s: want a positive duration"},
	} {
		var out, errOut bytes.Buffer
		err := run(tc.args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// Issue 15's flags: a -timeout that runs out says so in a person's words
// (no "feed feed: get …"), and the summary's pacing note follows -interval.
func TestDemoFlags_TimeoutAndIntervalSaidRight(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	// Ten sites, each needing robots.txt, its feed and its articles 100 ms
	// apart: 300 ms always runs out mid-crawl.
	err := run([]string{"demo", "-sites", "10", "-articles", "3", "-timeout", "300ms"}, &out, &errOut)
	if err == nil {
		t.Fatalf("demo -timeout 300ms ended without an error:\n%s", out.String())
	}
	if !strings.Contains(err.Error(), "-timeout ran out before the crawl ended") {
		t.Errorf("error %q does not say the -timeout ran out", err)
	}
	if s := out.String(); strings.Contains(s, "feed feed:") || strings.Contains(s, "feed: get") {
		t.Errorf("a progress line repeats the feed reader's error prefix:\n%s", s)
	}
	if got := brief(fmt.Errorf("feed: get https://news-1.example/feed.xml: %w", context.DeadlineExceeded)); got != "not read: -timeout ran out" {
		t.Errorf("brief(deadline) = %q", got)
	}

	for _, tc := range []struct {
		interval time.Duration
		want     string
	}{
		{DefaultCrawlInterval, "pacing 100ms per site, the policy's 1 s scaled down)"},
		{300 * time.Millisecond, "pacing 300ms per site, the policy's 1 s scaled down)"},
		{time.Second, "pacing 1s per site, the policy's 1 s)"},
		{2 * time.Second, "pacing 2s per site, longer than the policy's 1 s)"},
	} {
		var b bytes.Buffer
		(&CrawlSummary{Interval: tc.interval, RefusedByUs: map[string]int{}, RefusedByServer: map[string]int{}}).Print(&b)
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("-interval %v: summary lacks %q:\n%s", tc.interval, tc.want, b.String())
		}
	}
}

// A run on a file is excused robots-first only on hosts whose robots.txt
// the file held before the run, and only while none of them was asked for
// a path the scenario's robots.txt disallows.
func TestDemoStore_RobotsFirstExcusedOnlyForKnownRobots(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{
		Hosts: 2, ArticlesPerHost: 1, Seed: 1, RobotsMix: politetest.RobotsMix{Disallow: 1},
	})
	get := func(host, path string) {
		t.Helper()
		req, err := http.NewRequest("GET", "https://"+host+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", DemoName+"/"+DemoVersion)
		res, err := web.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	a, b := info.Sites[0], info.Sites[1]
	if len(a.Disallowed) == 0 {
		t.Fatalf("%s disallows nothing: the scenario does not test the rule", a.Name)
	}
	get(a.Name, "/feed.xml")

	var sum StoreSummary
	if rep := auditResumed(web, info, politetest.Policy{}, map[string]bool{a.Name: true}, &sum); !rep.OK() || sum.RobotsExcused != 1 {
		t.Errorf("a feed of a host whose robots.txt the file held: excused %d, report %v", sum.RobotsExcused, rep)
	}
	sum = StoreSummary{}
	if rep := auditResumed(web, info, politetest.Policy{}, map[string]bool{b.Name: true}, &sum); rep.OK() || sum.RobotsExcused != 0 {
		t.Errorf("a host whose robots.txt the file did not hold was excused: %v", rep)
	}
	get(a.Name, a.Disallowed[0]+"x")
	sum = StoreSummary{}
	if rep := auditResumed(web, info, politetest.Policy{}, map[string]bool{a.Name: true}, &sum); rep.OK() || len(sum.Forbidden) != 1 {
		t.Errorf("a disallowed path on a known host: forbidden %q, report %v", sum.Forbidden, rep)
	}
}
