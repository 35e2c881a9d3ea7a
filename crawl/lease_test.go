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

// A pass that outlives its lease's TTL keeps the lease by renewing it every
// third of the TTL, and reads every article (V7: the lease is what keeps
// two passes of one source apart, so it must hold for as long as the pass
// runs). The clock moves 25 s at each deposit, and the queues of one hold
// the reader back behind the depositor: past the 60 s TTL by the third
// deposit, where a pass that did not renew would stop reading.
func TestCrawler_V7_ALongPassRenewsItsLease(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("renewed.example")
	for range 12 {
		s.AddArticle(politetest.Article{})
	}
	clk := clock.NewManual(t0)
	st := &renewWatch{renewed: make(chan error, 16)}
	c := &Crawler{Client: newClient(t, web, testPolicy(t, Vault, testInterval)), Clock: clk, State: st,
		Sources: []Source{siteSource(s.Name(), Vault, false)}, Owner: "a", LeaseTTL: time.Minute,
		QueueSize: 1, Extractors: 1} // the reader at most 4 + hostReaders articles ahead of the depositor
	renewals := 0
	c.OnEvent = func(e Event) {
		if e.Kind != EventDeposited {
			return
		}
		clk.Advance(25 * time.Second)
		select {
		case err := <-st.renewed:
			if err != nil {
				t.Errorf("renewal at %v: %v", clk.Now().Sub(t0), err)
			}
			renewals++
		case <-time.After(10 * time.Second):
			t.Errorf("no renewal within 10 s of the clock passing a third of the TTL (%v)", clk.Now().Sub(t0))
		}
	}
	rep, err := c.Pass(context.Background(), s.Name())
	if err != nil || rep.Deposited != 12 {
		t.Fatalf("pass over 300 s of a 60 s lease: %v, %+v", err, rep)
	}
	if renewals != 12 {
		t.Fatalf("%d renewals, want one per 25 s step", renewals)
	}
	// The lease was released at the pass's end: another owner takes it.
	if _, err := st.AcquireLease(context.Background(), s.Name(), "b", clk.Now(), time.Minute); err != nil {
		t.Fatalf("the lease after the pass: %v", err)
	}
}

// A renewal refused, because another owner holds the lease now, ends the
// pass with ErrLeaseLost although the pass's own lease has not yet run out
// by its clock, and leaves the other owner's lease alone (V7).
func TestCrawler_V7_ARefusedRenewalEndsThePass(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("taken.example")
	for range 20 {
		s.AddArticle(politetest.Article{})
	}
	clk := clock.NewManual(t0)
	st := &renewWatch{renewed: make(chan error, 16)}
	c := &Crawler{Client: newClient(t, web, testPolicy(t, Vault, testInterval)), Clock: clk, State: st,
		Sources: []Source{siteSource(s.Name(), Vault, false)}, Owner: "a", LeaseTTL: time.Minute}
	var lost []Event
	var mu sync.Mutex
	taken := false
	c.OnEvent = func(e Event) {
		switch e.Kind {
		case EventLeaseLost:
			mu.Lock()
			lost = append(lost, e)
			mu.Unlock()
		case EventDeposited:
			if taken {
				return
			}
			taken = true
			// An operator hands the source to b: a's lease released in
			// its name, b's acquired.
			if err := st.ReleaseLease(context.Background(), s.Name(), "a"); err != nil {
				t.Error(err)
			}
			if _, err := st.AcquireLease(context.Background(), s.Name(), "b", clk.Now(), time.Hour); err != nil {
				t.Error(err)
			}
			clk.Advance(25 * time.Second) // a third of a's TTL: its renewal is due, its lease still holds
			select {
			case err := <-st.renewed:
				if !errors.Is(err, ErrLeaseLost) {
					t.Errorf("a's renewal: %v, want ErrLeaseLost", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("no renewal within 10 s of the clock passing a third of the TTL")
			}
		}
	}
	rep, err := c.Pass(context.Background(), s.Name())
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a's pass ended with %v, want ErrLeaseLost", err)
	}
	if rep.Deposited >= 20 {
		t.Fatalf("a's pass went on after its renewal was refused: %+v", rep)
	}
	mu.Lock()
	if len(lost) == 0 || !errors.Is(lost[0].Err, ErrLeaseLost) {
		t.Fatalf("lease-lost events %+v, want the renewal's first", lost)
	}
	mu.Unlock()
	l, err := st.RenewLease(context.Background(), s.Name(), "b", clk.Now(), time.Hour)
	if err != nil || l.Owner != "b" {
		t.Fatalf("a's pass ending released b's lease: %+v, %v", l, err)
	}
}

// renewWatch is a MemoryState that reports the outcome of each renewal.
type renewWatch struct {
	MemoryState
	renewed chan error
}

func (w *renewWatch) RenewLease(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (Lease, error) {
	l, err := w.MemoryState.RenewLease(ctx, source, owner, now, ttl)
	if owner == "a" {
		w.renewed <- err
	}
	return l, err
}
