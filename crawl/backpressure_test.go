package crawl

import (
	"context"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// A store that is slow holds the readers back: with queues of one between
// the stages, a blocked deposit lets at most 4 + hostReaders reads happen
// (one being deposited, one queued for it, one held by the extractor, one
// queued for extraction, one held by each of the host's readers), and the
// rest wait in the host's queue (D7). Stages shows each queue.
func TestCrawler_D7_BoundedQueuesApplyBackPressure(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("slowstore.example")
	for range 12 {
		s.AddArticle(politetest.Article{})
	}
	ds := &blockingDeposits{release: make(chan struct{})}
	c := &Crawler{Client: newClient(t, web, testPolicy(t, Vault, 5*time.Millisecond)), Deposits: ds,
		QueueSize: 1, Extractors: 1, Sources: []Source{siteSource(s.Name(), Vault, false)}}
	done := make(chan *PassReport, 1)
	go func() {
		rep, _ := c.Pass(context.Background(), s.Name())
		done <- rep
	}()
	// Wait until the readers are held back: both queues full, all read
	// that can be.
	const most = 4 + hostReaders
	var st Stage
	n := 0
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for st.Extract != 1 || st.Deposit != 1 || st.Waiting != 12-most || n != most {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the pipeline never filled: %+v, %d reads", st, n)
		}
		if all := c.Stages(); len(all) == 1 {
			st = all[0]
		}
		if n = articleRequests(web, s.Name(), s.Articles()); n > most {
			t.Fatalf("%d reads while the store was blocked, want at most %d (%+v)", n, most, st)
		}
	}
	close(ds.release)
	if rep := <-done; rep.Deposited != 12 {
		t.Fatalf("after the store caught up: %+v", rep)
	}
	if len(c.Stages()) != 0 {
		t.Fatal("a finished pass still shows its stages")
	}
}

// blockingDeposits holds every Put until release is closed.
type blockingDeposits struct {
	MemoryDeposits
	release chan struct{}
}

func (d *blockingDeposits) Put(ctx context.Context, dep *Deposit) (bool, error) {
	<-d.release
	return d.MemoryDeposits.Put(ctx, dep)
}
