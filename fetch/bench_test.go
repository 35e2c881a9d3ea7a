package fetch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// cpuTime returns the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkOverhead compares one GET through the full chain (Client.Get: URL
// policy, robots gate, ledger gate, pacer, identity, validators, SSRF dialer, hop
// recorder, bounded decode, proof) with the same GET through a bare http.Transport,
// both over one kept-alive TLS connection to the same loopback web, in one run; the
// bare caller reads the body into memory (io.ReadAll), as Get does.
// cpu-ns/op is the whole process's CPU (client and server) per request; allocs/op
// likewise, so the difference between the two is the chain's.
//
//	go test -run '^$' -bench Overhead -benchmem ./fetch/
func BenchmarkOverhead(b *testing.B) {
	web := politetest.NewWeb(b)
	site := web.Site("bench.example")
	page := strings.Repeat("<p>An article paragraph of ordinary length.</p>\n", 200) // ~10 KB, no validators
	site.Handle("/bench", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	url := site.URL("/bench")
	report := func(b *testing.B, start time.Duration) {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
	b.Run("bare", func(b *testing.B) {
		tr := web.Transport()
		tr.DisableCompression = true
		defer tr.CloseIdleConnections()
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			resp, err := tr.RoundTrip(mustGet(url))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadAll(resp.Body); err != nil { // a caller keeps the body, as Get does
				b.Fatal(err)
			}
			resp.Body.Close()
		}
		report(b, start)
	})
	b.Run("chain", func(b *testing.B) {
		p := testPolicy(Digest(), time.Nanosecond)
		c := newClient(b, web, p)
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			res, err := c.Get(context.Background(), url)
			if err != nil || res.Status != 200 {
				b.Fatal(err)
			}
		}
		report(b, start)
	})
}

func mustGet(url string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		panic(err)
	}
	return req
}

// BenchmarkSchedule measures schedule efficiency: 500 virtual hosts × 20 articles
// at the documents' 1 s per host, every answer delayed 20–200 ms, fetched by 1,000
// goroutines sharing one Client. Each host also gets robots.txt first, so the ideal
// is 20 intervals after the first start plus the last latency: 20 s + ≤ 200 ms. It
// reports the wall time (set-up of 500 TLS connections included), the span from
// the first request's arrival to the last answer, its ratio to 20.2 s, and the
// auditor's violations. It takes about 22 s: run it once.
//
//	go test -run '^$' -bench Schedule -benchtime=1x ./fetch/
func BenchmarkSchedule(b *testing.B) {
	for b.Loop() {
		web := politetest.NewWeb(b)
		const hosts, pages = 500, 20
		var urls []string
		for h := range hosts {
			s := web.Site(fmt.Sprintf("sched-%d.example", h))
			s.SetLatency(20*time.Millisecond, 200*time.Millisecond)
			for range pages {
				s.AddArticle(politetest.Article{})
			}
		}
		for p := range pages {
			for h := range hosts {
				s := web.Site(fmt.Sprintf("sched-%d.example", h))
				urls = append(urls, s.URL(s.Articles()[p].Path))
			}
		}
		pol := Vault()
		pol.Interval = time.Second
		c := newClient(b, web, pol)
		work := make(chan string)
		var wg sync.WaitGroup
		var failed sync.Map
		start := time.Now()
		for range 1000 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for u := range work {
					if _, err := c.Get(context.Background(), u); err != nil {
						failed.Store(u, err)
					}
				}
			}()
		}
		for _, u := range urls {
			work <- u
		}
		close(work)
		wg.Wait()
		wall := time.Since(start)
		failed.Range(func(k, v any) bool { b.Errorf("%s: %v", k, v); return false })
		// The web stamps a request when its handler goroutine starts. Every host
		// here runs in phase (robots.txt for all 500 at once, then one article per
		// host per second), so each second brings a burst of 500 TLS requests to
		// one 2-core server, whose stamps then lag our writes by up to ~150 ms.
		// The audit is reported with 5 ms of slack (strict) and with 200 ms
		// (the burst's stamping lag); the pacer's own timing is exact under
		// synctest (pacer_test.go).
		strict := web.Audit(politetest.Policy{Interval: time.Second, RobotsAgent: pol.Name, Slack: 5 * time.Millisecond})
		lagged := web.Audit(politetest.Policy{Interval: time.Second, RobotsAgent: pol.Name, Slack: 200 * time.Millisecond})
		// The span the ideal refers to: from the first request's arrival to the
		// last answer's end (connection set-up before the first request excluded).
		reqs := web.Requests()
		first, last := reqs[0].Arrived, reqs[0].Finished
		for _, r := range reqs {
			if r.Finished.After(last) {
				last = r.Finished
			}
		}
		span := last.Sub(first)
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(span.Seconds(), "span-s")
		b.ReportMetric(span.Seconds()/20.2, "x-ideal")
		b.ReportMetric(float64(len(strict.Violations)), "violations-5ms")
		b.ReportMetric(float64(len(lagged.Violations)), "violations-200ms")
		b.ReportMetric(float64(strict.Requests), "requests")
		if !lagged.OK() {
			b.Error(lagged)
		}
		c.Close()
	}
}

// BenchmarkIdleHostMemory measures the bytes held per host once 100,000 hosts have
// each been read once through the layers (robots gate with its cache, ledger gate,
// pacer, identity, validators with one URL each), against an in-process far end so
// only the chain's state is counted. "busy" is right after the reads (every host
// still within its interval); "idle" is after the interval has passed.
//
//	go test -run '^$' -bench IdleHostMemory -benchtime=1x ./fetch/
func BenchmarkIdleHostMemory(b *testing.B) {
	for b.Loop() {
		const hosts = 100_000
		far := rtFunc(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/robots.txt" {
				return answer(200, "User-agent: *\nDisallow: /private\n"), nil
			}
			resp := answer(200, "ok")
			resp.Header.Set("ETag", `"v1"`)
			return resp, nil
		})
		ledger := &backoff.Ledger{Policy: backoff.Digest()}
		pacer := &Pacer{Interval: 20 * time.Millisecond}
		store := &MemoryStore{Max: hosts}
		below := &Identity{UserAgent: "BenchBot/1 (+https://b.example)", Next: &Validators{Store: store, Next: far}}
		rstore := &robots.MemoryStore{MaxEntries: hosts}
		cache := &robots.Cache{Transport: &LedgerGate{Ledger: ledger, Next: &sharedPacer{p: pacer, next: below}},
			UserAgent: "BenchBot", Store: rstore}
		chain := &RobotsGate{Robots: cache, Next: &LedgerGate{Ledger: ledger, Next: &sharedPacer{p: pacer, next: below}}}
		var m0, m1, m2 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		var wg sync.WaitGroup
		for w := range 1000 { // robots.txt, then the page one interval later: in parallel
			wg.Add(1)
			go func() {
				defer wg.Done()
				for h := w; h < hosts; h += 1000 {
					req, _ := http.NewRequest(http.MethodGet, "https://h"+fmt.Sprint(h)+".example/a", nil)
					resp, err := chain.RoundTrip(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		time.Sleep(100 * time.Millisecond) // every host's interval passes
		// The next request's sweep (amortised in normal use) drops the idle hosts.
		pacer.mu.Lock()
		pacer.ops = len(pacer.hosts) + 64
		pacer.sweepLocked(time.Now())
		pacer.mu.Unlock()
		runtime.GC()
		runtime.ReadMemStats(&m2)
		b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/hosts, "busy-B/host")
		b.ReportMetric(float64(int64(m2.HeapAlloc)-int64(m0.HeapAlloc))/hosts, "idle-B/host")
		b.ReportMetric(float64(pacer.Hosts()), "pacer-hosts-idle")
		b.ReportMetric(float64(store.Len()), "validators")
		b.ReportMetric(float64(rstore.Len()), "robots-entries")
	}
}
