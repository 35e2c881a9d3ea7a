package sqlite

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// countingDeposits counts deposits and keeps none: the in-memory anchor.
type countingDeposits struct{ n atomic.Int64 }

func (c *countingDeposits) Put(context.Context, *crawl.Deposit) (bool, error) {
	c.n.Add(1)
	return true, nil
}
func (c *countingDeposits) List(context.Context, string, time.Time) ([]*crawl.Deposit, error) {
	return nil, nil
}
func (c *countingDeposits) Withdraw(context.Context, string) (int, error) { return 0, nil }

// BenchmarkCrawlOnSQLite is the crawl package's BenchmarkCrawl (500 hosts
// of 20 articles, answers 20 to 200 ms late, 1 s per host, Vault) with
// every piece of state and every deposit in one SQLite file, beside the
// same crawl on the in-memory stores in the same run. The politeness bound
// is 21 intervals per host plus the last answer; span/bound is the first
// request to the last answer over it. Run it once: -benchtime=1x.
func BenchmarkCrawlOnSQLite(b *testing.B) {
	const hosts, articles = 500, 20
	for _, store := range []string{"SQLite", "Memory"} {
		b.Run(store, func(b *testing.B) {
			for b.Loop() {
				web, sources, p := benchCrawlWeb(b, hosts, articles, 20*time.Millisecond, 200*time.Millisecond)
				opts := []fetch.Option{fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
					Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})}
				var fails sync.Map
				c := &crawl.Crawler{Sources: sources, OnEvent: func(ev crawl.Event) {
					if ev.Kind == crawl.EventFailed && ev.Err != nil {
						msg := ev.Err.Error()
						if i := strings.Index(msg, "crawl-"); i >= 0 {
							msg = msg[:i]
						}
						n, _ := fails.LoadOrStore(msg, new(atomic.Int64))
						n.(*atomic.Int64).Add(1)
					}
				}}
				var counted *countingDeposits
				var db *DB
				if store == "SQLite" {
					db = openTest(b, nil)
					opts = append(opts, fetch.WithStores(fetch.Stores{Ledger: db.Ledger()}), fetch.WithStores(fetch.Stores{Robots: db.Robots()}),
						fetch.WithStores(fetch.Stores{Validators: db.Validators()}), fetch.WithStores(fetch.Stores{Schedule: db.Schedule()}))
					c.State, c.Deposits = db.CrawlState(), db.Deposits()
				} else {
					counted = new(countingDeposits)
					c.Deposits = counted
				}
				client, err := fetch.New(p, opts...)
				if err != nil {
					b.Fatal(err)
				}
				c.Client = client
				var ru0, ru1 syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
				reps, err := c.RunOnce(context.Background())
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
				client.Close()
				if err != nil {
					b.Fatal(err)
				}
				deposited := depositedAll(b, reps)
				fails.Range(func(k, v any) bool {
					b.Logf("%d failures: %s", v.(*atomic.Int64).Load(), k)
					return true
				})
				if deposited != hosts*articles {
					b.Errorf("%d deposited, want %d", deposited, hosts*articles)
				}
				rep := web.Audit(politetest.Policy{Interval: time.Second, MaxInFlight: 1, RobotsAgent: p.Name, Slack: politetest.Slack(200 * time.Millisecond)})
				reqs := web.Requests()
				first, last := reqs[0].Arrived, reqs[0].Finished
				for _, r := range reqs {
					if r.Arrived.Before(first) {
						first = r.Arrived
					}
					if r.Finished.After(last) {
						last = r.Finished
					}
				}
				bound := (articles+1)*time.Second + 200*time.Millisecond
				cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()) + time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano())
				b.ReportMetric(last.Sub(first).Seconds(), "span-s")
				b.ReportMetric(last.Sub(first).Seconds()/bound.Seconds(), "span/bound")
				b.ReportMetric(float64(len(rep.Violations)), "violations")
				b.ReportMetric(float64(cpu.Microseconds())/float64(deposited), "cpu-µs/article")
				if db != nil {
					b.ReportMetric(float64(fileSize(b, db.Path()))/(1<<20), "file-MiB")
				}
				if !rep.OK() {
					b.Errorf("auditor: %v", rep)
				}
			}
		})
	}
}

// benchCrawlWeb builds the crawl benchmarks' web: hosts sites of articles
// articles each, every answer lo to hi late, one full-text source per site
// under the Vault preset, and the fetch policy to crawl them at 1 s per host.
func benchCrawlWeb(b *testing.B, hosts, articles int, lo, hi time.Duration) (*politetest.Web, []crawl.Source, fetch.Policy) {
	b.Helper()
	web := politetest.NewWeb(b)
	var sources []crawl.Source
	for h := range hosts {
		s := web.Site(fmt.Sprintf("crawl-%d.example", h))
		s.SetLatency(lo, hi)
		for range articles {
			s.AddArticle(politetest.Article{})
		}
		sources = append(sources, crawl.Source{ID: s.Name(), Name: s.Name(),
			Trigger:  crawl.Trigger{Feeds: []string{"https://" + s.Name() + "/feed.xml"}},
			Admitted: []string{s.Name()}, FullText: true, Policy: crawl.PolicySpec{Preset: crawl.Vault}, Active: true})
	}
	p, err := crawl.PolicySpec{Preset: crawl.Vault}.Fetch()
	if err != nil {
		b.Fatal(err)
	}
	p.Name, p.Version, p.InfoURL, p.Contact = "BenchBot", "1", "https://crawler.example/about", "bot@crawler.example"
	p.Interval, p.IntervalMax = time.Second, 0
	return web, sources, p
}

// depositedAll fails b on a pass that failed and returns the deposits of
// reps.
func depositedAll(b *testing.B, reps []*crawl.PassReport) int {
	b.Helper()
	n := 0
	for _, r := range reps {
		if r.Err != nil {
			b.Fatalf("%s: %v", r.Source, r.Err)
		}
		n += r.Deposited
	}
	return n
}
