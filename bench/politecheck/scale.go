package main

// scale: our crawl library at thousands of hosts, in one process with the
// simulated web (so the figures of the process include the web's side).

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

func scale(args []string) error {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	sizes := fs.String("hosts", "1000,3000,10000", "numbers of hosts, comma-separated, each crawled once")
	articles := fs.Int("articles", 5, "articles per host")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the runs (crawler and web together) to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Println("| hosts × articles | wall / ideal | requests | violations | articles deposited | process CPU per request | peak RSS (process) | retained heap per host | goroutines at peak |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-hosts: %q is not a number of hosts", s)
		}
		if err := scaleOne(n, *articles); err != nil {
			return fmt.Errorf("%d hosts: %w", n, err)
		}
	}
	return nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func maxRSS() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return int64(ru.Maxrss) * 1024 // Linux: kilobytes
}

func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func scaleOne(hosts, articles int) error {
	web, err := politetest.Start()
	if err != nil {
		return err
	}
	defer web.Close()
	info, err := politetest.Scenario{Hosts: hosts, ArticlesPerHost: articles, Seed: 1,
		Latency: [2]time.Duration{20 * time.Millisecond, 200 * time.Millisecond}}.Build(web)
	if err != nil {
		return err
	}
	pol := fetch.StrictNews()
	pol.Name, pol.Version, pol.InfoURL = "ScaleBench", "1", "https://politefetch.example/bench"
	pol.Interval = time.Second
	client, err := fetch.New(pol, fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext,
		RootCAs: web.RootCAs(), Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	if err != nil {
		return err
	}
	defer client.Close()
	var sources []crawl.Source
	for i, si := range info.Sites {
		sources = append(sources, crawl.Source{
			ID: "src-" + strconv.Itoa(i+1), Name: si.Name,
			Trigger:  crawl.Trigger{Feeds: []string{"https://" + si.Name + "/feed.xml"}},
			Admitted: []string{si.Name},
			FullText: true,
			Read:     crawl.Read{Method: crawl.ReadPage},
			Policy:   crawl.PolicySpec{Preset: crawl.StrictNews},
			Active:   true,
		})
	}
	deps := &countingDeposits{}
	c := &crawl.Crawler{Client: client, Sources: sources, Deposits: deps}

	before := heapInuse()
	cpu0 := cpuTime()
	var peakG atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if g := int64(runtime.NumGoroutine()); g > peakG.Load() {
				peakG.Store(g)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	start := time.Now()
	reports, err := c.RunOnce(context.Background())
	wall := time.Since(start)
	close(stop)
	<-sampled
	cpu := cpuTime() - cpu0
	if err != nil {
		return err
	}
	deposited, feedFailed, failed := 0, 0, 0
	var firstErr error
	for _, r := range reports {
		deposited += r.Deposited
		failed += r.Failed + r.Refused
		if err := cmp.Or(r.Err, r.Trigger.Err); err != nil {
			feedFailed++
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	rep := web.Audit(politetest.Policy{Interval: time.Second, StrictRobots: true, Slack: politetest.Slack(200 * time.Millisecond)})
	web.Reset() // the web's log of requests is not the crawler's memory
	after := heapInuse()
	ideal := time.Duration(articles+1) * time.Second // robots.txt, the feed and the articles, a second apart
	viol := "0"
	if !rep.OK() {
		var parts []string
		for _, rule := range politetest.Rules() {
			if n := rep.Count(rule); n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", rule, n))
			}
		}
		viol = strings.Join(parts, ", ")
	}
	retained := int64(after) - int64(before)
	fmt.Printf("| %d × %d | %.2f s / %.2f s = %.3f× | %d | %s | %d / %d | %.0f µs | %.0f MiB | %.1f KiB | %d |\n",
		hosts, articles, wall.Seconds(), ideal.Seconds(), wall.Seconds()/ideal.Seconds(), rep.Requests, viol,
		deposited, hosts*articles, float64(cpu.Microseconds())/float64(max(rep.Requests, 1)),
		float64(maxRSS())/(1<<20), float64(retained)/float64(hosts)/1024, peakG.Load())
	if feedFailed > 0 || failed > 0 {
		fmt.Printf("|  | %d sources' feeds unread (the first: %v); %d articles failed or refused |\n", feedFailed, firstErr, failed)
	}
	return nil
}

// countingDeposits counts deposits and keeps none, so that the heap the
// pass leaves is the crawler's and the client's own.
type countingDeposits struct{ n atomic.Int64 }

func (d *countingDeposits) Put(context.Context, *crawl.Deposit) (bool, error) {
	d.n.Add(1)
	return true, nil
}

func (d *countingDeposits) List(context.Context, string, time.Time) ([]*crawl.Deposit, error) {
	return nil, nil
}

func (d *countingDeposits) Withdraw(context.Context, string) (int, error) { return 0, nil }
