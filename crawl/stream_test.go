package crawl

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
)

// slowSeeState is a State whose See, after the first of each list, waits
// until the web has received a request for one of the site's articles, for
// at most wait: a store slow to record a feed's references (a durable write
// each), slower than the host's interval.
type slowSeeState struct {
	State
	web      *politetest.Web
	site     *politetest.Site
	wait     time.Duration
	sees     atomic.Int64
	timedOut atomic.Int64
}

func (s *slowSeeState) See(ctx context.Context, source string, ref RefState, now time.Time) (RefState, bool, error) {
	if s.sees.Add(1) > 1 {
		deadline := time.After(s.wait)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
	wait:
		for articleRequests(s.web, s.site.Name(), s.site.Articles()) == 0 {
			select {
			case <-tick.C:
			case <-deadline:
				s.timedOut.Add(1)
				break wait
			}
		}
	}
	return s.State.See(ctx, source, ref, now)
}

// The first article a feed announces is read as soon as it is recorded and
// the host's interval allows, while the store still records the feed's other
// references: a store slower than the interval delays no article (D7).
func TestCrawler_D7_ArticlesReadWhileTheTriggerIsRecorded(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("slowsee.example")
	for range 4 {
		s.AddArticle(politetest.Article{})
	}
	st := &slowSeeState{State: new(MemoryState), web: web, site: s, wait: 5 * time.Second}
	p := testPolicy(t, Digest, testInterval)
	c := &Crawler{Client: newClient(t, web, p), State: st, Sources: []Source{siteSource(s.Name(), Digest, false)}}
	rep := mustPass(t, c, s.Name())
	if rep.Deposited != 4 || rep.Trigger.Refs != 4 {
		t.Fatalf("pass: %+v", rep)
	}
	if n := st.timedOut.Load(); n > 0 {
		t.Fatalf("%d references waited %v for an article read that came only after the feed's references were all recorded", n, st.wait)
	}
	audit(t, web, p)
}

// scheduleCounter counts a State's Schedule calls.
type scheduleCounter struct {
	State
	n atomic.Int64
}

func (s *scheduleCounter) Schedule(ctx context.Context, source string) (Schedule, error) {
	s.n.Add(1)
	return s.State.Schedule(ctx, source)
}

// Run reads a source's schedule from the State when its pass ends and when
// its next start comes, not every idle source's at every pass's end: with
// many sources, a State on disk would otherwise be read for all of them at
// each pass's end (V7).
func TestCrawler_V7_RunReadsSchedulesOncePerStart(t *testing.T) {
	t.Parallel()
	const sources = 60
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: sources, Seed: 3})
	st := &scheduleCounter{State: new(MemoryState)}
	var ended atomic.Int64
	all := make(chan struct{})
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), State: st, Clock: clock.NewManual(t0),
		OnEvent: func(e Event) {
			if e.Kind == EventPassEnded && ended.Add(1) == sources {
				close(all)
			}
		}}
	for _, s := range info.Sites {
		c.Sources = append(c.Sources, siteSource(s.Name, StrictNews, false))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	select {
	case <-all:
	case <-time.After(30 * time.Second):
		t.Fatalf("%d passes of %d ended", ended.Load(), sources)
	}
	cancel()
	<-done
	// Each pass reads its schedule twice (at its start, and to record the
	// trigger's read); Run, once per source at start-up and once after its
	// pass.
	n := st.n.Load()
	if n > 4*sources+sources/2 {
		t.Errorf("%d Schedule calls for %d passes, want at most %d", n, sources, 4*sources+sources/2)
	}
	t.Logf("%d Schedule calls for %d passes", n, sources)
}

// With one turn to start (Starting 1), passes started together start one
// after another, each handing its turn on once its first request is
// written: every source is read in full, politely (D7).
func TestCrawler_D7_PassesStartInTurn(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 12, ArticlesPerHost: 1, Seed: 5})
	p := testPolicy(t, StrictNews, testInterval)
	// The Crawler's clock stands still: a turn goes back at the first
	// written request or at the pass's end, never after StartHold.
	c := &Crawler{Client: newClient(t, web, p), Starting: 1, Clock: clock.NewManual(t0)}
	for _, s := range info.Sites {
		c.Sources = append(c.Sources, siteSource(s.Name, StrictNews, false))
	}
	reps, err := c.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reps {
		if r.Err != nil || r.Deposited != 1 {
			t.Fatalf("%s: %+v", r.Source, r)
		}
	}
	audit(t, web, p)
	// The passes overlapped from their first request on: some host was
	// first asked before another's feed (its second request, an interval
	// after its robots.txt), as none would be if a turn went back only once
	// the trigger was read.
	byHost := map[string][]time.Time{}
	for _, r := range web.Requests() {
		byHost[r.Host] = append(byHost[r.Host], r.Arrived)
	}
	overlap := false
	for h, ts := range byHost {
		slices.SortFunc(ts, time.Time.Compare)
		for g, us := range byHost {
			overlap = overlap || (g != h && len(us) > 1 && ts[0].Before(us[1]) && us[0].Before(ts[0]))
		}
	}
	if !overlap {
		t.Error("each pass started only once the previous one's trigger was read")
	}
}
