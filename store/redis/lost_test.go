package redis

import (
	"context"
	"errors"
	"net/netip"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// seeFailsOnce is the Redis State whose See of one key fails once, as a
// call does that times out on a loaded machine.
type seeFailsOnce struct {
	*State
	key    string
	mu     sync.Mutex
	failed bool
}

func (s *seeFailsOnce) See(ctx context.Context, source string, r crawl.RefState, now time.Time) (crawl.RefState, bool, error) {
	s.mu.Lock()
	fail := r.Key == s.key && !s.failed
	s.failed = s.failed || fail
	s.mu.Unlock()
	if fail {
		return crawl.RefState{}, false, &Error{Op: "state see", Key: source, Err: errors.New("i/o timeout")}
	}
	return s.State.See(ctx, source, r, now)
}

// TestWorkers_V12_RefNotRecordedReadByNextWorker: a worker reads a
// source's feed, Redis does not take one of its references (a call timed
// out), and its pass reads the others. The source's trigger stays due in
// Redis, so the next worker's pass reads the feed again and that article
// too: none is lost, none read twice. This is what TestWorkers_ClockSkew
// and TestWorkers_P1_ThreeProcessesOneBudget met under load: the trigger
// moved on, the next pass found nothing due and the reference unknown, and
// the test counted the source finished with an article never read.
func TestWorkers_V12_RefNotRecordedReadByNextWorker(t *testing.T) {
	base := realStore(t)
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 3, Seed: 62})
	site := info.Sites[0]
	p, err := workerPolicy(100 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	worker := func(s *Store, st crawl.State, owner string) *crawl.Crawler {
		return inProcessWorker(t, web, p, s, st, owner, site.Name)
	}
	ctx := context.Background()
	first := worker(base, &seeFailsOnce{State: base.State(), key: "2"}, "worker-1")
	rep, err := first.Pass(ctx, site.Name)
	first.Client.Close()
	if err != nil || rep.Deposited != 2 || !rep.TriggerRead {
		t.Fatalf("first worker's pass: %+v, %v; want the feed read and its 2 recorded articles deposited", rep, err)
	}
	other := otherProcess(t, base)
	sc, err := other.State().Schedule(ctx, site.Name)
	if err != nil {
		t.Fatal(err)
	}
	if sc.NextTrigger.After(time.Now()) {
		t.Fatalf("schedule after a reference was not recorded: %+v, want the trigger still due", sc)
	}
	second := worker(other, other.State(), "worker-2")
	defer second.Client.Close()
	rep, err = second.Pass(ctx, site.Name)
	if err != nil || rep.Deposited != 1 || !rep.TriggerRead {
		t.Fatalf("next worker's pass: %+v, %v; want the feed read again and the third article deposited", rep, err)
	}
	reads := map[string]int{}
	for _, q := range web.Requests() {
		reads[q.Path]++
	}
	for _, a := range site.Articles {
		if reads[a.Path] != 1 {
			t.Errorf("%s read %d times, want once", a.Path, reads[a.Path])
		}
	}
	if reads["/feed.xml"] != 2 {
		t.Errorf("feed read %d times, want twice", reads["/feed.xml"])
	}
	ap := politetest.Policy{
		Interval: p.Interval, MaxInFlight: 1, MaxConnsPerHost: 2, StrictRobots: p.Robots.Status != 0,
		UserAgent: regexp.MustCompile("^" + regexp.QuoteMeta(p.UserAgent()) + "$"), RobotsAgent: p.Name,
		Slack: politetest.Slack(p.Interval / 2), HTTPSOnly: true,
		AllowedHeaders: []string{"User-Agent", "Accept", "Accept-Encoding", "If-None-Match", "If-Modified-Since"},
	}
	if a := web.Audit(ap); !a.OK() {
		t.Errorf("auditor: %v", a)
	}
}

// inProcessWorker is a crawler of site in this process, whose fetch client
// keeps its schedule, ledger, robots.txt records and validators in s, and
// whose crawl state is st.
func inProcessWorker(t *testing.T, web *politetest.Web, p fetch.Policy, s *Store, st crawl.State, owner, site string) *crawl.Crawler {
	t.Helper()
	c, err := fetch.New(p, fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}),
		fetch.WithStores(fetch.Stores{Schedule: s.Schedule(), Ledger: s.Ledger(), Robots: s.Robots(), Validators: s.Validators()}))
	if err != nil {
		t.Fatal(err)
	}
	return &crawl.Crawler{Client: c, State: st, Owner: owner, Deposits: &crawl.MemoryDeposits{},
		Sources: []crawl.Source{workerSource(site)}}
}
