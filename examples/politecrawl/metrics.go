package main

// What the crawl did, counted once and shown three ways: the live view on a
// terminal, Prometheus metrics (-metrics), and the summary at the end. An
// observer receives the crawler's events (crawl.Crawler.OnEvent), the
// refusal ledger's (fetch.WithLedgerEvents) and the fetch client's for each
// request (fetch.WithObserver: see requests.go), and keeps per-state
// tallies. Reads are the ones the crawler reports: trigger reads, 304s and
// article reads; robots.txt fetches and pacing waits come from the client.
// Labels are bounded sets (status classes, reasons, event kinds, states),
// never a URL or a host.

import (
	"context"
	"errors"
	"net/http"
	neturl "net/url"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/crawl"
)

// observer tallies a crawl. It is safe for concurrent use.
type observer struct {
	clock    func() time.Time
	interval time.Duration // the policy's per-host interval: the bound

	mu            sync.Mutex
	requests      int64
	wire          int64
	notModified   int64
	byClass       map[string]int64
	refusals      map[string]int64
	deposited     int64
	excerpted     int64
	failed        int64
	abandoned     int64 // reads cut short by the run's end (Ctrl-C)
	refused       int64
	excluded      int64
	passes        int64
	due           int                    // active sources due now and not in a pass (set by watchDue)
	inPass        map[string]bool        // sources in a pass now
	cooling       map[string]time.Time   // host → cool-down end
	suspended     map[string]time.Time   // host → next re-check
	recent        []time.Time            // request ends in the last window
	recentHosts   map[string]time.Time   // host → last request end
	waiting       map[string]waitingHost // host → the requests waiting for its slot (see requests.go)
	waitingReqs   map[string]int         // host and URL → requests waiting
	savedBy304    int64                  // wire bytes 304s saved
	robotsFetches int64

	m *promMetrics // nil without -metrics
}

func newObserver(interval time.Duration, now func() time.Time) *observer {
	if now == nil {
		now = time.Now
	}
	return &observer{
		clock: now, interval: interval,
		byClass: map[string]int64{}, refusals: map[string]int64{},
		inPass: map[string]bool{}, cooling: map[string]time.Time{}, suspended: map[string]time.Time{},
		recentHosts: map[string]time.Time{}, waiting: map[string]waitingHost{}, waitingReqs: map[string]int{},
	}
}

// window is the span throughput is measured over.
const window = 10 * time.Second

// crawlEvent is the crawler's OnEvent.
func (o *observer) crawlEvent(e crawl.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch e.Kind {
	case crawl.EventPassStarted:
		o.inPass[e.Source] = true
	case crawl.EventPassEnded:
		delete(o.inPass, e.Source)
		o.passes++
	case crawl.EventTriggerRead:
		o.read(e.Host, http.StatusOK, 0) // a feed or API read; its size is not reported
	case crawl.EventNotModified:
		o.read(e.Host, http.StatusNotModified, 0)
	case crawl.EventDeposited:
		o.read(e.Host, http.StatusOK, e.Bytes)
		o.deposited++
	case crawl.EventExcerpted:
		o.excerpted++
	case crawl.EventExcluded:
		o.read(e.Host, http.StatusOK, 0)
		o.excluded++
	case crawl.EventRefused:
		o.refused++
		o.refusals[reasonLabel(e.Reason)]++
	case crawl.EventFailed, crawl.EventMismatch:
		if e.Kind == crawl.EventFailed && errors.Is(e.Err, context.Canceled) {
			o.abandoned++ // the run was ended (Ctrl-C): not the publisher's failure, nor ours
			break
		}
		if e.Kind == crawl.EventMismatch {
			o.read(e.Host, http.StatusOK, 0)
		} else if e.Status != 0 {
			o.read(e.Host, e.Status, 0) // read, but not a complete 200
		}
		o.failed++
		if e.Reason != "" {
			o.refusals[reasonLabel(e.Reason)]++
		}
	}
	if o.m != nil {
		o.m.events.WithLabelValues(e.Kind.String()).Inc()
		switch e.Kind {
		case crawl.EventDeposited:
			o.m.deposits.WithLabelValues("full").Inc()
		case crawl.EventExcerpted:
			o.m.deposits.WithLabelValues("excerpt").Inc()
		case crawl.EventRefused, crawl.EventFailed:
			if e.Reason != "" {
				o.m.refusals.WithLabelValues(reasonLabel(e.Reason)).Inc()
			}
		case crawl.EventPassStarted:
			o.m.passes.WithLabelValues("started").Inc()
		case crawl.EventPassEnded:
			o.m.passes.WithLabelValues("ended").Inc()
		case crawl.EventPassStopped:
			o.m.passes.WithLabelValues("stopped").Inc()
		case crawl.EventLeaseLost:
			o.m.passes.WithLabelValues("lease-lost").Inc()
		}
		o.m.inPass.Set(float64(len(o.inPass)))
	}
}

// reasonLabel keeps refusal reasons a bounded set: the chain's reasons are
// short words, the server's are statuses; anything else is "other".
func reasonLabel(r string) string {
	if len(r) > 24 {
		return "other"
	}
	for _, c := range r {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ' ') {
			return "other"
		}
	}
	return r
}

// ledgerEvent is the fetch client's WithLedgerEvents.
func (o *observer) ledgerEvent(e backoff.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch e.Type {
	case backoff.EventRefused, backoff.EventCooledDown:
		if !e.Until.IsZero() {
			o.cooling[e.Host] = e.Until
		}
	case backoff.EventSuspended:
		o.suspended[e.Host] = e.NextCheck
		if !e.Until.IsZero() {
			o.cooling[e.Host] = e.Until
		}
	case backoff.EventCleared:
		delete(o.cooling, e.Host)
		delete(o.suspended, e.Host)
	}
	if o.m != nil {
		o.m.ledger.WithLabelValues(ledgerEventName(e.Type)).Inc()
	}
}

func ledgerEventName(t backoff.EventType) string {
	switch t {
	case backoff.EventRefused:
		return "refused"
	case backoff.EventSuspended:
		return "suspended"
	case backoff.EventCooledDown:
		return "cooled-down"
	case backoff.EventRecheck:
		return "recheck"
	case backoff.EventCleared:
		return "cleared"
	}
	return "other"
}

// read counts one read of host that ended with status, bytes the envelope
// kept. The caller holds o.mu.
func (o *observer) read(host string, status int, bytes int64) {
	now := o.clock()
	o.requests++
	o.wire += bytes
	class := strconv.Itoa(status/100) + "xx"
	if status < 100 || status > 599 {
		class = "other"
	}
	o.byClass[class]++
	if status == http.StatusNotModified {
		o.notModified++
	}
	o.recent = append(o.recent, now)
	if host != "" {
		o.recentHosts[host] = now
	}
	o.trim(now)
	if o.m != nil {
		o.m.requests.Inc()
		o.m.responses.WithLabelValues(class).Inc()
		o.m.wire.Add(float64(bytes))
		if status == http.StatusNotModified {
			o.m.notModified.Inc()
		}
	}
}

// watchDue counts, every second until ctx ends, the active sources whose
// trigger or backlog is due and that are not in a pass, from the state
// the crawler keeps.
func (o *observer) watchDue(ctx context.Context, st crawl.State, sources []crawl.Source) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		now := o.clock()
		n := 0
		for _, s := range sources {
			if !s.Active {
				continue
			}
			sc, err := st.Schedule(ctx, s.ID)
			if err != nil {
				break
			}
			o.mu.Lock()
			busy := o.inPass[s.ID]
			o.mu.Unlock()
			if !busy && (!sc.NextTrigger.After(now) || (s.Backlog != nil && !sc.NextBacklog.After(now))) {
				n++
			}
		}
		o.mu.Lock()
		o.due = n
		o.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// trim drops what is older than the window.
func (o *observer) trim(now time.Time) {
	i := 0
	for i < len(o.recent) && now.Sub(o.recent[i]) > window {
		i++
	}
	o.recent = o.recent[i:]
	for h, t := range o.recentHosts {
		if now.Sub(t) > window {
			delete(o.recentHosts, h)
		}
	}
}

// snapshot is the tallies at one instant, for the live view and the summary.
type snapshot struct {
	Requests, Wire, NotModified                  int64
	Deposited, Excerpted, Failed, Refused        int64
	Abandoned                                    int64
	Excluded, Passes                             int64
	Due, InPass, Cooling, Suspended, ActiveHosts int
	Rate, Bound                                  float64 // requests per second now, and the politeness bound for the hosts active
	Refusals                                     map[string]int64
	// WaitingFor is the host requests have waited for longest, "" when
	// none waits; WaitingOthers how many other hosts have requests waiting.
	WaitingFor    string
	WaitingOthers int
	Saved         int64 // wire bytes 304s saved
	RobotsFetches int64
}

func (o *observer) snapshot() snapshot {
	now := o.clock()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.trim(now)
	s := snapshot{
		Requests: o.requests, Wire: o.wire, NotModified: o.notModified,
		Deposited: o.deposited, Excerpted: o.excerpted, Failed: o.failed, Abandoned: o.abandoned, Refused: o.refused,
		Excluded: o.excluded, Passes: o.passes, Due: o.due, InPass: len(o.inPass), ActiveHosts: len(o.recentHosts),
		Refusals: map[string]int64{}, Saved: o.savedBy304, RobotsFetches: o.robotsFetches,
	}
	s.WaitingFor, s.WaitingOthers = o.longestWait()
	for h, t := range o.cooling {
		if t.After(now) {
			s.Cooling++
		} else {
			delete(o.cooling, h)
		}
	}
	for h, t := range o.suspended {
		if t.After(now) {
			s.Suspended++
		} else {
			delete(o.suspended, h)
		}
	}
	for k, v := range o.refusals {
		s.Refusals[k] = v
	}
	s.Rate = float64(len(o.recent)) / window.Seconds()
	if o.interval > 0 {
		s.Bound = float64(s.ActiveHosts) / o.interval.Seconds()
	}
	if o.m != nil {
		o.m.hosts.WithLabelValues("cooling-down").Set(float64(s.Cooling))
		o.m.hosts.WithLabelValues("suspended").Set(float64(s.Suspended))
		o.m.hosts.WithLabelValues("active").Set(float64(s.ActiveHosts))
		o.m.due.Set(float64(s.Due))
	}
	return s
}

// promMetrics are the Prometheus metrics, on their own registry.
type promMetrics struct {
	reg         *prometheus.Registry
	requests    prometheus.Counter
	responses   *prometheus.CounterVec
	refusals    *prometheus.CounterVec
	wire        prometheus.Counter
	notModified prometheus.Counter
	deposits    *prometheus.CounterVec
	passes      *prometheus.CounterVec
	events      *prometheus.CounterVec
	ledger      *prometheus.CounterVec
	hosts       *prometheus.GaugeVec
	inPass      prometheus.Gauge
	due         prometheus.Gauge
	requestMetrics
}

func newPromMetrics() *promMetrics {
	m := &promMetrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.requests = prometheus.NewCounter(prometheus.CounterOpts{Name: "politecrawl_reads_total", Help: "Reads the crawler reported: trigger reads, 304s, article reads."})
	m.responses = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "politecrawl_responses_total", Help: "Those reads by status class."}, []string{"class"})
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "politecrawl_refusals_total", Help: "Articles not deposited, by reason: the chain's refusals (robots, cooldown, ...) and the publisher's statuses."}, []string{"reason"})
	m.wire = prometheus.NewCounter(prometheus.CounterOpts{Name: "politecrawl_envelope_bytes_total", Help: "Envelope bytes deposited (after content-codings were removed)."})
	m.notModified = prometheus.NewCounter(prometheus.CounterOpts{Name: "politecrawl_not_modified_total", Help: "304 answers to conditional GETs."})
	m.deposits = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "politecrawl_deposits_total", Help: "Deposits, full or as the feed's excerpt."}, []string{"kind"})
	m.passes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "politecrawl_passes_total", Help: "Source passes by what happened to them."}, []string{"state"})
	m.events = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "politecrawl_events_total", Help: "Crawler events by kind."}, []string{"kind"})
	m.ledger = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "politecrawl_ledger_events_total", Help: "Refusal ledger events by type."}, []string{"type"})
	m.hosts = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "politecrawl_hosts", Help: "Hosts by state: cooling down, suspended, active in the last 10 s."}, []string{"state"})
	m.inPass = prometheus.NewGauge(prometheus.GaugeOpts{Name: "politecrawl_sources_in_pass", Help: "Sources in a pass now."})
	m.due = prometheus.NewGauge(prometheus.GaugeOpts{Name: "politecrawl_sources_due", Help: "Active sources due for a pass and not in one."})
	m.requestMetrics = newRequestMetrics()
	for _, c := range append([]prometheus.Collector{m.requests, m.responses, m.refusals, m.wire, m.notModified, m.deposits, m.passes, m.events, m.ledger, m.hosts, m.inPass, m.due}, m.collectors()...) {
		f(c)
	}
	return m
}

// handler serves the registry, refreshing the host gauges first.
func (o *observer) handler() http.Handler {
	h := promhttp.HandlerFor(o.m.reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.snapshot()
		h.ServeHTTP(w, r)
	})
}

// hostOfURL is the host of a URL, "" when it has none.
func hostOfURL(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
