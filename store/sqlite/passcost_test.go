package sqlite

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/politefetch/politefetch/clock"
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// BenchmarkPassNothingNew is what a pass of a source costs when its feed
// has nothing new: after a first pass that reads and deposits the feed's
// articles, each iteration moves the clock past the feed's interval and
// runs one more pass (for a feed of 10 articles and of 50), whose feed read is answered 304 on the validators in
// the store. It reports, per pass, the writes submitted to the store, the
// WAL bytes they appended (the WAL truncated before each pass; a
// checkpoint later copies at most as many pages into the file again), the
// requests the web saw, and, with -benchmem, the allocations of the whole
// process (crawler, store and the simulated web together).
func BenchmarkPassNothingNew(b *testing.B) {
	for _, n := range []int{10, 50} {
		b.Run(fmt.Sprintf("articles=%d", n), func(b *testing.B) { passNothingNew(b, n) })
	}
}

func passNothingNew(b *testing.B, articles int) {
	ctx := context.Background()
	web := politetest.NewWeb(b)
	s := web.Site("quiet.example")
	for range articles {
		s.AddArticle(politetest.Article{})
	}
	clk := clock.NewManual(time.Now()) // the crawler's: when the feed is due
	db := openTest(b, nil)
	p, err := crawl.PolicySpec{Preset: crawl.StrictNews}.Fetch()
	if err != nil {
		b.Fatal(err)
	}
	p.Name, p.Version, p.InfoURL, p.Contact = "BenchBot", "1", "https://crawler.example/about", "bot@crawler.example"
	p.Interval, p.IntervalMax = 5*time.Millisecond, 0 // the fetch chain on real time, paced briefly
	fs, cs := db.Stores()
	client, err := fetch.New(p, fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}), fetch.WithStores(fs))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Close() })
	src := crawl.Source{ID: "quiet", Name: "Quiet", Trigger: crawl.Trigger{Feeds: []string{"https://quiet.example/feed.xml"}},
		Admitted: []string{"quiet.example"}, FullText: true, Policy: crawl.PolicySpec{Preset: crawl.StrictNews}, Active: true}
	c := &crawl.Crawler{Sources: []crawl.Source{src}, Client: client, Clock: clk}
	c.State, c.Deposits = cs.State, cs.Deposits
	rep, err := c.Pass(ctx, "quiet")
	if err != nil || rep.Deposited != articles {
		b.Fatalf("first pass: %+v, %v; want %d deposited", rep, err, articles)
	}
	walBytes := func() int64 {
		fi, err := os.Stat(db.path + "-wal")
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	var wal, writes, reqs int64
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		clk.Advance(time.Hour)
		if _, err := db.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			b.Fatal(err)
		}
		w0, r0 := db.writes.Load(), len(web.Requests())
		b.StartTimer()
		rep, err := c.Pass(ctx, "quiet")
		b.StopTimer()
		if err != nil || !rep.TriggerRead || rep.Trigger.NotModified != 1 || rep.Queued != 0 || rep.Deposited != 0 {
			b.Fatalf("pass: %+v, %v; want the feed read and nothing new", rep, err)
		}
		wal += walBytes()
		writes += db.writes.Load() - w0
		reqs += int64(len(web.Requests()) - r0)
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(writes)/n, "writes/pass")
	b.ReportMetric(float64(wal)/n, "WAL-bytes/pass")
	b.ReportMetric(float64(reqs)/n, "requests/pass")
}
