package fetch

import (
	"context"
	"sync"
	"testing"

	"github.com/politefetch/politefetch/politetest"
)

// TestSchedule_P1_TwoClientsOneBudget: two Clients (two processes) sharing one
// Schedule keep one host's interval between all their requests (P1). Each keeps
// its own connection, so the auditor's one-connection rule is not asked.
func TestSchedule_P1_TwoClientsOneBudget(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("shared.example")
	var paths []string
	for range 6 {
		paths = append(paths, s.AddArticle(politetest.Article{}).Path)
	}
	shared := &MemorySchedule{}
	p := testPolicy(Vault(), auditInterval)
	a := newClient(t, web, p, WithStores(Stores{Schedule: shared}))
	b := newClient(t, web, p, WithStores(Stores{Schedule: shared}))
	var wg sync.WaitGroup
	for i, path := range paths {
		c := a
		if i%2 == 1 {
			c = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Get(context.Background(), s.URL(path)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	ap := auditPolicy(p)
	ap.MaxInFlight, ap.MaxConnsPerHost = 2, 2
	if rep := web.Audit(ap); !rep.OK() {
		t.Fatal(rep)
	}
}
