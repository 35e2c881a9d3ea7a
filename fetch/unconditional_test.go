package fetch

import (
	"context"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestUnconditional: a Get with Unconditional sends no validators the chain
// holds for its URL, so it gets a full 200 however many times the URL was
// read before, and keeps none from its answer; the next ordinary Get after it
// is conditional only on what the earlier ordinary Gets kept.
func TestUnconditional(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("news.example")
	a := s.AddArticle(politetest.Article{})
	store := &MemoryStore{}
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond), WithStores(Stores{Validators: store}))
	ctx := context.Background()
	u := s.URL(a.Path)

	// Unconditional first: nothing is kept.
	res, err := c.Get(ctx, u, GetOptions{Unconditional: true})
	if err != nil || !res.Complete() {
		t.Fatalf("first unconditional read: %v", err)
	}
	if store.Len() != 0 {
		t.Fatalf("an unconditional read kept %d validators", store.Len())
	}
	// An ordinary read keeps them; an unconditional one then ignores them.
	if res, err := c.Get(ctx, u); err != nil || !res.Complete() {
		t.Fatalf("ordinary read: %v", err)
	}
	if store.Len() != 1 {
		t.Fatalf("an ordinary read kept %d validators, want 1", store.Len())
	}
	for i := range 2 {
		res, err := c.Get(ctx, u, GetOptions{Unconditional: true})
		if err != nil || !res.Complete() || res.NotModified {
			t.Fatalf("unconditional read %d: status %d, err %v", i, res.Status, err)
		}
		reqs := web.Requests()
		last := reqs[len(reqs)-1]
		if last.Header.Get("If-None-Match") != "" || last.Header.Get("If-Modified-Since") != "" {
			t.Fatalf("unconditional read %d sent validators: %v", i, last.Header)
		}
	}
	// The ordinary read after them is still conditional on what it kept.
	res, err = c.Get(ctx, u)
	if err != nil || !res.NotModified {
		t.Fatalf("ordinary read after: status %d, err %v", res.Status, err)
	}
}
