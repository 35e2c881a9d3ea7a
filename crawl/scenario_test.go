package crawl

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// A crawl of 200 simulated publishers, a tenth of them rude, under each of
// the three presets, one source per site with a WordPress backlog on every
// tenth: the auditor finds no violation (P1, S2, S3, S4, D2, V7, V9, V11).
// The presets' intervals are scaled down to 100 ms; with -short, 50 sites;
// under the race detector, one article per site.
func TestCrawler_P1_ScenarioOf200HostsHasNoViolation(t *testing.T) {
	hosts, articles := 200, 3
	if raceEnabled { // the race detector's TLS is slow: fewer articles, as many hosts
		articles = 1
	}
	if testing.Short() {
		hosts = 50
	}
	for _, preset := range []Preset{StrictNews, Digest, Vault} {
		t.Run(string(preset), func(t *testing.T) {
			web, info := politetest.NewScenarioWeb(t, politetest.Scenario{
				Hosts: hosts, ArticlesPerHost: articles, RudeShare: 0.1, Seed: 11,
				Latency: [2]time.Duration{time.Millisecond, 10 * time.Millisecond},
			})
			p := testPolicy(t, preset, 100*time.Millisecond)
			c := &Crawler{Client: newClient(t, web, p)}
			for i, s := range info.Sites {
				c.Sources = append(c.Sources, siteSource(s.Name, preset, i%10 == 0))
			}
			reps, err := c.RunOnce(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			deposited, want := 0, 0
			for i, r := range reps {
				if r.Err != nil {
					t.Fatalf("%s: %v", r.Source, r.Err)
				}
				deposited += r.Deposited
				if !info.Sites[i].Rude {
					want += len(info.Sites[i].Articles)
				}
			}
			if deposited < want {
				t.Errorf("%d articles deposited, want at least the %d of the well-behaved sites", deposited, want)
			}
			rep := web.Audit(auditPolicy(p))
			if !rep.OK() {
				t.Fatalf("auditor: %v", rep)
			}
			t.Logf("%s: %d requests to %d hosts, %d deposited, 0 violations", preset, rep.Requests, rep.Hosts, deposited)
		})
	}
}

// BenchmarkCrawl crawls 500 hosts of 20 articles each, every answer 20 to
// 200 ms late, under a 1 s interval per host, through a Crawler with one
// source per host: robots.txt, the feed, then the 20 articles. The
// politeness bound is 21 intervals per host (22 requests) plus the last
// answer's latency: 21.2 s. It reports the wall time against that bound, the auditor's
// violations, the process's CPU per article (the web runs in the same
// process, so this includes the server's TLS and handlers) and its peak
// RSS. Deposits are counted and dropped, so the figures are the crawler's,
// not an in-memory store's holding 10,000 envelopes. Run it once:
// -benchtime=1x.
func BenchmarkCrawl(b *testing.B) {
	const hosts, articles = 500, 20
	for b.Loop() {
		web := politetest.NewWeb(b)
		var sources []Source
		for h := range hosts {
			s := web.Site(fmt.Sprintf("crawl-%d.example", h))
			s.SetLatency(20*time.Millisecond, 200*time.Millisecond)
			for range articles {
				s.AddArticle(politetest.Article{})
			}
			sources = append(sources, siteSource(s.Name(), Vault, false))
		}
		p := testPolicy(b, Vault, time.Second)
		c := &Crawler{Client: newClient(b, web, p), Sources: sources, Deposits: new(countingDeposits)}
		var ru0 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		start := time.Now()
		reps, err := c.RunOnce(context.Background())
		wall := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		var ru1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		deposited := 0
		for _, r := range reps {
			if r.Err != nil {
				b.Fatalf("%s: %v", r.Source, r.Err)
			}
			deposited += r.Deposited
		}
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
		// 22 requests per host: 21 intervals, and then the last answer,
		// which may take up to the web's 200 ms.
		bound := (articles+1)*time.Second + 200*time.Millisecond
		// Where time beyond the bound went: hosts starting late (the first
		// start of the last host to begin: 500 TLS set-ups at once), and
		// each host's drift (its last start minus its first, beyond 21
		// intervals).
		firstAt, lastAt := map[string]time.Time{}, map[string]time.Time{}
		for _, r := range reqs {
			if f, ok := firstAt[r.Host]; !ok || r.Start.Before(f) {
				firstAt[r.Host] = r.Start
			}
			if l, ok := lastAt[r.Host]; !ok || r.Start.After(l) {
				lastAt[r.Host] = r.Start
			}
		}
		var lateStart, drift, maxDrift time.Duration
		for h, f := range firstAt {
			lateStart = max(lateStart, f.Sub(first))
			d := lastAt[h].Sub(f) - (articles+1)*time.Second
			drift += d
			maxDrift = max(maxDrift, d)
		}
		// The drift split in two: the first gap of each host (robots.txt
		// to the feed), which carries the host's first TLS set-up (the
		// auditor counts a connection's first request from its opening,
		// the pacer the next interval from the request's write), and the
		// mean of the others beyond the interval.
		starts := map[string][]time.Time{}
		for _, r := range reqs {
			starts[r.Host] = append(starts[r.Host], r.Start)
		}
		var firstGap, laterGap time.Duration
		var laterGaps int
		for _, ts := range starts {
			slices.SortFunc(ts, time.Time.Compare)
			for i := 1; i < len(ts); i++ {
				if excess := ts[i].Sub(ts[i-1]) - time.Second; i == 1 {
					firstGap += excess
				} else {
					laterGap += excess
					laterGaps++
				}
			}
		}
		b.ReportMetric(firstGap.Seconds()/float64(len(starts)), "first-gap-excess-s")
		b.ReportMetric(laterGap.Seconds()*1000/float64(max(laterGaps, 1)), "later-gap-excess-ms")
		b.ReportMetric(lateStart.Seconds(), "late-start-s")
		b.ReportMetric(drift.Seconds()/float64(len(firstAt)), "drift-mean-s")
		b.ReportMetric(maxDrift.Seconds(), "drift-max-s")
		cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()) + time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano())
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(last.Sub(first).Seconds(), "span-s")
		b.ReportMetric(bound.Seconds(), "bound-s")
		b.ReportMetric(last.Sub(first).Seconds()/bound.Seconds(), "span/bound")
		b.ReportMetric(float64(len(rep.Violations)), "violations")
		b.ReportMetric(float64(len(reqs)), "requests")
		b.ReportMetric(float64(cpu.Microseconds())/float64(deposited), "cpu-µs/article")
		b.ReportMetric(float64(ru1.Maxrss)/1024, "peak-RSS-MiB")
		if !rep.OK() {
			b.Errorf("auditor: %v", rep)
		}
	}
}

// countingDeposits counts deposits and keeps none.
type countingDeposits struct{ n atomic.Int64 }

func (d *countingDeposits) Put(ctx context.Context, dep *Deposit) (bool, error) {
	d.n.Add(1)
	return true, nil
}

func (d *countingDeposits) List(ctx context.Context, source string, since time.Time) ([]*Deposit, error) {
	return nil, nil
}

func (d *countingDeposits) Withdraw(ctx context.Context, source string) (int, error) { return 0, nil }
