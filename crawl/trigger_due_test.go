package crawl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// downSchedule is a fetch.MemorySchedule whose claims fail while down is
// set, as a shared store does while it cannot be reached.
type downSchedule struct {
	fetch.MemorySchedule
	down   atomic.Bool
	claims atomic.Int32
}

var errScheduleDown = errors.New("test: schedule store unreachable")

func (s *downSchedule) Acquire(ctx context.Context, c fetch.Claim) (time.Duration, bool, error) {
	s.claims.Add(1)
	if s.down.Load() {
		return 0, false, errScheduleDown
	}
	return s.MemorySchedule.Acquire(ctx, c)
}

// A trigger read the chain never sent (its shared schedule refused every
// claim: our failure, not the publisher's) leaves the trigger due: its last
// read and next due time stay as they were, Run tries it again after
// RetryAfterError rather than at the next interval, and then reads it (S2).
func TestCrawler_S2_TriggerNotSentStaysDue(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("unsent.example")
	for range 2 {
		s.AddArticle(politetest.Article{})
	}
	p := testPolicy(t, StrictNews, testInterval)
	sched := &downSchedule{}
	sched.down.Store(true)
	clk := clock.NewManual(t0)
	ended := make(chan *PassReport, 8)
	src := siteSource(s.Name(), StrictNews, false)
	c := &Crawler{Client: newClient(t, web, p, fetch.WithSchedule(sched)), Clock: clk, Sources: []Source{src},
		OnEvent: func(e Event) {
			if e.Kind == EventPassEnded {
				ended <- e.Pass
			}
		}}

	// One pass: nothing sent, the trigger still due.
	rep := mustPass(t, c, src.ID)
	if !rep.TriggerRead || rep.Trigger.Unsent != 1 || !errors.Is(rep.Trigger.Err, errScheduleDown) {
		t.Fatalf("pass with the schedule down: %+v, want the trigger unsent", rep)
	}
	<-ended
	sc, err := c.StateStore().Schedule(context.Background(), src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sc.NextTrigger.After(t0) || !sc.LastTrigger.IsZero() || !sc.Slowed.IsZero() {
		t.Fatalf("schedule after an unsent trigger: %+v, want it still due", sc)
	}
	if n := len(web.Requests()); n != 0 {
		t.Fatalf("%d requests reached the web with the schedule down", n)
	}

	// Run: the first pass sends nothing either, and the next waits
	// RetryAfterError, not the source's 15 minutes.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	first := <-ended
	if first.Trigger.Unsent != 1 || first.Start.After(t0) {
		t.Fatalf("Run's first pass %+v, want at once and unsent", first)
	}
	sched.down.Store(false)
	clk.Advance(RetryAfterError)
	second := <-ended
	if second.Start.Before(t0.Add(RetryAfterError)) {
		t.Fatalf("Run tried again at %v, before RetryAfterError had passed", second.Start)
	}
	if !second.TriggerRead || second.Trigger.Err != nil || second.Trigger.Unsent != 0 || second.Deposited != 2 {
		t.Fatalf("Run's retry: %+v, want the trigger read and its 2 articles deposited", second)
	}
	sc, _ = c.StateStore().Schedule(context.Background(), src.ID)
	if !sc.LastTrigger.Equal(second.Start) || !sc.NextTrigger.Equal(second.Start.Add(src.interval())) {
		t.Fatalf("schedule after the read: %+v, want it from %v", sc, second.Start)
	}
	audit(t, web, p)
}

// A trigger read that reached the publisher, even to fail, moves the
// trigger on: a 503 (the site marked slowed) or a reset connection waits
// out the interval.
func TestCrawler_S2_TriggerAnsweredMovesOn(t *testing.T) {
	t.Parallel()
	for _, kind := range []politetest.Kind{politetest.ServerError, politetest.Reset} {
		web := politetest.NewWeb(t)
		s := web.Site("answered.example")
		s.AddArticle(politetest.Article{})
		s.Misbehave("/feed.xml", politetest.Behaviour{Kind: kind})
		p := testPolicy(t, StrictNews, testInterval)
		clk := clock.NewManual(t0)
		src := siteSource(s.Name(), StrictNews, false)
		c := &Crawler{Client: newClient(t, web, p), Clock: clk, Sources: []Source{src}}
		rep := mustPass(t, c, src.ID)
		if rep.Trigger.Err == nil || rep.Trigger.Unsent != 0 {
			t.Fatalf("%v: pass %+v, want the trigger answered with a failure", kind, rep)
		}
		sc, _ := c.StateStore().Schedule(context.Background(), src.ID)
		if !sc.LastTrigger.Equal(t0) || !sc.NextTrigger.Equal(t0.Add(src.interval())) {
			t.Fatalf("%v: schedule %+v, want the trigger moved on", kind, sc)
		}
	}
}

// A feed that redirects to a host its source does not admit is refused
// unsent: the other host is never asked, and nothing it lists is recorded
// (V10). The same holds for the backlog's lists.
func TestCrawler_V10_TriggerRedirectToUnadmittedHostRefused(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("admitted.example")
	s.AddArticle(politetest.Article{})
	other := web.Site("other.example")
	for range 2 {
		other.AddArticle(politetest.Article{})
	}
	s.Misbehave("/feed.xml", politetest.Behaviour{Kind: politetest.RedirectToHost, Host: other.Name()})
	s.Misbehave("/sitemap.xml", politetest.Behaviour{Kind: politetest.RedirectToHost, Host: other.Name()})
	p := testPolicy(t, StrictNews, testInterval)
	src := siteSource(s.Name(), StrictNews, false)
	src.Identifier = IDFromURL
	src.Backlog = &Backlog{Kind: BacklogSitemap, URLs: []string{"https://" + s.Name() + "/sitemap.xml"}}
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{src}}
	rep := mustPass(t, c, src.ID)
	for name, err := range map[string]error{"trigger": rep.Trigger.Err, "backlog": rep.Backlog.Err} {
		var re *fetch.RefusedError
		if !errors.As(err, &re) || re.Reason != fetch.HostNotAdmitted {
			t.Errorf("%s: err %v, want a refusal with HostNotAdmitted", name, err)
		}
	}
	if rep.Trigger.Refs != 0 || rep.Backlog.Refs != 0 || rep.Queued != 0 {
		t.Fatalf("pass %+v, want nothing recorded", rep)
	}
	for _, r := range web.Requests() {
		if r.Host == other.Name() {
			t.Fatalf("the unadmitted host was asked for %s", r.Path)
		}
	}
	audit(t, web, p)
}

// A trigger read that failed for a reason of ours (a store of ours or the
// chain's that did not answer, the host's turn not had in time, robots.txt
// not asked) leaves the trigger due; one the chain decided (a cool-down,
// robots.txt, an unadmitted host) or the publisher answered (a status, a
// name that does not resolve) moves it on.
func TestTriggerFailure_OursOnlyWhenOurStoresOrTurnFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"schedule store", fmt.Errorf("wrapped: %w", errScheduleDown), true},
		{"pacing deadline", fmt.Errorf("feed: %w", fetch.ErrPacingDeadline), true},
		{"robots.txt not sent", fmt.Errorf("feed: %w", robots.ErrNotSent), true},
		{"ledger store", &fetch.RefusedError{Reason: fetch.Cooldown, Err: &backoff.CooldownError{Reason: backoff.Unavailable, Err: errDepositFailed}}, true},
		{"cool-down asked for", &fetch.RefusedError{Reason: fetch.Cooldown, Err: &backoff.CooldownError{Reason: backoff.Cooldown}}, false},
		{"robots.txt", &fetch.RefusedError{Reason: fetch.Robots}, false},
		{"host not admitted", &fetch.RefusedError{Reason: fetch.HostNotAdmitted}, false},
		{"status", &feed.StatusError{StatusCode: 503}, false},
		{"dns", &net.DNSError{Err: "no such host", Name: "x.example", IsNotFound: true}, false},
	} {
		if got := ours(tc.err); got != tc.want {
			t.Errorf("%s: ours(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
