package main

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/politefetch/politefetch/fetch"
)

// The fetch client's events, as the crawl command's observer takes them:
// the live line names the host requests have waited for longest (and how
// many others), until their slots come; Prometheus gets the pacing waits
// as a histogram, the bytes 304s saved, robots.txt fetches by status class
// and the chain's refusals by reason, none labelled with a host or a URL.
func TestObserver_RequestEventsLiveLineAndMetrics(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	now := t0
	o := newObserver(time.Second, func() time.Time { return now })
	o.m = newPromMetrics()
	ev := func(e fetch.Event) {
		if e.At.IsZero() {
			e.At = now
		}
		o.requestEvent(e)
	}
	a, b := "https://news.example/a", "https://blog.example/b"
	ev(fetch.Event{Kind: fetch.EventSlot, Request: fetch.KindRobots, Host: "news.example", URL: "https://news.example/robots.txt"})
	ev(fetch.Event{Kind: fetch.EventRobots, Request: fetch.KindRobots, Host: "news.example", Status: 200, Bytes: 40})
	ev(fetch.Event{Kind: fetch.EventRobots, Request: fetch.KindRobots, Host: "blog.example", Err: errors.New("no such host")})
	ev(fetch.Event{Kind: fetch.EventWaiting, Host: "news.example", URL: a})
	now = now.Add(100 * time.Millisecond)
	ev(fetch.Event{Kind: fetch.EventWaiting, Host: "blog.example", URL: b})
	ev(fetch.Event{Kind: fetch.EventWaiting, Host: "news.example", URL: a + "2"})

	line := statusLine(o.snapshot(), time.Minute)
	if !strings.HasSuffix(line, " | waiting for news.example's slot (+1 more)") {
		t.Errorf("live line %q: want it to end with the host waited for longest and one more", line)
	}
	now = now.Add(900 * time.Millisecond)
	ev(fetch.Event{Kind: fetch.EventSlot, Host: "news.example", URL: a, Wait: time.Second})
	ev(fetch.Event{Kind: fetch.EventSlot, Host: "news.example", URL: a + "2", Wait: 900 * time.Millisecond})
	if s := o.snapshot(); s.WaitingFor != "blog.example" || s.WaitingOthers != 0 {
		t.Errorf("after news.example's slots: waiting for %q (+%d), want blog.example alone", s.WaitingFor, s.WaitingOthers)
	}
	ev(fetch.Event{Kind: fetch.EventSlot, Host: "blog.example", URL: b, Err: errors.New("context deadline exceeded")})
	if s := o.snapshot(); s.WaitingFor != "" || len(o.waiting) != 0 || len(o.waitingReqs) != 0 {
		t.Errorf("every slot given or refused, still waiting: %q, %v, %v", s.WaitingFor, o.waiting, o.waitingReqs)
	}
	if line := statusLine(o.snapshot(), time.Minute); strings.Contains(line, "waiting for") {
		t.Errorf("live line %q names a wait that is over", line)
	}
	ev(fetch.Event{Kind: fetch.EventNotModified, Host: "news.example", URL: a, Status: 304, Saved: 12000})
	ev(fetch.Event{Kind: fetch.EventRefused, Host: "news.example", URL: a, Reason: fetch.Robots})
	ev(fetch.Event{Kind: fetch.EventRefused, Host: "news.example", URL: a, Reason: fetch.Robots})

	rec := httptest.NewRecorder()
	o.handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	h := fams["politecrawl_pacing_wait_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 3 || h.GetSampleSum() != 1.9 {
		t.Errorf("pacing waits: %d samples, sum %v; want the 3 slots granted (0 s, 1 s, 0.9 s), sum 1.9", h.GetSampleCount(), h.GetSampleSum())
	}
	if v := fams["politecrawl_not_modified_saved_bytes_total"].GetMetric()[0].GetCounter().GetValue(); v != 12000 {
		t.Errorf("bytes saved by 304s: %v, want 12000", v)
	}
	byLabel := func(name string) map[string]float64 {
		out := map[string]float64{}
		for _, m := range fams[name].GetMetric() {
			for _, l := range m.GetLabel() {
				out[l.GetValue()] = m.GetCounter().GetValue()
			}
		}
		return out
	}
	if got := byLabel("politecrawl_robots_fetches_total"); got["2xx"] != 1 || got["error"] != 1 || len(got) != 2 {
		t.Errorf("robots.txt fetches %v, want one 2xx and one error", got)
	}
	if got := byLabel("politecrawl_requests_refused_total"); got[fetch.Robots.String()] != 2 || len(got) != 1 {
		t.Errorf("refusals %v, want 2 for %q", got, fetch.Robots.String())
	}
}
