package crawl

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
)

// seeFailsOnce is a MemoryState whose See of one key fails once, as a
// shared store does when one call of many times out.
type seeFailsOnce struct {
	MemoryState
	key    string
	mu     sync.Mutex
	failed bool
}

var errSeeTimedOut = errors.New("test: the state store did not answer in time")

func (s *seeFailsOnce) See(ctx context.Context, source string, r RefState, now time.Time) (RefState, bool, error) {
	s.mu.Lock()
	fail := r.Key == s.key && !s.failed
	s.failed = s.failed || fail
	s.mu.Unlock()
	if fail {
		return RefState{}, false, errSeeTimedOut
	}
	return s.MemoryState.See(ctx, source, r, now)
}

// A trigger answered in full, one of whose references the State did not
// take, stays due: the next pass — another worker's here, sharing the
// State — reads it again, in full (its validators were not kept), learns
// the reference, and reads its article. Without that, the next pass found
// the trigger not due and the reference unknown, and the article was not
// read until the trigger's next interval: a pass that met one store error
// lost the work it had learnt (V12). The read still counts as the last
// (the Refresh guard holds), and Run tries it again after RetryAfterError.
// The same holds for a backlog walk.
func TestCrawler_V12_RefNotRecordedLeavesListDue(t *testing.T) {
	t.Parallel()
	for _, backlog := range []bool{false, true} {
		name := "trigger"
		if backlog {
			name = "backlog"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 3, Seed: 61})
			site := info.Sites[0]
			src := siteSource(site.Name, Digest, backlog)
			if backlog {
				// Only the backlog names the articles: the trigger is a
				// feed the site does not have (404).
				src.Trigger = Trigger{Feeds: []string{"https://" + site.Name + "/none.xml"}}
			}
			p := testPolicy(t, Digest, testInterval) // conditional reads on
			clk := clock.NewManual(site.Articles[len(site.Articles)-1].Published.Add(time.Hour))
			now := clk.Now()
			var keep restartable // the stores the two workers share
			st := &seeFailsOnce{key: "2"}
			first := &Crawler{Client: keep.client(t, web, p), Sources: []Source{src}, State: st, Clock: clk, Owner: "worker-1"}
			rep := mustPass(t, first, src.ID)
			if rep.Deposited != 2 {
				t.Fatalf("first pass %+v, want the 2 recorded articles deposited", rep)
			}
			if !rep.triggerDue && !rep.backlogDue {
				t.Errorf("first pass %+v: not reported due, Run would wait out the interval", rep)
			}
			if d := nextStart(context.Background(), rep, nil, rep.End); !d.Equal(rep.End.Add(RetryAfterError)) {
				t.Errorf("Run's next start after the first pass: %v, want RetryAfterError after its end (%v)", d, rep.End.Add(RetryAfterError))
			}
			sc, err := st.Schedule(context.Background(), src.ID)
			if err != nil {
				t.Fatal(err)
			}
			if backlog {
				if sc.NextBacklog.After(now) {
					t.Errorf("schedule %+v: the backlog moved on with a reference unrecorded", sc)
				}
			} else if sc.NextTrigger.After(now) || !sc.LastTrigger.Equal(now) {
				t.Errorf("schedule %+v: want the trigger read at %v and still due", sc, now)
			}

			first.Client.Close()

			// Another worker, on the same stores and web, at the same instant.
			before := len(web.Requests())
			second := &Crawler{Client: keep.client(t, web, p), Sources: []Source{src}, State: st, Clock: clk, Owner: "worker-2"}
			rep = mustPass(t, second, src.ID)
			if rep.Deposited != 1 {
				t.Errorf("second pass %+v, want the third article learnt and deposited", rep)
			}
			listed := false
			for _, r := range web.Requests()[before:] {
				if r.Path == "/feed.xml" || r.Path == "/wp-json/wp/v2/posts" {
					listed = true
					if r.Status != http.StatusOK {
						t.Errorf("list read again: %s answered %d, want a full 200", r.Path, r.Status)
					}
				}
			}
			if !listed {
				t.Error("the second pass read no list")
			}
			reads := map[string]int{}
			for _, r := range web.Requests() {
				reads[r.Path]++
			}
			for _, a := range site.Articles {
				if reads[a.Path] != 1 {
					t.Errorf("%s read %d times, want once", a.Path, reads[a.Path])
				}
			}
			audit(t, web, p)
		})
	}
}

// A trigger read whose own request was never sent stays due even when the
// robots.txt fetch the chain made for it first reached the publisher: here
// robots.txt is read, and the feed's turn at the host would come after the
// read's deadline, so the chain fails it at once (fetch.ErrPacingDeadline),
// nothing sent. The read's trace saw robots.txt's connection; before, that
// counted as the feed reaching the publisher, the trigger moved on unread,
// and the next pass found nothing due (S2, V12).
func TestCrawler_S2_TriggerUnsentAfterRobotsStaysDue(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("robots-first.example")
	for range 2 {
		s.AddArticle(politetest.Article{})
	}
	p := testPolicy(t, StrictNews, time.Hour) // the feed's turn: an hour after robots.txt's
	p.Timeout = time.Minute                   // the read's deadline: long before it
	src := siteSource(s.Name(), StrictNews, false)
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{src}}
	rep := mustPass(t, c, src.ID)
	if !errors.Is(rep.Trigger.Err, fetch.ErrPacingDeadline) {
		t.Fatalf("pass %+v: want the feed failed for its turn", rep)
	}
	if rep.Trigger.Unsent != 1 || !rep.triggerDue {
		t.Errorf("pass %+v: want the trigger unsent and still due", rep)
	}
	sc, err := c.StateStore().Schedule(context.Background(), src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.NextTrigger.IsZero() || !sc.LastTrigger.IsZero() {
		t.Errorf("schedule %+v: want the trigger still due, never read", sc)
	}
	for _, r := range web.Requests() {
		if r.Path != "/robots.txt" {
			t.Errorf("%s reached the web", r.Path)
		}
	}
	audit(t, web, p)
}

// settleFails is a MemoryState whose Settle of one key fails its first
// times calls, as a shared store's does when its answers time out.
type settleFails struct {
	MemoryState
	key   string
	times int
	mu    sync.Mutex
	calls int
}

func (s *settleFails) Settle(ctx context.Context, source, key string, o Outcome, note string, now time.Time) error {
	s.mu.Lock()
	fail := key == s.key && s.calls < s.times
	if key == s.key {
		s.calls++
	}
	s.mu.Unlock()
	if fail {
		return errSeeTimedOut
	}
	return s.MemoryState.Settle(ctx, source, key, o, note, now)
}

// An article deposited whose Settle failed once is settled all the same:
// the crawler asks the State again at once, so the pass ends clean and no
// later pass reads the article again (V12). A Settle that keeps failing
// still fails the pass, after settleTries tries, and the article is read
// again by the next pass: the documented exception.
func TestCrawler_V12_SettleLostOnceIsAskedAgain(t *testing.T) {
	t.Parallel()
	for _, times := range []int{1, settleTries} {
		web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 3, Seed: 62})
		site := info.Sites[0]
		src := siteSource(site.Name, Digest, false)
		p := testPolicy(t, Digest, testInterval)
		clk := clock.NewManual(site.Articles[len(site.Articles)-1].Published.Add(time.Hour))
		var keep restartable
		st := &settleFails{key: "2", times: times}
		c := &Crawler{Client: keep.client(t, web, p), Sources: []Source{src}, State: st, Clock: clk, Owner: "worker-1"}
		rep, err := c.Pass(context.Background(), src.ID)
		if err == nil && rep != nil {
			err = rep.Err
		}
		if times < settleTries {
			if err != nil {
				t.Fatalf("Settle failing %d time(s): pass error %v, want none (asked again)", times, err)
			}
		} else if !errors.Is(err, errSeeTimedOut) {
			t.Fatalf("Settle failing %d times: pass error %v, want the State's", times, err)
		}
		if want := min(times, settleTries-1) + 1; st.calls != want {
			t.Errorf("Settle failing %d time(s): asked %d times, want %d", times, st.calls, want)
		}
		r, ok, err := st.Ref(context.Background(), src.ID, "2")
		if err != nil || !ok {
			t.Fatalf("Ref 2: %v, %v, %v", r, ok, err)
		}
		if times < settleTries && r.Outcome != Deposited {
			t.Errorf("Settle failing once: reference 2 is %v, want Deposited", r.Outcome)
		}
		if times == settleTries && r.Outcome != Pending {
			t.Errorf("Settle failing every time: reference 2 is %v, want still Pending (read again next pass)", r.Outcome)
		}
		audit(t, web, p)
	}
}
