package crawl

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
)

// A pass whose lease runs out (its renewal stalled, the clock moved on)
// sends nothing more: another owner may hold the lease by then (V7).
func TestCrawler_V7_PassStopsWhenItsLeaseRunsOut(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("lease.example")
	for range 6 {
		s.AddArticle(politetest.Article{})
	}
	clk := clock.NewManual(t0)
	st := new(MemoryState)
	var other Lease
	var otherErr error
	c := &Crawler{Client: newClient(t, web, testPolicy(t, Vault, testInterval)), Clock: clk, State: st,
		Sources: []Source{siteSource(s.Name(), Vault, false)}, Owner: "a", LeaseTTL: time.Minute}
	c.OnEvent = func(e Event) {
		if e.Kind == EventDeposited && other.Owner == "" {
			// Past a's lease, all at once: b takes the source over.
			clk.Set(t0.Add(2 * time.Minute))
			other, otherErr = st.AcquireLease(context.Background(), s.Name(), "b", clk.Now(), time.Hour)
		}
	}
	rep, err := c.Pass(context.Background(), s.Name())
	if otherErr != nil || other.Owner != "b" {
		t.Fatalf("b could not take the expired lease: %v", otherErr)
	}
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a's pass ended with %v, want ErrLeaseLost", err)
	}
	// The first deposit, and at most the reads already under way: one per
	// reader of the host.
	if n := articleRequests(web, s.Name(), s.Articles()); n > 1+hostReaders {
		t.Fatalf("%d articles read by a pass whose lease had run out after the first (report %+v)", n, rep)
	}
	l, err := st.RenewLease(context.Background(), s.Name(), "b", clk.Now(), time.Hour)
	if err != nil || l.Owner != "b" {
		t.Fatalf("a's pass ending released b's lease: %+v, %v", l, err)
	}
}

// A withdrawal during a pass waits for it to end: nothing it read is
// deposited after, and the pass sends nothing more (S8, V13).
func TestCrawler_S8_WithdrawDuringAPass(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("withdrawn.example")
	for range 8 {
		s.AddArticle(politetest.Article{})
	}
	withdrawn := make(chan error, 1)
	var once sync.Once
	c := &Crawler{Client: newClient(t, web, testPolicy(t, Vault, testInterval)), Sources: []Source{siteSource(s.Name(), Vault, false)}}
	c.OnEvent = func(e Event) {
		if e.Kind == EventDeposited {
			once.Do(func() {
				_ = c.Deactivate(s.Name()) // at once; Withdraw, which waits for the pass, in the background
				go func() {
					_, err := c.Withdraw(context.Background(), s.Name())
					withdrawn <- err
				}()
			})
		}
	}
	_, err := c.Pass(context.Background(), s.Name())
	if !errors.Is(err, ErrInactive) {
		t.Fatalf("pass ended with %v, want ErrInactive", err)
	}
	if err := <-withdrawn; err != nil {
		t.Fatal(err)
	}
	deps, _ := c.Deposited().List(context.Background(), s.Name(), time.Time{})
	refs, _ := c.StateStore().Refs(context.Background(), s.Name())
	if len(deps) != 0 || len(refs) != 0 {
		t.Fatalf("after the withdrawal: %d deposits, %d refs", len(deps), len(refs))
	}
	if n := articleRequests(web, s.Name(), s.Articles()); n > 1+hostReaders {
		t.Fatalf("%d articles read: the pass went on after the withdrawal", n)
	}
}

// A worker on another machine that died holds its sources for one lease at
// most: its lease refuses a pass, and Run reads the source once the lease
// expires (DefaultLeaseTTL, 30 s), never before (V7).
func TestCrawler_V7_DeadWorkersSourcesResumeWithinOneTTL(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("elsewhere.example")
	s.AddArticle(politetest.Article{})
	clk := clock.NewManual(t0)
	st := new(MemoryState)
	// The dead worker's last lease, taken at t0 with the default TTL.
	dead := "worker-7.other-dc pid=4242 start=1 boot=b pidns=1 id=x"
	if _, err := st.AcquireLease(context.Background(), s.Name(), dead, t0, DefaultLeaseTTL); err != nil {
		t.Fatal(err)
	}
	ended := make(chan *PassReport, 4)
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), Clock: clk, State: st,
		Sources: []Source{siteSource(s.Name(), StrictNews, false)},
		OnEvent: func(e Event) {
			if e.Kind == EventPassEnded {
				ended <- e.Pass
			}
		}}
	_, err := c.Pass(context.Background(), s.Name())
	var le *LeaseError
	if !errors.As(err, &le) || le.Held.Owner != dead || !le.Held.Expires.Equal(t0.Add(DefaultLeaseTTL)) || len(web.Requests()) != 0 {
		t.Fatalf("pass under the dead worker's lease: %v, want it held until t0+%v and nothing sent", err, DefaultLeaseTTL)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	clk.Advance(DefaultLeaseTTL - time.Second)
	clk.Advance(time.Second)
	r := <-ended
	if r.Err != nil || r.Deposited != 1 || r.Start.Before(t0.Add(DefaultLeaseTTL)) {
		t.Fatalf("pass %+v, want the article read once the lease expired at t0+%v", r, DefaultLeaseTTL)
	}
}
