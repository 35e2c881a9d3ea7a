package robots_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
	"github.com/politefetch/politefetch/robots/robotstest"
)

func TestMemoryStoreConformance(t *testing.T) {
	robotstest.Run(t, func(*testing.T) robots.Store { return &robots.MemoryStore{} })
}

// TestMemoryStoreBounds proves the in-memory store's three bounds: hosts,
// bytes and time.
func TestMemoryStoreBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := clock.NewManual(epoch)
	t.Run("Hosts", func(t *testing.T) {
		s := &robots.MemoryStore{MaxEntries: 3, Clock: clk}
		for i := range 5 {
			s.Put(ctx, fmt.Sprintf("h%d", i), robots.Record{Expires: epoch.Add(time.Hour)})
		}
		if s.Len() != 3 {
			t.Fatalf("Len = %d, want 3", s.Len())
		}
		if _, ok, _ := s.Get(ctx, "h0"); ok {
			t.Fatal("least recently used host kept")
		}
		if _, ok, _ := s.Get(ctx, "h4"); !ok {
			t.Fatal("newest host evicted")
		}
	})
	t.Run("Bytes", func(t *testing.T) {
		s := &robots.MemoryStore{MaxBytes: 1 << 20, Clock: clk}
		body := make([]byte, 100<<10)
		for i := range 20 {
			s.Put(ctx, fmt.Sprintf("h%d", i), robots.Record{Body: body, Expires: epoch.Add(time.Hour)})
		}
		if s.Bytes() > 1<<20 {
			t.Fatalf("Bytes = %d, want at most %d", s.Bytes(), 1<<20)
		}
		if s.Len() < 4 {
			t.Fatalf("Len = %d: evicted too much", s.Len())
		}
	})
	t.Run("Time", func(t *testing.T) {
		clk := clock.NewManual(epoch)
		s := &robots.MemoryStore{Retain: time.Hour, Clock: clk}
		s.Put(ctx, "a", robots.Record{Expires: epoch.Add(time.Minute)})
		clk.Advance(time.Hour) // expired, but within Retain: kept for UseLastGood
		if _, ok, _ := s.Get(ctx, "a"); !ok {
			t.Fatal("expired entry forgotten within Retain")
		}
		clk.Advance(time.Minute + time.Second)
		if _, ok, _ := s.Get(ctx, "a"); ok {
			t.Fatal("entry kept past Retain")
		}
		if s.Len() != 0 {
			t.Fatalf("Len = %d, want 0", s.Len())
		}
	})
}

// tinyRobots answers every robots.txt request in process with a small
// file: the 100,000-host tests measure the Cache's memory, not TLS.
type tinyRobots struct{}

func (tinyRobots) RoundTrip(req *http.Request) (*http.Response, error) {
	body := "User-agent: *\nDisallow: /private/\nCrawl-delay: 1\nSitemap: https://" + req.URL.Host + "/sitemap.xml\n"
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/plain"}},
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req}, nil
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestCache100kHostsBoundedMemory proves the cache stays bounded by
// MaxHosts over 100,000 hosts, and its heap with it.
func TestCache100kHostsBoundedMemory(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	const maxHosts = 5_000
	store := &robots.MemoryStore{MaxEntries: maxHosts}
	c := &robots.Cache{Transport: tinyRobots{}, UserAgent: agent, Store: store}
	ctx := context.Background()
	before := heap()
	u := &url.URL{Scheme: "https", Path: "/private/x"}
	for i := range n {
		u.Host = fmt.Sprintf("host-%d.example", i)
		if err := c.Allow(ctx, u); err == nil {
			t.Fatalf("%s: allowed, want refused", u)
		}
	}
	after := heap()
	if store.Len() != maxHosts {
		t.Fatalf("store holds %d hosts, want %d", store.Len(), maxHosts)
	}
	grown := int64(after) - int64(before)
	perHost := grown / maxHosts
	t.Logf("%d hosts seen, %d held, heap grew %d KiB (%d B per host held)", n, store.Len(), grown>>10, perHost)
	if grown > 32<<20 {
		t.Fatalf("heap grew %d MiB for %d hosts held, want < 32 MiB", grown>>20, maxHosts)
	}
}

// BenchmarkCacheManyHosts is Allow over an ever-growing set of hosts,
// each a fetch (in process), with the default bounds.
func BenchmarkCacheManyHosts(b *testing.B) {
	c := &robots.Cache{Transport: tinyRobots{}, UserAgent: agent}
	ctx := context.Background()
	u := &url.URL{Scheme: "https", Path: "/page"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		u.Host = fmt.Sprintf("host-%d.example", i)
		i++
		if err := c.Allow(ctx, u); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheHit is Allow on a cached host.
func BenchmarkCacheHit(b *testing.B) {
	c := &robots.Cache{Transport: tinyRobots{}, UserAgent: agent}
	ctx := context.Background()
	u := &url.URL{Scheme: "https", Host: "a.example", Path: "/page"}
	if err := c.Allow(ctx, u); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Allow(ctx, u); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCacheHitGate is what fetch.RobotsGate asks per request of a
// cached host: Allow, then CrawlDelay.
func BenchmarkCacheHitGate(b *testing.B) {
	c := &robots.Cache{Transport: tinyRobots{}, UserAgent: agent}
	ctx := context.Background()
	u := &url.URL{Scheme: "https", Host: "a.example", Path: "/page"}
	if err := c.Allow(ctx, u); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Allow(ctx, u); err != nil {
			b.Fatal(err)
		}
		if d, ok := c.CrawlDelay(ctx, u); !ok || d != time.Second {
			b.Fatal("no Crawl-delay")
		}
	}
}

// BenchmarkCacheHitQuery is Allow on a cached host for a URL with a query,
// whose request URI is put together (one allocation).
func BenchmarkCacheHitQuery(b *testing.B) {
	c := &robots.Cache{Transport: tinyRobots{}, UserAgent: agent}
	ctx := context.Background()
	u := &url.URL{Scheme: "https", Host: "a.example", Path: "/page", RawQuery: "id=42&lang=en"}
	if err := c.Allow(ctx, u); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Allow(ctx, u); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCacheHitDoesNotAllocate pins the per-request cost of a cached host:
// Allow and CrawlDelay for an already-normal host and a path without a
// query make no allocation (the host key is computed once per call, and
// hostkey's fast path returns such a host as is).
func TestCacheHitDoesNotAllocate(t *testing.T) {
	c := &robots.Cache{Transport: tinyRobots{}, UserAgent: agent}
	ctx := context.Background()
	u := &url.URL{Scheme: "https", Host: "a.example", Path: "/page"}
	if err := c.Allow(ctx, u); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := c.Allow(ctx, u); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Allow on a cached host allocates %v times per run, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if d, ok := c.CrawlDelay(ctx, u); !ok || d != time.Second {
			t.Fatalf("CrawlDelay = %v, %v", d, ok)
		}
	}); n != 0 {
		t.Errorf("CrawlDelay on a cached host allocates %v times per run, want 0", n)
	}
}

// copyStore serialises as a networked store does: every Record it returns
// is a fresh copy, its Body never the slice that was put.
type copyStore struct{ robots.MemoryStore }

func (s *copyStore) Put(ctx context.Context, host string, r robots.Record) error {
	r.Body = bytes.Clone(r.Body)
	return s.MemoryStore.Put(ctx, host, r)
}

func (s *copyStore) Get(ctx context.Context, host string) (robots.Record, bool, error) {
	r, ok, err := s.MemoryStore.Get(ctx, host)
	r.Body = bytes.Clone(r.Body)
	return r, ok, err
}

// TestCache_StoreOfCopies: a Store that hands back copies of plain records
// gives the same answers as the default one (the Cache parses each body
// once into its own view).
func TestCache_StoreOfCopies(t *testing.T) {
	t.Parallel()
	robotstest.Run(t, func(*testing.T) robots.Store { return &copyStore{} })
	web, c, _, _ := setup(t, robots.StrictNews())
	c.Store = &copyStore{}
	web.Site("a.example").SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /x\nCrawl-delay: 3\nSitemap: https://a.example/s.xml\n"})
	web.Site("b.example").SetRobots(politetest.Robots{Failure: politetest.FailReset})
	ctx := context.Background()
	for range 3 {
		if err := c.Allow(ctx, mustURL(t, "https://a.example/x/1")); !errors.Is(err, robots.ErrDisallowed) {
			t.Fatalf("Allow(/x/1) = %v, want refused", err)
		}
		if err := c.Allow(ctx, mustURL(t, "https://a.example/y")); err != nil {
			t.Fatalf("Allow(/y) = %v", err)
		}
	}
	if d, ok := c.CrawlDelay(ctx, mustURL(t, "https://a.example/")); !ok || d != 3*time.Second {
		t.Errorf("CrawlDelay = %v, %v", d, ok)
	}
	if sm, _ := c.Sitemaps(ctx, "a.example"); len(sm) != 1 {
		t.Errorf("Sitemaps = %q", sm)
	}
	var re *robots.DisallowedError
	if err := c.Allow(ctx, mustURL(t, "https://b.example/")); !errors.As(err, &re) || re.Err == nil || re.Outcome != robots.DisallowAll {
		t.Errorf("Allow(unreachable) = %v; want a refusal carrying the failure text", err)
	}
}

// TestCache_StoreOfCopiesParsesOncePerFetch: with a Store that hands back
// copies, a cached host's body is parsed once, when fetched, not on every
// request (parsing the smallest file costs more allocations than the
// copy a Get makes).
func TestCache_StoreOfCopiesParsesOncePerFetch(t *testing.T) {
	c := &robots.Cache{Transport: tinyRobots{}, UserAgent: agent, Store: &copyStore{}}
	ctx := context.Background()
	u := &url.URL{Scheme: "https", Host: "a.example", Path: "/page"}
	if err := c.Allow(ctx, u); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := c.Allow(ctx, u); err != nil {
			t.Fatal(err)
		}
	}); n > 1 {
		t.Errorf("Allow on a cached host of a copying store allocates %v times per run, want only the store's copy", n)
	}
}
