package fetch_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// crawlMetrics aggregates a Client's events the way a metrics library
// would: counters by label and a histogram of pacing waits. A service
// wires the same switch to OpenTelemetry or Prometheus instruments.
type crawlMetrics struct {
	mu         sync.Mutex
	robots     map[int]int            // robots.txt fetches by status (0: no answer)
	refusals   map[fetch.Reason]int   // refusals of ours by reason
	answers    map[int]int            // answers by status, 304s included
	savedBytes int64                  // bytes 304s saved reading again
	waits      []time.Duration        // histogram buckets' upper bounds
	waitCounts []int                  // observations per bucket, the last one +Inf
	waitSum    time.Duration          // the histogram's sum
	live       map[string]fetch.Event // per host, its latest event (a status line)
}

func newCrawlMetrics() *crawlMetrics {
	b := []time.Duration{0, 100 * time.Millisecond, time.Second, 10 * time.Second}
	return &crawlMetrics{
		robots: map[int]int{}, refusals: map[fetch.Reason]int{}, answers: map[int]int{},
		waits: b, waitCounts: make([]int, len(b)+1), live: map[string]fetch.Event{},
	}
}

// observe is the observer: it is called on the chain's goroutines, so it
// takes a lock, counts, and returns.
func (m *crawlMetrics) observe(e fetch.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.live[e.Host] = e
	switch e.Kind {
	case fetch.EventSlot:
		i := sort.Search(len(m.waits), func(i int) bool { return e.Wait <= m.waits[i] })
		m.waitCounts[i]++
		m.waitSum += e.Wait
	case fetch.EventRobots:
		m.robots[e.Status]++
	case fetch.EventAnswered:
		m.answers[e.Status]++
	case fetch.EventNotModified:
		m.answers[e.Status]++
		m.savedBytes += e.Saved
	case fetch.EventRefused:
		m.refusals[e.Reason]++
	}
}

// status is a live line for a host: what its latest event says.
func (m *crawlMetrics) status(host string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.live[host]
	switch {
	case !ok:
		return host + ": idle"
	case e.Kind == fetch.EventWaiting:
		return "waiting for " + host + "'s slot"
	default:
		return host + ": " + e.Kind.String()
	}
}

// Observing every request's life with counters and a histogram: robots.txt
// fetches, pacing waits, answers, the bytes a 304 saved, refusals by reason.
func ExampleWithObserver() {
	web, err := politetest.Start()
	if err != nil {
		panic(err)
	}
	defer web.Close()
	site := web.Site("news.example")
	site.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /private/\n"})
	page := strings.Repeat("<p>An article paragraph.</p>\n", 40)
	site.Handle("/story", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, page)
	}))

	m := newCrawlMetrics()
	pol := fetch.Vault()
	pol.Name, pol.Version = "ExampleConnector", "1.0"
	pol.InfoURL, pol.Contact = "https://connector.example/about", "crawler@connector.example"
	pol.Interval = 10 * time.Millisecond // shortened for the example
	pol.NoConditional = false
	c, err := fetch.New(pol, fetch.WithObserver(m.observe),
		fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
			Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	if err != nil {
		panic(err)
	}
	defer c.Close()

	ctx := context.Background()
	for _, u := range []string{site.URL("/story"), site.URL("/story"), site.URL("/private/draft")} {
		_, _ = c.Get(ctx, u)
	}
	fmt.Println(m.status("news.example")) // a live line; "waiting for news.example's slot" during a wait
	m.mu.Lock()
	defer m.mu.Unlock()
	slots := 0
	for _, n := range m.waitCounts {
		slots += n
	}
	fmt.Println("robots.txt fetches by status:", m.robots)
	fmt.Println("answers by status:", m.answers, "bytes saved by 304s:", m.savedBytes)
	fmt.Println("refusals by reason:", m.refusals)
	fmt.Println("pacing waits observed:", slots)
	// Output:
	// news.example: refused
	// robots.txt fetches by status: map[200:1]
	// answers by status: map[200:1 304:1] bytes saved by 304s: 1160
	// refusals by reason: map[robots:1]
	// pacing waits observed: 3
}
