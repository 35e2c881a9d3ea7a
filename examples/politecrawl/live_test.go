package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
)

// The live line: carriage return, the counts per state and the throughput
// against the politeness bound, erased to its end, no newline.
func TestLive_RenderLine(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	renderLive(&b, snapshot{Due: 1, InPass: 2, Deposited: 7, Excerpted: 1, Failed: 1, Refused: 3, Cooling: 1, Suspended: 1,
		Requests: 40, Rate: 1.9, Bound: 2, ActiveHosts: 2, NotModified: 4}, 61*time.Second)
	got := b.String()
	want := "\r1m1s  due 1  in pass 2 | deposited 7  excerpts 1  failed 1  refused 3 | hosts cooling 1  suspended 1 | 40 reads, 1.9/s (bound 2.0/s on 2 hosts) | 304 4\x1b[K"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// The observer's bound is one request per interval per active host, and its
// rate counts the reads of the last window.
func TestLive_RateAndBound(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	o := newObserver(time.Second, func() time.Time { return now })
	for i := range 20 {
		o.crawlEvent(crawl.Event{Kind: crawl.EventDeposited, Host: []string{"a.example", "b.example"}[i%2], Bytes: 100})
	}
	s := o.snapshot()
	if s.Requests != 20 || s.Deposited != 20 || s.Wire != 2000 || s.ActiveHosts != 2 || s.Bound != 2 || s.Rate != 2 {
		t.Errorf("snapshot %+v", s)
	}
	now = now.Add(window + time.Second)
	if s := o.snapshot(); s.Rate != 0 || s.ActiveHosts != 0 {
		t.Errorf("after the window: %+v", s)
	}
}

// Neither a pipe nor a regular file is a terminal: no live line there.
func TestLive_NotATerminal(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) {
		t.Error("a pipe is taken for a terminal")
	}
	f, err := os.Create(t.TempDir() + "/log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) || isTerminalWriter(&bytes.Buffer{}) {
		t.Error("a file or a buffer is taken for a terminal")
	}
	if strings.Contains(statusLine(snapshot{}, 0), "\n") {
		t.Error("the status line holds a newline")
	}
}
