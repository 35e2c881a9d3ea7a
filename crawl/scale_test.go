package crawl

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// BenchmarkCrawlScale crawls an in-process politetest web of N hosts of 5
// articles each, every answer 20 to 200 ms late, at 1 s per host, through a
// Crawler with one source per host (the strict news preset, full text,
// in-memory state, deposits counted and dropped): per host robots.txt, the
// feed, then its 5 articles, 7 requests one interval apart. The ideal is
// those 6 intervals (as politecheck states it); wall is RunOnce's.
//
// The web is HTTPS, as it is served to crawlers (a source is https only),
// so every host costs a TLS handshake on both sides, on the same cores.
// Only 1,000 hosts run unless POLITEFETCH_SCALE_HOSTS lists the sizes (for
// example "1000,3000,10000"). Run it once: -benchtime=1x.
//
// It reports wall/ideal, the auditor's violations (any fails the
// benchmark), the process's CPU per request (getrusage; the web's TLS and
// handlers included), the cores it used on average and the machine's load
// average (other work on the machine shows in both), the peak resident memory over the crawl and its
// growth per host, the heap's peak growth per host, the heap an idle host
// keeps once its pass is done (with its connection open, then with the
// client closed), the connections per host, the goroutines at peak,
// and where time beyond the ideal went: how late the last host's first
// request went out (late-start), the longest excess of a host's span over
// the ideal, and the mean excess of each host's gaps beyond the interval:
// robots.txt to the feed (which carries the host's TLS handshake: the
// auditor counts the first request from the connection's opening), the
// feed to the first article, and the later gaps.
func BenchmarkCrawlScale(b *testing.B) {
	sizes := []int{1000}
	if env := os.Getenv("POLITEFETCH_SCALE_HOSTS"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("POLITEFETCH_SCALE_HOSTS: %q is not a number of hosts", f)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			for b.Loop() {
				crawlScale(b, n, 5)
			}
		})
	}
}

func crawlScale(b *testing.B, hosts, articles int) {
	const interval = time.Second
	web, info := politetest.NewScenarioWeb(b, politetest.Scenario{Hosts: hosts, ArticlesPerHost: articles, Seed: 1,
		Latency: [2]time.Duration{20 * time.Millisecond, 200 * time.Millisecond}})
	p := testPolicy(b, StrictNews, interval)
	var sources []Source
	for _, si := range info.Sites {
		sources = append(sources, siteSource(si.Name, StrictNews, false))
	}
	deps := new(countingDeposits)
	client := newClient(b, web, p)
	c := &Crawler{Client: client, Sources: sources, Deposits: deps}

	runtime.GC()
	rss0, heap0, stacks0 := residentBytes(), memMetric("/memory/classes/heap/objects:bytes"), memMetric("/memory/classes/heap/stacks:bytes")
	var peak struct {
		sync.Mutex
		rss, heap, stacks uint64
		goroutines        int
	}
	stop, sampled := make(chan struct{}), make(chan struct{})
	// Heap and goroutine profiles halfway through the ideal: FILE and
	// FILE.goroutine.
	profile := os.Getenv("POLITEFETCH_SCALE_HEAPPROFILE")
	go func() {
		defer close(sampled)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		half := time.After(time.Duration(articles+1) * interval / 2)
		for {
			r, h, st, g := residentBytes(), memMetric("/memory/classes/heap/objects:bytes"), memMetric("/memory/classes/heap/stacks:bytes"), runtime.NumGoroutine()
			peak.Lock()
			peak.rss, peak.heap, peak.stacks, peak.goroutines = max(peak.rss, r), max(peak.heap, h), max(peak.stacks, st), max(peak.goroutines, g)
			peak.Unlock()
			select {
			case <-stop:
				return
			case <-half:
				if profile != "" {
					for name, file := range map[string]string{"heap": profile, "goroutine": profile + ".goroutine"} {
						if f, err := os.Create(file); err == nil {
							_ = pprof.Lookup(name).WriteTo(f, 0)
							f.Close()
						}
					}
				}
			case <-t.C:
			}
		}
	}()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	reps, err := c.RunOnce(context.Background())
	wall := time.Since(start)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	close(stop)
	<-sampled
	if err != nil {
		b.Fatal(err)
	}
	// A crawl past what the machine can serve may see a robots.txt or a
	// feed time out (and the site refused, as it must be): counted and
	// reported, not a failure of the benchmark.
	deposited, unread := 0, 0
	for _, r := range reps {
		if r.Err != nil || r.Trigger.Err != nil {
			if unread == 0 {
				b.Logf("%s: pass %v, trigger %v", r.Source, r.Err, r.Trigger.Err)
			}
			unread++
		}
		deposited += r.Deposited
	}
	rep := web.Audit(politetest.Policy{Interval: interval, MaxInFlight: 1, StrictRobots: true, RobotsAgent: p.Name,
		Slack: politetest.Slack(200 * time.Millisecond), HTTPSOnly: true})

	// Where time beyond the ideal went, from each host's requests.
	type span struct {
		starts []time.Time
		end    time.Time
	}
	spans := map[string]*span{}
	for _, r := range web.Requests() {
		s := spans[r.Host]
		if s == nil {
			s = new(span)
			spans[r.Host] = s
		}
		s.starts = append(s.starts, r.Start)
		if r.Finished.After(s.end) {
			s.end = r.Finished
		}
	}
	ideal := time.Duration(articles+1) * interval
	var lateStart, overMax time.Duration
	var gaps [3]time.Duration // robots.txt to feed, feed to first article, later
	var counts [3]int
	for _, s := range spans {
		ts := s.starts
		slices.SortFunc(ts, time.Time.Compare)
		lateStart = max(lateStart, ts[0].Sub(start))
		overMax = max(overMax, s.end.Sub(ts[0])-ideal)
		for i := 1; i < len(ts); i++ {
			k := min(i-1, 2)
			gaps[k] += ts[i].Sub(ts[i-1]) - interval
			counts[k]++
		}
	}
	conns := len(web.Connections())
	// What an idle host costs once its pass is done: the heap retained (the
	// Crawler's state, the client's, and the web's side of each connection
	// still open), then with the client closed (its idle connections gone).
	web.Reset() // the web's log of requests is not the crawler's memory
	runtime.GC()
	retained := int64(memMetric("/memory/classes/heap/objects:bytes")) - int64(heap0)
	client.Close()
	runtime.GC()
	retainedClosed := int64(memMetric("/memory/classes/heap/objects:bytes")) - int64(heap0)
	if profile != "" { // and one of the heap then: FILE.idle
		if f, err := os.Create(profile + ".idle"); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
	runtime.KeepAlive(c)

	mean := func(k int) float64 { return gaps[k].Seconds() * 1000 / float64(max(counts[k], 1)) }
	cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()) + time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano())
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(wall.Seconds()/ideal.Seconds(), "wall/ideal")
	b.ReportMetric(float64(len(rep.Violations)), "violations")
	b.ReportMetric(float64(rep.Requests), "requests")
	b.ReportMetric(float64(hosts*articles-deposited), "articles-missed")
	b.ReportMetric(float64(unread), "sources-failed")
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(rep.Requests, 1)), "cpu-µs/request")
	// The cores the process had on average, and the machine's load at the
	// end: a crawl far over the ideal on few cores used was starved (or
	// blocked), not busy.
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores-used")
	b.ReportMetric(loadAverage(), "load-1m")
	b.ReportMetric(float64(peak.rss)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(int64(peak.rss)-int64(rss0))/float64(hosts)/1024, "RSS-KiB/host")
	b.ReportMetric(float64(int64(peak.heap)-int64(heap0))/float64(hosts)/1024, "heap-KiB/host")
	b.ReportMetric(float64(int64(peak.stacks)-int64(stacks0))/float64(hosts)/1024, "stacks-KiB/host")
	b.ReportMetric(float64(retained)/float64(hosts)/1024, "idle-KiB/host")
	b.ReportMetric(float64(retainedClosed)/float64(hosts)/1024, "idle-closed-KiB/host")
	b.ReportMetric(float64(peak.goroutines), "goroutines-peak")
	b.ReportMetric(float64(conns)/float64(hosts), "connections/host")
	b.ReportMetric(lateStart.Seconds(), "late-start-s")
	b.ReportMetric(overMax.Seconds(), "host-over-ideal-max-s")
	b.ReportMetric(mean(0), "robots-gap-ms")
	b.ReportMetric(mean(1), "feed-gap-ms")
	b.ReportMetric(mean(2), "later-gap-ms")
	if !rep.OK() {
		b.Fatalf("auditor: %v", rep)
	}
}

// residentBytes is the process's resident memory now (Linux), or 0.
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

// loadAverage is the machine's load average over the last minute (Linux),
// or 0.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// memMetric is the named runtime/metrics memory class now.
func memMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
