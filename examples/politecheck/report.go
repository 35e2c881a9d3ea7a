package main

// The report: the auditor's verdict on the recorded traffic, what the crawl
// fetched of what it could, and what it cost.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// report is what politecheck prints; its JSON form is the -json output.
type report struct {
	OK       bool         `json:"ok"`
	Scenario scenarioJSON `json:"scenario"`
	Policy   policyJSON   `json:"policy"`
	Crawler  *crawlerJSON `json:"crawler,omitempty"` // nil in -serve mode

	Requests int `json:"requests"`
	Hosts    int `json:"hosts_asked"`

	// WallSeconds is the crawler process's wall time (in -serve mode, from
	// the first request's start to the last request's end).
	WallSeconds float64 `json:"wall_seconds"`
	// SpanSeconds runs from the first request's start to the last's end.
	SpanSeconds float64 `json:"span_seconds"`
	// IdealSeconds is the politeness bound of a minimal crawl of the web;
	// WallOverIdeal is WallSeconds over it.
	IdealSeconds  float64 `json:"ideal_seconds"`
	WallOverIdeal float64 `json:"wall_over_ideal"`
	// BoundSeconds is the politeness bound of the requests the crawler made.
	BoundSeconds float64 `json:"bound_seconds"`

	Pages pagesJSON `json:"pages"`

	Duplicates        int      `json:"duplicates"`
	DuplicateExamples []string `json:"duplicate_examples,omitempty"`
	Conditional       int      `json:"conditional"`
	NotModified       int      `json:"not_modified"`

	Violations int                 `json:"violations"`
	ByRule     map[string]int      `json:"by_rule"`
	Examples   map[string][]string `json:"examples,omitempty"`

	crawlerFailed bool
}

type scenarioJSON struct {
	Hosts           int        `json:"hosts"`
	ArticlesPerHost int        `json:"articles_per_host"`
	RudeShare       float64    `json:"rude_share"`
	CrawlDelayShare float64    `json:"crawl_delay_share"`
	DisallowShare   float64    `json:"disallow_share"`
	LatencyMS       [2]float64 `json:"latency_ms"`
	Seed            int64      `json:"seed"`
	Scheme          string     `json:"scheme"`
}

type policyJSON struct {
	IntervalSeconds float64 `json:"interval_seconds"`
	SlackMS         float64 `json:"slack_ms"`
	MaxConnsPerHost int     `json:"max_conns_per_host"`
	MaxInFlight     int     `json:"max_in_flight"`
	StrictRobots    bool    `json:"strict_robots"`
	HTTPSOnly       bool    `json:"https_only"`
	UserAgent       string  `json:"user_agent,omitempty"`
	KernelStamps    bool    `json:"kernel_stamps"`
}

type crawlerJSON struct {
	Command       []string `json:"command"`
	ExitCode      int      `json:"exit_code"`
	TimedOut      bool     `json:"timed_out"`
	CPUSeconds    float64  `json:"cpu_seconds"`
	UserSeconds   float64  `json:"user_seconds"`
	SystemSeconds float64  `json:"system_seconds"`
	PeakRSSBytes  int64    `json:"peak_rss_bytes"`
}

type pagesJSON struct {
	Expected        int      `json:"expected"`
	Fetched         int      `json:"fetched"`
	Missing         int      `json:"missing"`
	MissingExamples []string `json:"missing_examples,omitempty"`
}

func buildReport(cfg *config, e *env, cr *crawlerRun) *report {
	p := cfg.policy
	audit := e.web.Audit(p)
	reqs := e.web.Requests()
	r := &report{
		Scenario: scenarioJSON{
			Hosts: cfg.sc.Hosts, ArticlesPerHost: cfg.sc.ArticlesPerHost, RudeShare: cfg.sc.RudeShare,
			CrawlDelayShare: cfg.sc.RobotsMix.CrawlDelay, DisallowShare: cfg.sc.RobotsMix.Disallow,
			LatencyMS: [2]float64{ms(cfg.sc.Latency[0]), ms(cfg.sc.Latency[1])}, Seed: cfg.sc.Seed, Scheme: cfg.scheme,
		},
		Policy: policyJSON{
			IntervalSeconds: p.Interval.Seconds(), SlackMS: ms(p.Slack), MaxConnsPerHost: p.MaxConnsPerHost,
			MaxInFlight: p.MaxInFlight, StrictRobots: p.StrictRobots, HTTPSOnly: p.HTTPSOnly, UserAgent: cfg.userAgent,
			KernelStamps: politetest.ExactStarts() && cfg.scheme == "https" && !cfg.proxy,
		},
		Requests:   audit.Requests,
		Hosts:      audit.Hosts,
		Violations: len(audit.Violations),
		ByRule:     map[string]int{},
		Examples:   map[string][]string{},
	}
	for _, rule := range politetest.Rules() {
		vs := audit.Of(rule)
		if len(vs) == 0 {
			continue
		}
		r.ByRule[string(rule)] = len(vs)
		for _, v := range vs[:min(len(vs), cfg.examples)] {
			r.Examples[string(rule)] = append(r.Examples[string(rule)], v.String())
		}
	}

	// The politeness bounds, per host: one interval (or the host's longer
	// Crawl-delay) between requests.
	interval := func(host string) time.Duration {
		d := p.Interval
		if si := e.info.Site(host); si != nil && si.CrawlDelay > d {
			d = si.CrawlDelay
		}
		return d
	}
	var ideal, bound time.Duration
	expected := map[string]map[string]bool{} // host → article path → fetched
	for _, si := range e.info.Sites {
		n := 1 // robots.txt
		if si.Robots == "redirect" {
			n += 2
		}
		if si.Robots != "5xx" {
			n++ // the feed
		}
		if !si.Rude {
			paths := map[string]bool{}
			for _, a := range si.Articles {
				if !disallowed(si.Disallowed, a.Path) {
					paths[a.Path] = false
					n++
				}
			}
			expected[si.Name] = paths
			r.Pages.Expected += len(paths)
		}
		ideal = max(ideal, time.Duration(n-1)*interval(si.Name))
	}
	perHost := map[string]int{}
	seen := map[string]bool{} // "host target" answered 200
	var first, last time.Time
	for _, q := range reqs {
		perHost[q.Host]++
		if first.IsZero() || q.Start.Before(first) {
			first = q.Start
		}
		end := q.Finished
		if end.IsZero() {
			end = q.Arrived
		}
		if end.After(last) {
			last = end
		}
		cond := q.Header.Get("If-None-Match") != "" || q.Header.Get("If-Modified-Since") != ""
		if cond {
			r.Conditional++
		}
		if q.Status == 304 {
			r.NotModified++
		}
		key := q.Host + " " + q.Target
		if q.Method == "GET" && seen[key] && !cond {
			r.Duplicates++
			if len(r.DuplicateExamples) < cfg.examples {
				r.DuplicateExamples = append(r.DuplicateExamples, fmt.Sprintf("%s %s (request %d)", q.Host, q.Target, q.Seq))
			}
		}
		if q.Status == 200 {
			seen[key] = true
			if paths := expected[q.Host]; paths != nil {
				if done, ok := paths[q.Path]; ok && !done {
					paths[q.Path] = true
					r.Pages.Fetched++
				}
			}
		}
	}
	for h, n := range perHost {
		bound = max(bound, time.Duration(n-1)*interval(h))
	}
	r.Pages.Missing = r.Pages.Expected - r.Pages.Fetched
	for _, si := range e.info.Sites {
		for _, a := range si.Articles {
			if done, ok := expected[si.Name][a.Path]; ok && !done && len(r.Pages.MissingExamples) < cfg.examples {
				r.Pages.MissingExamples = append(r.Pages.MissingExamples, "https://"+si.Name+a.Path)
			}
		}
	}

	if !first.IsZero() {
		r.SpanSeconds = last.Sub(first).Seconds()
	}
	r.IdealSeconds, r.BoundSeconds = ideal.Seconds(), bound.Seconds()
	r.WallSeconds = r.SpanSeconds
	if cr != nil {
		r.WallSeconds = cr.Wall.Seconds()
		r.Crawler = &crawlerJSON{
			Command: cr.Command, ExitCode: cr.ExitCode, TimedOut: cr.TimedOut,
			CPUSeconds:  (cr.User + cr.System).Seconds(),
			UserSeconds: cr.User.Seconds(), SystemSeconds: cr.System.Seconds(),
			PeakRSSBytes: cr.PeakRSS,
		}
		r.crawlerFailed = cr.ExitCode != 0 || cr.TimedOut
	}
	if ideal > 0 {
		r.WallOverIdeal = r.WallSeconds / ideal.Seconds()
	}
	r.OK = r.Violations == 0 && !r.crawlerFailed && r.Pages.Missing == 0
	return r
}

// disallowed reports whether path falls under one of the prefixes.
func disallowed(prefixes []string, path string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(path, p) })
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (r *report) exitCode() int {
	switch {
	case r.Violations > 0:
		return exitViolation
	case r.crawlerFailed:
		return exitCrawler
	case r.Pages.Missing > 0:
		return exitIncomplete
	}
	return exitOK
}

func (r *report) write(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	var b strings.Builder
	verdict := "OK"
	switch {
	case r.Violations > 0:
		verdict = fmt.Sprintf("IMPOLITE: %d violations", r.Violations)
	case r.crawlerFailed:
		verdict = "the crawler failed (no violations)"
	case r.Pages.Missing > 0:
		verdict = fmt.Sprintf("INCOMPLETE: %d of %d pages expected were never fetched (no violations)", r.Pages.Missing, r.Pages.Expected)
	}
	fmt.Fprintf(&b, "politecheck: %s, %d requests to %d hosts (web: %d sites × %d articles, seed %d)\n",
		verdict, r.Requests, r.Hosts, r.Scenario.Hosts, r.Scenario.ArticlesPerHost, r.Scenario.Seed)
	if c := r.Crawler; c != nil {
		state := fmt.Sprintf("exit %d", c.ExitCode)
		if c.TimedOut {
			state = "timed out, " + state
		}
		fmt.Fprintf(&b, "crawler: %s; CPU %.2f s (user %.2f, system %.2f); peak RSS %.1f MiB\n",
			state, c.CPUSeconds, c.UserSeconds, c.SystemSeconds, float64(c.PeakRSSBytes)/(1<<20))
	}
	fmt.Fprintf(&b, "time: wall %.2f s, ideal %.2f s", r.WallSeconds, r.IdealSeconds)
	if r.WallOverIdeal > 0 {
		fmt.Fprintf(&b, " (%.3f×)", r.WallOverIdeal)
	}
	fmt.Fprintf(&b, "; requests span %.2f s; bound for the requests made %.2f s\n", r.SpanSeconds, r.BoundSeconds)
	fmt.Fprintf(&b, "pages: %d expected, %d fetched, %d missing\n", r.Pages.Expected, r.Pages.Fetched, r.Pages.Missing)
	for _, m := range r.Pages.MissingExamples {
		fmt.Fprintf(&b, "  missing %s\n", m)
	}
	fmt.Fprintf(&b, "requests: %d duplicates, %d conditional, %d answered 304\n", r.Duplicates, r.Conditional, r.NotModified)
	for _, d := range r.DuplicateExamples {
		fmt.Fprintf(&b, "  duplicate %s\n", d)
	}
	fmt.Fprintf(&b, "policy: interval %v, slack %v (kernel stamps: %v), %d connection(s) and %d request(s) in flight per host\n",
		time.Duration(r.Policy.IntervalSeconds*float64(time.Second)), time.Duration(r.Policy.SlackMS*float64(time.Millisecond)),
		r.Policy.KernelStamps, r.Policy.MaxConnsPerHost, r.Policy.MaxInFlight)
	for _, rule := range politetest.Rules() {
		n := r.ByRule[string(rule)]
		if n == 0 {
			continue
		}
		fmt.Fprintf(&b, "violations of %s: %d\n", rule, n)
		for _, ex := range r.Examples[string(rule)] {
			fmt.Fprintf(&b, "  %s\n", ex)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// requestLine is one line of the -requests file.
type requestLine struct {
	Seq      int       `json:"seq"`
	Conn     int       `json:"conn"`
	Start    time.Time `json:"start"`
	Arrived  time.Time `json:"arrived"`
	Finished time.Time `json:"finished,omitzero"`
	TLS      bool      `json:"tls"`
	Host     string    `json:"host"`
	Method   string    `json:"method"`
	Target   string    `json:"target"`
	Status   int       `json:"status"`
	Agent    string    `json:"user_agent"`
	Bytes    int64     `json:"bytes_sent"`
}

// writeRequests writes every recorded request to path as JSON lines (none
// when path is "").
func writeRequests(path string, e *env) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	for _, q := range e.web.Requests() {
		if err := enc.Encode(requestLine{Seq: q.Seq, Conn: q.Conn, Start: q.Start, Arrived: q.Arrived, Finished: q.Finished,
			TLS: q.TLS, Host: q.Host, Method: q.Method, Target: q.Target, Status: q.Status,
			Agent: q.Header.Get("User-Agent"), Bytes: q.BytesSent}); err != nil {
			f.Close()
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
