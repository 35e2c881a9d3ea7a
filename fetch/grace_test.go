package fetch

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestPacer_S4_RefusalAnsweredAfterTheCallerGaveUp: a 429 whose answer
// comes after its caller's deadline is still observed. The caller gets its
// context's error at once; the answer is read in the background, the
// host's turn held until it comes; the ledger records the refusal, so the
// host's next request waits for that turn and is then refused by the
// cool-down, never sent.
func TestPacer_S4_RefusalAnsweredAfterTheCallerGaveUp(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("late.example")
	answer := make(chan struct{}) // the web answers once the caller has its error
	s.Handle("/late", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-answer:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond))
	if _, err := c.Get(context.Background(), s.URL("/")); err != nil { // robots.txt first
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := c.Get(ctx, s.URL("/late"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("late answer: err %v, want the caller's deadline", err)
	}
	close(answer)
	_, err = c.Get(context.Background(), s.URL("/next"))
	re := refusal(t, err, Cooldown)
	if !re.Until.After(time.Now().Add(50 * time.Minute)) {
		t.Errorf("cool-down until %v, want the hour the 429 asked", re.Until)
	}
	if requested(web, "late.example", "/next") {
		t.Error("the next request went out inside the cool-down")
	}
	for _, q := range web.Requests() {
		if q.Path == "/late" && q.Status != http.StatusTooManyRequests {
			t.Errorf("the late request ended with status %d: the chain hung up before the answer", q.Status)
		}
	}
	if rep := web.Audit(auditPolicy(testPolicy(Digest(), time.Millisecond))); !rep.OK() {
		t.Error(rep)
	}
}

// TestPacer_S4_RefusalBegunAsTheCallerGaveUp: the caller's deadline ends
// after the answer's first byte and before its headers are in (here a 103
// Early Hints, then the 429 after the caller has its error; on a loaded
// machine, a process descheduled between the first byte of a 429 and its
// parsed headers). The answer is still read in the background and the
// refusal recorded, as for an answer not yet begun: otherwise the 429 the
// host sent is never observed, and the host is asked again inside its
// cool-down (three workers on a loaded Redis Cluster: a feed asked again
// 10 s after its 429 with Retry-After 120).
func TestPacer_S4_RefusalBegunAsTheCallerGaveUp(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("begun.example")
	answer := make(chan struct{}) // the 429 comes once the caller has its error
	s.Handle("/begun", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints) // the answer's first byte
		select {
		case <-answer:
		case <-r.Context().Done():
			return
		}
		w.Header().Del("Link")
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond))
	if _, err := c.Get(context.Background(), s.URL("/")); err != nil { // robots.txt first
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := c.Get(ctx, s.URL("/begun"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("begun answer: err %v, want the caller's deadline", err)
	}
	close(answer)
	_, err = c.Get(context.Background(), s.URL("/next"))
	re := refusal(t, err, Cooldown)
	if !re.Until.After(time.Now().Add(50 * time.Minute)) {
		t.Errorf("cool-down until %v, want the hour the 429 asked", re.Until)
	}
	if requested(web, "begun.example", "/next") {
		t.Error("the next request went out inside the cool-down")
	}
	for _, q := range web.Requests() {
		if q.Path == "/begun" && q.Status != http.StatusTooManyRequests {
			t.Errorf("the begun request ended with status %d: the chain hung up before the answer", q.Status)
		}
	}
}

// slowStarted is a Schedule whose Started waits, while hold is set, until
// release is closed: a shared schedule on a loaded Redis, whose report of a
// request's start takes a second.
type slowStarted struct {
	*MemorySchedule
	hold    atomic.Bool
	release chan struct{}
}

func (s *slowStarted) Started(ctx context.Context, key, owner string, now time.Time) error {
	if s.hold.Load() {
		select {
		case <-s.release:
		case <-ctx.Done():
		}
	}
	return s.MemorySchedule.Started(ctx, key, owner, now)
}

// TestPacer_S4_RefusalWhileTheStartIsReported: the request is written,
// and its start is still being reported to the shared Schedule (the turn
// counted the request as written once that report was back) when the
// caller's deadline ends; the host's 429 comes after. The request is on the
// wire from its write's first byte: it is left to its answer grace and the
// refusal recorded, not stopped as a request never sent (three workers on
// a loaded Redis Cluster: a feed's 429 lost so, and the feed asked again
// inside its Retry-After).
func TestPacer_S4_RefusalWhileTheStartIsReported(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("slowstart.example")
	answer := make(chan struct{}) // the 429 comes once the caller has its error
	s.Handle("/refused", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-answer:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	sched := &slowStarted{MemorySchedule: &MemorySchedule{}, release: make(chan struct{})}
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond), WithStores(Stores{Schedule: sched}))
	if _, err := c.Get(context.Background(), s.URL("/")); err != nil { // robots.txt first
		t.Fatal(err)
	}
	sched.hold.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := c.Get(ctx, s.URL("/refused"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("refused while its start is reported: err %v, want the caller's deadline", err)
	}
	close(answer)
	close(sched.release)
	sched.hold.Store(false)
	_, err = c.Get(context.Background(), s.URL("/next"))
	re := refusal(t, err, Cooldown)
	if !re.Until.After(time.Now().Add(50 * time.Minute)) {
		t.Errorf("cool-down until %v, want the hour the 429 asked", re.Until)
	}
	if requested(web, "slowstart.example", "/next") {
		t.Error("the next request went out inside the cool-down")
	}
}

// TestPacer_P1_AnswerGraceBounded: a pacer alone over net/http's transport.
// A written request whose host never answers keeps the host's turn for the
// grace after its caller's deadline, then is hung up on; the next request
// goes out only after that. With a negative grace the request ends with its
// caller, as it used to (and the next may go at once).
func TestPacer_P1_AnswerGraceBounded(t *testing.T) {
	t.Parallel()
	for _, grace := range []time.Duration{300 * time.Millisecond, -1} {
		web := politetest.NewWeb(t)
		s := web.Site("hang.example")
		s.Handle("/hang", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		tr := web.Transport()
		hc := &http.Client{Transport: &pacer{Interval: time.Millisecond, Next: tr, AnswerGrace: grace}}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		deadline, _ := ctx.Deadline()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL("/hang"), nil)
		_, err := hc.Do(req)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("grace %v: err %v, want the caller's deadline", grace, err)
		}
		if _, err := get(hc, s.URL("/next")); err != nil {
			t.Fatal(err)
		}
		tr.CloseIdleConnections()
		var hang, next politetest.Request
		for _, q := range web.Requests() {
			switch q.Path {
			case "/hang":
				hang = q
			case "/next":
				next = q
			}
		}
		// The grace starts when the caller gives up, at its deadline; the
		// hanging request reached the server later than the context was
		// made (dial, TLS), so the server's stamps are measured against the
		// deadline itself, not against the hanging request's arrival.
		if grace > 0 && next.Start.Before(deadline.Add(grace)) {
			t.Errorf("grace %v: the next request went out %v after the caller's deadline, before its grace ran out",
				grace, next.Start.Sub(deadline))
		}
		// Without a grace the next request may go while the server has yet
		// to notice the first one's hang-up, so only a grace promises one at
		// a time.
		if grace > 0 && hang.Finished.After(next.Start) {
			t.Errorf("grace %v: two requests in flight at once", grace)
		}
	}
}
