package fetch

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/clock"
	"github.com/politefetch/politefetch/politetest"
)

// eventLog is an observer that keeps every event and tells the test when a
// request starts waiting for its host's slot.
type eventLog struct {
	mu      sync.Mutex
	events  []Event
	waiting chan Event
}

func newEventLog() *eventLog { return &eventLog{waiting: make(chan Event, 16)} }

func (l *eventLog) observe(e Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	if e.Kind == EventWaiting {
		l.waiting <- e
	}
}

// take returns the events so far, and forgets them.
func (l *eventLog) take() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := l.events
	l.events = nil
	return ev
}

// getWaiting runs c.Get(u) and moves clk by interval each time the request
// waits for its host's slot, until the Get returns.
func getWaiting(t *testing.T, c *Client, log *eventLog, clk *clock.Manual, interval time.Duration, u string) (*Result, error) {
	t.Helper()
	type got struct {
		res *Result
		err error
	}
	done := make(chan got, 1)
	go func() {
		res, err := c.Get(context.Background(), u)
		done <- got{res, err}
	}()
	for {
		select {
		case <-log.waiting:
			// The request may wait first for the slot of a request in
			// flight, then for the interval: the clock moves once the
			// pacer's wait for the interval is on it.
			for clk.Waiters() == 0 {
				select {
				case g := <-done:
					t.Fatalf("the Get returned while waiting: %+v, %v (events %s)", g.res, g.err, kinds(log.take()))
				default:
					runtime.Gosched()
				}
			}
			clk.Advance(interval)
		case g := <-done:
			return g.res, g.err
		}
	}
}

// kinds lists the kinds of events, in order.
func kinds(ev []Event) string {
	var b strings.Builder
	for i, e := range ev {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.Kind.String())
	}
	return b.String()
}

func find(t *testing.T, ev []Event, k EventKind) Event {
	t.Helper()
	for _, e := range ev {
		if e.Kind == k {
			return e
		}
	}
	t.Fatalf("no %s event in %s", k, kinds(ev))
	return Event{}
}

// TestObserver_EachEventOfARequest: over real TLS, on a manual clock,
// the observer sees robots.txt fetched (its status and bytes), the page
// waiting for its host's slot and for exactly the interval, sent, answered
// (status, bytes), then a 304 with the bytes it saved, a refusal of ours
// with its reason, each with the host, the URL and the clock's time, in the
// order of a request's life.
func TestObserver_EachEventOfARequest(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("news.example")
	robots := "User-agent: *\nDisallow: /private/\n"
	site.SetRobots(politetest.Robots{Body: robots})
	page := strings.Repeat("<p>A paragraph.</p>\n", 100)
	site.Handle("/page", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		_, _ = w.Write([]byte(page))
	}))
	site.Handle("/busy", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "86400")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	clk := clock.NewManual(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	const interval = time.Hour
	p := testPolicy(Vault(), interval) // one interval, no random band
	p.NoConditional = false
	log := newEventLog()
	c := newClient(t, web, p, WithClock(clk), WithObserver(log.observe))
	url := site.URL("/page")

	// The first Get: robots.txt, then the page, one interval later.
	res, err := getWaiting(t, c, log, clk, interval, url)
	if err != nil {
		t.Fatal(err)
	}
	ev := log.take()
	if got, want := kinds(ev), "slot, sent, robots.txt, waiting, slot, sent, answered"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	rb := ev[2]
	if rb.Request != KindRobots || rb.Status != 200 || rb.Bytes != int64(len(robots)) || rb.Err != nil ||
		rb.URL != site.URL("/robots.txt") || rb.Host != "news.example" {
		t.Errorf("robots.txt event %+v, want a 200 of %d bytes for news.example", rb, len(robots))
	}
	if ev[0].Wait != 0 || ev[0].Request != KindRobots {
		t.Errorf("robots.txt's slot %+v, want no wait", ev[0])
	}
	w := ev[3]
	if w.Host != "news.example" || w.URL != url || w.Request != KindArticle {
		t.Errorf("waiting %+v, want the page waiting for news.example", w)
	}
	slot := ev[4]
	if slot.Wait != interval || slot.Err != nil {
		t.Errorf("slot after %v (err %v), want after exactly %v, the interval on the client's clock", slot.Wait, slot.Err, interval)
	}
	if !slot.At.Equal(w.At.Add(interval)) {
		t.Errorf("slot at %v, want the wait's start %v plus the interval", slot.At, w.At)
	}
	if s := ev[5]; s.URL != url || !s.At.Equal(slot.At) {
		t.Errorf("sent %+v, want the page at %v", s, slot.At)
	}
	a := ev[6]
	if a.Status != 200 || a.Bytes != int64(len(page)) || a.Bytes != res.Wire || a.URL != url || a.Err != nil {
		t.Errorf("answered %+v, want a 200 of %d bytes", a, len(page))
	}

	// The second: a 304, which saved the page's bytes.
	res, err = getWaiting(t, c, log, clk, interval, url)
	if err != nil || !res.NotModified {
		t.Fatalf("second Get: %+v, %v, want a 304", res, err)
	}
	ev = log.take()
	if got, want := kinds(ev), "waiting, slot, sent, not modified"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if nm := ev[3]; nm.Status != http.StatusNotModified || nm.Saved != int64(len(page)) || nm.Bytes != 0 {
		t.Errorf("not modified %+v, want a 304 that saved %d bytes", nm, len(page))
	}

	// A refusal before anything is sent: robots.txt disallows the URL.
	if _, err := c.Get(context.Background(), site.URL("/private/x")); !errors.Is(err, ErrRobots) {
		t.Fatalf("private page: %v", err)
	}
	ev = log.take()
	if got, want := kinds(ev), "refused"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if r := ev[0]; r.Reason != Robots || r.Host != "news.example" || r.URL != site.URL("/private/x") || !errors.Is(r.Err, ErrRobots) {
		t.Errorf("refused %+v, want robots", r)
	}

	// A refusal the host asked for: a 429, then the next request is
	// refused at its turn by the cool-down.
	if res, err := getWaiting(t, c, log, clk, interval, site.URL("/busy")); err != nil || res.Status != http.StatusTooManyRequests {
		t.Fatalf("busy: %+v, %v", res, err)
	}
	if a := find(t, log.take(), EventAnswered); a.Status != http.StatusTooManyRequests {
		t.Errorf("answered %+v, want the 429", a)
	}
	if _, err := getWaiting(t, c, log, clk, interval, url); !errors.Is(err, ErrCooldown) {
		t.Fatalf("after the 429: %v, want the cool-down", err)
	}
	ev = log.take()
	if got, want := kinds(ev), "waiting, slot, refused"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if r := ev[2]; r.Reason != Cooldown || r.Host != "news.example" || !errors.Is(r.Err, ErrCooldown) {
		t.Errorf("refused %+v, want a cool-down", r)
	}
	if n := len(web.Requests()); n != 4 {
		t.Errorf("%d requests on the wire, want 4 (robots.txt, the page twice, the 429)", n)
	}
}

// TestObserver_FailedAndNoAnswer: a request that reached its host and got
// no answer ends with EventFailed (Err set), neither answered nor refused.
func TestObserver_FailedAndNoAnswer(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("gone.example")
	site.Handle("/hangup", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler) // the connection closed, no answer
	}))
	log := newEventLog()
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond), WithObserver(log.observe))
	if _, err := c.Get(context.Background(), site.URL("/hangup")); err == nil {
		t.Fatal("no error for a hang-up")
	}
	ev := log.take()
	f := find(t, ev, EventFailed)
	if f.Err == nil || f.URL != site.URL("/hangup") || f.Host != "gone.example" {
		t.Errorf("failed %+v, want the hang-up's error", f)
	}
	for _, e := range ev {
		if e.Kind == EventAnswered || e.Kind == EventRefused {
			t.Errorf("unexpected %s event %+v", e.Kind, e)
		}
	}
}

// TestObserver_ObservedConcurrently: the observer is called from many
// goroutines at once (run under -race), and every request gets its slot
// and its answer.
func TestObserver_ObservedConcurrently(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	var urls []string
	for i := range 4 {
		s := web.Site("c" + strconv.Itoa(i) + ".example")
		for j := range 3 {
			urls = append(urls, s.URL(s.AddArticle(politetest.Article{Slug: "a" + strconv.Itoa(j)}).Path))
		}
	}
	var mu sync.Mutex
	count := map[EventKind]int{}
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond), WithObserver(func(e Event) {
		mu.Lock()
		count[e.Kind]++
		mu.Unlock()
	}))
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Go(func() {
			if _, err := c.Get(context.Background(), u); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if count[EventAnswered] != len(urls) || count[EventRobots] != 4 || count[EventSlot] != len(urls)+4 || count[EventSent] != len(urls)+4 {
		t.Errorf("events %v, want %d answers, 4 robots.txt, %d slots and sends", count, len(urls), len(urls)+4)
	}
}
