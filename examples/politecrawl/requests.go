package main

// What the fetch client tells of each request (fetch.WithObserver): which
// hosts requests are waiting for, for the live line, and for Prometheus the
// pacing waits, the bytes 304s saved, the robots.txt fetches and the
// requests the chain refused. Like the rest of the observer, no label is a
// URL or a host.

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/politefetch/politefetch/fetch"
)

// waitingHost is what the observer keeps of a host that requests are
// waiting for: how many, and since when the oldest of them.
type waitingHost struct {
	n     int
	since time.Time
}

// requestEvent is the fetch client's WithObserver. It runs on the request
// path: the kinds it shows take a lock and a few map operations, the others
// (sent, answered, failed) return at once. What it keeps is bounded by the
// requests waiting now: an entry goes at its request's EventSlot, which
// every request that waited gets, granted or not. The Prometheus metrics
// are safe for concurrent use and are updated outside the lock.
func (o *observer) requestEvent(e fetch.Event) {
	switch e.Kind {
	case fetch.EventWaiting:
		o.mu.Lock()
		o.waitingReqs[waitKey(e)]++
		w := o.waiting[e.Host]
		if w.n == 0 {
			w.since = e.At
		}
		w.n++
		o.waiting[e.Host] = w
		o.mu.Unlock()
	case fetch.EventSlot:
		o.slotCame(e)
		if o.m != nil && e.Err == nil {
			o.m.pacingWait.Observe(e.Wait.Seconds())
		}
	case fetch.EventNotModified:
		o.mu.Lock()
		o.savedBy304 += e.Saved
		o.mu.Unlock()
		if o.m != nil {
			o.m.saved.Add(float64(e.Saved))
		}
	case fetch.EventRobots:
		o.mu.Lock()
		o.robotsFetches++
		o.mu.Unlock()
		if o.m != nil {
			o.m.robots.WithLabelValues(statusClass(e.Status)).Inc()
		}
	case fetch.EventRefused:
		if o.m != nil {
			o.m.chainRefusals.WithLabelValues(reasonLabel(e.Reason.String())).Inc()
		}
	}
}

// slotCame ends the wait of e's request, if it was waiting.
func (o *observer) slotCame(e fetch.Event) {
	k := waitKey(e)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.waitingReqs[k] == 0 {
		return
	}
	if o.waitingReqs[k]--; o.waitingReqs[k] == 0 {
		delete(o.waitingReqs, k)
	}
	if w := o.waiting[e.Host]; w.n <= 1 {
		delete(o.waiting, e.Host)
	} else {
		w.n--
		o.waiting[e.Host] = w
	}
}

// waitKey tells one request's wait apart from another's to the same host.
func waitKey(e fetch.Event) string { return e.Host + " " + e.URL }

// statusClass is a status's class, "2xx" to "5xx"; "error" for no answer.
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "error"
	}
	return strconv.Itoa(status/100) + "xx"
}

// longestWait is the host requests have waited for longest, and how many
// other hosts have requests waiting; "" when none. The caller holds o.mu.
func (o *observer) longestWait() (host string, others int) {
	var since time.Time
	for h, w := range o.waiting {
		if host == "" || w.since.Before(since) || (w.since.Equal(since) && h < host) {
			host, since = h, w.since
		}
	}
	if host == "" {
		return "", 0
	}
	return host, len(o.waiting) - 1
}

// requestMetrics are the Prometheus metrics of the fetch client's events.
type requestMetrics struct {
	pacingWait    prometheus.Histogram
	saved         prometheus.Counter
	robots        *prometheus.CounterVec
	chainRefusals *prometheus.CounterVec
}

func newRequestMetrics() requestMetrics {
	return requestMetrics{
		pacingWait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "politecrawl_pacing_wait_seconds",
			Help:    "How long each request waited for its host's slot (the interval, Crawl-delay, a request in flight); 0 when the slot was free.",
			Buckets: []float64{0, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300}}),
		saved: prometheus.NewCounter(prometheus.CounterOpts{Name: "politecrawl_not_modified_saved_bytes_total",
			Help: "Wire bytes that 304 answers saved reading again (the bodies their validators were kept from)."}),
		robots: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "politecrawl_robots_fetches_total",
			Help: "robots.txt fetches by the answer's status class (error: no answer)."}, []string{"class"}),
		chainRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "politecrawl_requests_refused_total",
			Help: "Requests the fetch chain refused before sending anything, by reason (robots, cooldown, ...)."}, []string{"reason"}),
	}
}

func (m requestMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.pacingWait, m.saved, m.robots, m.chainRefusals}
}
