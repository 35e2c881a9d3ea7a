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
	return newClient(t, web, p, fetch.WithValidatorStore(&r.validators), fetch.WithRobotsStore(&r.robots),
		fetch.WithLedgerStore(&r.ledger), fetch.WithSchedule(&r.schedule))
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
