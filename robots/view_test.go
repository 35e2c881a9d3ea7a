package robots_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// countingStore counts the Gets of a networked store (each one a round trip).
type countingStore struct {
	copyStore
	gets atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, host string) (robots.Record, bool, error) {
	s.gets.Add(1)
	return s.copyStore.Get(ctx, host)
}

// TestCache_StoreReadAtMostEveryRecheck: with a Store other than the
// default, a cached host's Allow and CrawlDelay read the Store once per
// StoreRecheck, not once each per request; a record another process wrote
// meanwhile (robots.txt now disallows everything, D13) is obeyed within
// StoreRecheck; and a record is never answered from after its Expires,
// however long StoreRecheck is (then robots.txt is fetched again).
func TestCache_StoreReadAtMostEveryRecheck(t *testing.T) {
	t.Parallel()
	web, c, clk, _ := setup(t, robots.StrictNews())
	store := &countingStore{}
	store.Clock = clk
	c.Store = store
	web.Site("a.example").SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /x\nCrawl-delay: 2\n"})
	ctx := context.Background()
	page := mustURL(t, "https://a.example/page")
	ask := func() error {
		t.Helper()
		if err := c.Allow(ctx, page); err != nil {
			return err
		}
		if d, ok := c.CrawlDelay(ctx, page); !ok || d != 2*time.Second {
			t.Fatalf("CrawlDelay = %v, %v", d, ok)
		}
		return nil
	}
	if err := ask(); err != nil {
		t.Fatal(err)
	}
	recheck := robots.DefaultStoreRecheck
	base := store.gets.Load()
	for range 10 {
		if err := ask(); err != nil {
			t.Fatal(err)
		}
		clk.Advance(recheck / 20)
	}
	if n := store.gets.Load() - base; n > 1 {
		t.Fatalf("%d store reads for 10 requests within StoreRecheck, want at most 1", n)
	}

	// Another process's record: the whole site disallowed.
	r, _, _ := store.MemoryStore.Get(ctx, "a.example")
	r.Body = []byte("User-agent: *\nDisallow: /\n")
	if err := store.Put(ctx, "a.example", r); err != nil {
		t.Fatal(err)
	}
	clk.Advance(recheck)
	if err := c.Allow(ctx, page); !errors.Is(err, robots.ErrDisallowed) {
		t.Fatalf("Allow one StoreRecheck after another process's record = %v, want disallowed", err)
	}

	// Past Expires, the view is not used: robots.txt is fetched again.
	c2 := &robots.Cache{Transport: c.Transport, UserAgent: agent, Policy: robots.StrictNews(), Clock: clk,
		Store: &countingStore{}, StoreRecheck: 24 * time.Hour}
	before := robotsFetches(web, "b.example")
	web.Site("b.example").SetRobots(politetest.Robots{Body: "User-agent: *\nAllow: /\n"})
	b := mustURL(t, "https://b.example/page")
	if err := c2.Allow(ctx, b); err != nil {
		t.Fatal(err)
	}
	clk.Advance(robots.StrictNews().TTL)
	if err := c2.Allow(ctx, b); err != nil {
		t.Fatal(err)
	}
	if n := robotsFetches(web, "b.example") - before; n != 2 {
		t.Fatalf("%d robots.txt fetches across the record's expiry, want 2", n)
	}
}
