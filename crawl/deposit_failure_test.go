package crawl

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// failingDeposits is a MemoryDeposits whose first fails Puts fail.
type failingDeposits struct {
	MemoryDeposits
	fails atomic.Int32
}

var errDepositFailed = errors.New("test: the store failed")

func (d *failingDeposits) Put(ctx context.Context, dep *Deposit) (bool, error) {
	if d.fails.Add(-1) >= 0 {
		return false, errDepositFailed
	}
	return d.MemoryDeposits.Put(ctx, dep)
}

// restartable is the state a crawler process keeps on file: every store of
// the chain and of the crawl, shared by the clients built over it, so a
// second client and Crawler model the process restarted.
type restartable struct {
	validators fetch.MemoryStore
	robots     robots.MemoryStore
	ledger     backoff.MemoryStore
	schedule   fetch.MemorySchedule
	state      MemoryState
}

func (r *restartable) client(t *testing.T, web *politetest.Web, p fetch.Policy) *fetch.Client {
	return newClient(t, web, p, fetch.WithStores(fetch.Stores{Validators: &r.validators}), fetch.WithStores(fetch.Stores{Robots: &r.robots}),
		fetch.WithStores(fetch.Stores{Ledger: &r.ledger}), fetch.WithStores(fetch.Stores{Schedule: &r.schedule}))
}

// An article whose first read succeeded but whose deposit failed is read
// again on the next pass, after a restart on the same stores, with a full
// 200, and deposited: its first read left no validators that would turn the
// second into a 304 for content never kept (V12).
func TestCrawler_V12_FailedDepositReadAgainInFull(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("restart.example")
	a := s.AddArticle(politetest.Article{})
	p := testPolicy(t, Digest, testInterval) // conditional reads on
	var keep restartable
	deps := &failingDeposits{}
	deps.fails.Store(1)
	src := siteSource(s.Name(), Digest, false)
	first := &Crawler{Client: keep.client(t, web, p), Sources: []Source{src}, State: &keep.state, Deposits: deps}
	if rep := mustPass(t, first, src.ID); rep.Deposited != 0 || rep.Failed != 1 {
		t.Fatalf("first pass %+v, want the deposit failed", rep)
	}
	first.Client.Close() // the process ends: its connections with it
	second := &Crawler{Client: keep.client(t, web, p), Sources: []Source{src}, State: &keep.state, Deposits: deps}
	if rep := mustPass(t, second, src.ID); rep.Deposited != 1 || rep.Failed != 0 {
		t.Fatalf("second pass %+v, want the article deposited", rep)
	}
	var reads []politetest.Request
	for _, r := range web.Requests() {
		if r.Path == a.Path {
			reads = append(reads, r)
		}
	}
	if len(reads) != 2 {
		t.Fatalf("%d reads of the article, want 2", len(reads))
	}
	for i, r := range reads {
		if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" || r.Status != 200 {
			t.Fatalf("read %d: status %d, If-None-Match %q, If-Modified-Since %q; want an unconditional 200",
				i+1, r.Status, r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since"))
		}
	}
	if got, _ := deps.List(context.Background(), src.ID, time.Time{}); len(got) != 1 || got[0].Proof == nil {
		t.Fatalf("deposits %v, want the article with its proof", got)
	}
	audit(t, web, p)
}

// The publisher's failures are not ours: fifteen articles answered with a
// 500 are each failed (and read again on a later pass), but the pass goes
// on to read every one of them; the consecutive deposit failures that stop
// a pass are our own (V12, document 003).
func TestCrawler_V12_PublishersFailuresDoNotStopThePass(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("broken.example")
	for range 15 {
		a := s.AddArticle(politetest.Article{})
		s.Misbehave(a.Path, politetest.Behaviour{Kind: politetest.ServerError})
	}
	p := testPolicy(t, Vault, testInterval)
	var ev events
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{siteSource(s.Name(), Vault, false)}, OnEvent: ev.on}
	rep := mustPass(t, c, s.Name())
	if rep.Stopped || rep.Failed != 15 || rep.Deposited != 0 {
		t.Fatalf("report %+v, want 15 failed and the pass not stopped", rep)
	}
	if n := articleRequests(web, s.Name(), s.Articles()); n != 15 {
		t.Fatalf("%d article requests, want all 15 read", n)
	}
	if n := len(ev.of(EventPassStopped)); n != 0 {
		t.Fatalf("%d pass-stopped events, want none", n)
	}
	// None of them counted: the store's consecutive failures are still 0.
	if n, err := c.StateStore().Failure(context.Background(), s.Name(), rep.Pass, true); err != nil || n != 1 {
		t.Fatalf("store's consecutive failures after one more = %d, %v; want 1", n, err)
	}
	audit(t, web, p)
}

// After MaxFailures (10) consecutive failures of our own to deposit (the
// Deposits store failing every write) the pass stops, having sent no read
// past the tenth; the count is the store's, per pass (V12).
func TestCrawler_V12_TenConsecutiveFailuresStopThePass(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("full.example")
	for range 15 {
		s.AddArticle(politetest.Article{})
	}
	p := testPolicy(t, Vault, testInterval)
	deps := &failingDeposits{}
	deps.fails.Store(1000)
	var ev events
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{siteSource(s.Name(), Vault, false)}, Deposits: deps, OnEvent: ev.on}
	rep := mustPass(t, c, s.Name())
	if !rep.Stopped || rep.Failed != 10 || rep.Deposited != 0 {
		t.Fatalf("report %+v, want stopped after 10 failed deposits", rep)
	}
	if n := articleRequests(web, s.Name(), s.Articles()); n != 10 {
		t.Fatalf("%d article requests, want 10", n)
	}
	if len(ev.of(EventPassStopped)) != 1 {
		t.Fatal("no pass-stopped event")
	}
	for _, e := range ev.of(EventFailed) {
		if !errors.Is(e.Err, errDepositFailed) {
			t.Fatalf("failure event %+v, want the store's error", e)
		}
	}
	// The counter is the store's: one more failure in that pass makes 11.
	if n, err := c.StateStore().Failure(context.Background(), s.Name(), rep.Pass, true); err != nil || n != 11 {
		t.Fatalf("store's consecutive failures after the pass = %d, %v; want 11", n, err)
	}
	audit(t, web, p)
}

// The State keeps each source's tally: reads, deposits, the publisher's
// failures, our deposit failures and the trigger's reads, each counted
// once; a pass's second run over the same state adds to it.
func TestCrawler_TallyKeptInTheState(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("tally.example")
	for range 3 {
		s.AddArticle(politetest.Article{})
	}
	broken := s.AddArticle(politetest.Article{})
	s.Misbehave(broken.Path, politetest.Behaviour{Kind: politetest.ServerError})
	deps := &failingDeposits{}
	deps.fails.Store(1)
	st := new(MemoryState)
	p := testPolicy(t, Vault, testInterval)
	c := &Crawler{Client: newClient(t, web, p), State: st, Deposits: deps, Sources: []Source{siteSource(s.Name(), Vault, false)}}
	rep := mustPass(t, c, s.Name())
	if rep.Deposited != 2 || rep.Failed != 2 {
		t.Fatalf("pass %+v, want 2 deposited, 2 failed (one 500, one deposit)", rep)
	}
	got, _ := st.Tally(context.Background(), s.Name())
	want := Tally{Reads: 4, TriggerReads: 1, Deposits: 2, Failures: 1, DepositFailures: 1}
	if got != want {
		t.Fatalf("tally %+v,\nwant %+v", got, want)
	}
	if n := articleRequests(web, s.Name(), s.Articles()); n != got.Reads {
		t.Fatalf("the web saw %d article requests, the tally %d reads", n, got.Reads)
	}
	audit(t, web, p)
}

// A read cut short by the caller (a Ctrl-C) is no failure: neither the
// pass report nor the tally counts it, and the article stays pending.
func TestCrawler_CancelledReadIsNoFailure(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("ctrlc.example")
	a := s.AddArticle(politetest.Article{})
	s.Misbehave(a.Path, politetest.Behaviour{Kind: politetest.SlowFirstByte, Delay: 30 * time.Second})
	st := new(MemoryState)
	c := &Crawler{Client: newClient(t, web, testPolicy(t, Vault, testInterval)), State: st, Sources: []Source{siteSource(s.Name(), Vault, false)}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			if articleRequests(web, s.Name(), s.Articles()) > 0 {
				cancel() // the read is under way
				return
			}
		}
	}()
	rep, err := c.Pass(ctx, s.Name())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("pass ended with %v, want the caller's cancellation", err)
	}
	if rep.Failed != 0 {
		t.Fatalf("report %+v: a cancelled read counted as failed", rep)
	}
	got, _ := st.Tally(context.Background(), s.Name())
	if got.Failures != 0 || got.Reads != 1 {
		t.Fatalf("tally %+v, want 1 read and no failure", got)
	}
	if r, _, _ := st.Ref(context.Background(), s.Name(), refKey(t, st, s.Name())); r.Outcome != Pending {
		t.Fatalf("the article's outcome %v, want pending", r.Outcome)
	}
}

func refKey(t *testing.T, st State, source string) string {
	t.Helper()
	refs, err := st.Refs(context.Background(), source)
	if err != nil || len(refs) != 1 {
		t.Fatalf("refs %v, %v; want one", refs, err)
	}
	return refs[0].Key
}

// failureCalls counts a State's Failure calls by outcome.
type failureCalls struct {
	State
	failed, succeeded atomic.Int64
}

func (s *failureCalls) Failure(ctx context.Context, source string, pass uint64, failed bool) (int, error) {
	if failed {
		s.failed.Add(1)
	} else {
		s.succeeded.Add(1)
	}
	return s.State.Failure(ctx, source, pass, failed)
}

// A pass tells the State every failed deposit and the first success after
// one (which resets the consecutive count), not every success: once the
// count is none in the pass, a success changes nothing, and only the pass
// holding the source's lease changes it. The count stays the State's: the
// failures before the successes are undone there (V12).
func TestCrawler_V12_SuccessesAfterTheCountIsNoneAskTheStateNothing(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("mostly.example")
	for range 6 {
		s.AddArticle(politetest.Article{})
	}
	p := testPolicy(t, Vault, testInterval)
	deps := &failingDeposits{}
	deps.fails.Store(2)
	st := &failureCalls{State: new(MemoryState)}
	c := &Crawler{Client: newClient(t, web, p), State: st, Sources: []Source{siteSource(s.Name(), Vault, false)}, Deposits: deps}
	rep := mustPass(t, c, s.Name())
	if rep.Stopped || rep.Failed != 2 || rep.Deposited != 4 {
		t.Fatalf("report %+v, want 2 failed and 4 deposited", rep)
	}
	if f, ok := st.failed.Load(), st.succeeded.Load(); f != 2 || ok != 1 {
		t.Fatalf("the State was told %d failures and %d successes; want 2 and 1", f, ok)
	}
	if n, err := st.State.Failure(context.Background(), s.Name(), rep.Pass, true); err != nil || n != 1 {
		t.Fatalf("the State's consecutive failures after one more = %d, %v; want 1", n, err)
	}
	audit(t, web, p)
}
