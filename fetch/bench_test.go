package fetch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
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
//	go test -run '^$' -bench 'Overhead$' -benchmem ./fetch/
func BenchmarkOverhead(b *testing.B) {
	web := politetest.NewWeb(b)
	site := web.Site("bench.example")
	handleBench(site)
	url := site.URL("/bench")
	tr := web.Transport()
	tr.DisableCompression = true
	runOverhead(b, url, tr, func() *Client { return newClient(b, web, testPolicy(Digest(), time.Nanosecond)) })
}

// runOverhead runs the two sides of an overhead benchmark: GETs of url through
// the bare transport (the caller keeps the body, as Get does) and through the
// chain, reporting the process's CPU per request. A third, alternating, sends
// blocks of overheadBlock requests through each in turn and reports each
// side's CPU per request and their ratio (chain/bare): the two sides then
// share every moment of the machine's state, which two runs apart do not,
// and on a shared machine that state drifts by more than the chain costs.
// Its ns/op is that of a pair of blocks.
func runOverhead(b *testing.B, url string, bare *http.Transport, chain func() *Client) {
	report := func(b *testing.B, start time.Duration) {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
	bareGet := func(b *testing.B) {
		resp, err := bare.RoundTrip(mustGet(url))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadAll(resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
	chainGet := func(b *testing.B, c *Client) {
		res, err := c.Get(context.Background(), url)
		if err != nil || res.Status != 200 {
			b.Fatal(res, err)
		}
	}
	b.Run("bare", func(b *testing.B) {
		defer bare.CloseIdleConnections()
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			bareGet(b)
		}
		report(b, start)
	})
	b.Run("chain", func(b *testing.B) {
		c := chain()
		defer c.Close()
		b.ReportAllocs()
		start := cpuTime()
		for b.Loop() {
			chainGet(b, c)
		}
		report(b, start)
	})
	b.Run("alternating", func(b *testing.B) {
		defer bare.CloseIdleConnections()
		c := chain()
		defer c.Close()
		var bareCPU, chainCPU time.Duration
		n := 0
		for b.Loop() {
			t0 := cpuTime()
			for range overheadBlock {
				bareGet(b)
			}
			t1 := cpuTime()
			for range overheadBlock {
				chainGet(b, c)
			}
			bareCPU, chainCPU = bareCPU+t1-t0, chainCPU+cpuTime()-t1
			n += overheadBlock
		}
		b.ReportMetric(float64(bareCPU)/float64(n), "bare-cpu-ns/op")
		b.ReportMetric(float64(chainCPU)/float64(n), "chain-cpu-ns/op")
		b.ReportMetric(float64(chainCPU)/float64(bareCPU), "chain/bare")
	})
}

// overheadBlock is how many requests the alternating overhead benchmark sends
// through one side before the other: enough that what a request leaves to
// run after it returns (the connection's read loop putting it back) is a
// small part of a block's CPU.
const overheadBlock = 50

// benchWebEnv, when set, makes the test binary serve the benchmark's page from a
// politetest web and nothing else (see serveBenchWeb).
const benchWebEnv = "POLITEFETCH_BENCH_WEB"

// benchPage is the page both overhead benchmarks read: ~10 KB of HTML, no
// validators, sent chunked (no Content-Length), as many CMSs do.
var benchPage = strings.Repeat("<p>An article paragraph of ordinary length.</p>\n", 200)

func handleBench(site *politetest.Site) {
	site.Handle("/bench", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, benchPage)
	}))
}

// serveBenchWeb runs a politetest web with the benchmark's page, prints its
// address and its CA certificate (PEM) on stdout, and serves until stdin closes.
// The page is on bench.example and, when benchWebEnv is a number n above 1, on
// n more sites named idle-0.example … (see idleHost).
func serveBenchWeb() {
	web, err := politetest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	handleBench(web.Site("bench.example"))
	if n, err := strconv.Atoi(os.Getenv(benchWebEnv)); err == nil && n > 1 {
		for h := range n {
			handleBench(web.Site(idleHost(h)))
		}
	}
	fmt.Println(web.Addr())
	pem.Encode(os.Stdout, &pem.Block{Type: "CERTIFICATE", Bytes: web.CACert().Raw})
	io.Copy(io.Discard, os.Stdin)
	web.Close()
}

// idleHost names the h-th extra site of the child web.
func idleHost(h int) string { return "idle-" + strconv.Itoa(h) + ".example" }

// startRemoteWeb starts serveBenchWeb in a child process, with sites extra
// sites beside bench.example (0 or 1: none), and returns its address and CA
// pool.
func startRemoteWeb(b *testing.B, sites int) (string, *x509.CertPool) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchWebEnv+"="+strconv.Itoa(max(sites, 1)))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	out := bufio.NewReader(stdout)
	addr, err := out.ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	var ca bytes.Buffer
	for !strings.Contains(ca.String(), "END CERTIFICATE") {
		line, err := out.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		ca.WriteString(line)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca.Bytes()) {
		b.Fatal("no CA certificate from the child web")
	}
	return strings.TrimSpace(addr), pool
}

// fixedResolver resolves every name to one address (the child web's).
type fixedResolver netip.Addr

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

// BenchmarkOverheadClientCPU is BenchmarkOverhead with the web in a child
// process, so cpu-ns/op is the client's CPU alone: what the chain costs the
// service that uses it, against a bare http.Transport reading the same page.
//
//	go test -run '^$' -bench OverheadClientCPU -benchmem ./fetch/
func BenchmarkOverheadClientCPU(b *testing.B) {
	addr, pool := startRemoteWeb(b, 0)
	ap := netip.MustParseAddrPort(addr)
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	bare := &http.Transport{DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: pool}, DisableCompression: true}
	runOverhead(b, "https://bench.example/bench", bare, func() *Client {
		c, err := New(testPolicy(Digest(), time.Nanosecond),
			WithNetwork(Network{Resolver: fixedResolver(ap.Addr()), Dial: dial, RootCAs: pool, Allow: []netip.Prefix{loopback}}))
		if err != nil {
			b.Fatal(err)
		}
		return c
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
// the first request's start to the last answer, its ratio to 20.2 s, how late
// the last host began and how far the hosts drifted, and the auditor's
// violations with 2 ms of slack. It takes about 22 s: run it once.
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
		pol := withIdentity(Vault())
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
		// On Linux the web times a request's start by the kernel's receive
		// time of its bytes, so the audit needs 2 ms of slack (clock
		// granularity); elsewhere the web's handlers, which start late in
		// these bursts, time it, and 200 ms are needed.
		rep := web.Audit(politetest.Policy{Interval: time.Second, RobotsAgent: pol.Name, Slack: politetest.Slack(200 * time.Millisecond)})
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
		// Where the time beyond the ideal went: hosts starting late (the
		// first start of the last host to begin), and each host's own drift
		// (its last start minus its first, beyond 20 intervals).
		firstAt := map[string]time.Time{}
		lastAt := map[string]time.Time{}
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
			d := lastAt[h].Sub(f) - pages*time.Second
			drift += d
			maxDrift = max(maxDrift, d)
		}
		b.ReportMetric(lateStart.Seconds(), "late-start-s")
		b.ReportMetric(drift.Seconds()/float64(len(firstAt)), "drift-mean-s")
		b.ReportMetric(maxDrift.Seconds(), "drift-max-s")
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(span.Seconds(), "span-s")
		b.ReportMetric(span.Seconds()/20.2, "x-ideal")
		b.ReportMetric(float64(len(rep.Violations)), "violations")
		b.ReportMetric(float64(rep.Requests), "requests")
		if !rep.OK() {
			b.Error(rep)
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
		pacer := &pacer{Interval: 20 * time.Millisecond}
		store := &MemoryStore{Max: hosts}
		below := &identityLayer{UserAgent: "BenchBot/1 (+https://b.example)", Next: &conditional{Store: store, Next: far}}
		rstore := &robots.MemoryStore{MaxEntries: hosts}
		cache := &robots.Cache{Transport: &ledgerGate{Ledger: ledger, Next: &sharedPacer{p: pacer, next: below}},
			UserAgent: "BenchBot", Store: rstore}
		chain := &robotsGate{Robots: cache, Next: &ledgerGate{Ledger: ledger, Next: &sharedPacer{p: pacer, next: below}}}
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

// BenchmarkIdleConnMemory measures what a Client keeps per host once its hosts
// are idle, connections included: two waves of 1,000 hosts, each host read once
// through the whole chain (robots.txt, then a page one interval later) over TLS,
// from a web in a child process so that only the client's memory is counted.
// Each wave is measured once the base transport's idle-connection bound (see
// idleConnTimeout) and every host's interval have passed, after a GC:
// "idle-B/host" is the heap held per host after the first wave, which includes
// the room net/http's and the chain's tables grew to for 1,000 hosts at once;
// "next-idle-B/host" is what each host of the second wave added to it, the
// cost of one more idle host. "busy-B/host" is the first wave's right after
// its reads, every connection open. Goroutine stacks are reported apart: the
// runtime keeps the room they took.
//
//	go test -run '^$' -bench IdleConnMemory -benchtime=1x ./fetch/
func BenchmarkIdleConnMemory(b *testing.B) {
	const wave = 1000
	addr, pool := startRemoteWeb(b, 2*wave)
	ap := netip.MustParseAddrPort(addr)
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	type sample struct {
		heap, stack uint64
		goroutines  int
	}
	measure := func() sample {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return sample{m.HeapAlloc, m.StackInuse, runtime.NumGoroutine()}
	}
	perHost := func(a, b uint64) float64 { return float64(int64(b)-int64(a)) / wave }
	for b.Loop() {
		p := withIdentity(StrictNews())
		c, err := New(p, WithNetwork(Network{Resolver: fixedResolver(ap.Addr()), Dial: dial, RootCAs: pool, Allow: []netip.Prefix{loopback}}))
		if err != nil {
			b.Fatal(err)
		}
		// The runtime keeps every goroutine's descriptor for reuse: have as
		// many as the reads will need exist once before, so that they are
		// not counted as the hosts'.
		park := make(chan struct{})
		var pw sync.WaitGroup
		for range 4 * wave {
			pw.Go(func() { <-park })
		}
		close(park)
		pw.Wait()
		read := func(first int) {
			var wg sync.WaitGroup
			for h := first; h < first+wave; h++ {
				wg.Go(func() {
					res, err := c.Get(context.Background(), "https://"+idleHost(h)+"/bench")
					if err != nil || res.Status != 200 {
						b.Error(res, err)
					}
				})
			}
			wg.Wait()
		}
		idle := func() sample {
			time.Sleep(idleConnTimeout(c.policy) + p.Interval + time.Second)
			c.pacer.mu.Lock() // the next request's sweep (amortised in normal use) drops the idle hosts
			c.pacer.ops = len(c.pacer.hosts) + 64
			c.pacer.sweepLocked(time.Now())
			c.pacer.mu.Unlock()
			return measure()
		}
		m0 := measure()
		read(0)
		busy := measure()
		m1 := idle()
		read(wave)
		m2 := idle()
		b.ReportMetric(perHost(m0.heap, busy.heap), "busy-B/host")
		b.ReportMetric(float64(busy.goroutines-m0.goroutines)/wave, "busy-goroutines/host")
		b.ReportMetric(perHost(m0.heap, m1.heap), "idle-B/host")
		b.ReportMetric(perHost(m1.heap, m2.heap), "next-idle-B/host")
		b.ReportMetric(perHost(m0.stack, m1.stack), "idle-stack-B/host")
		b.ReportMetric(float64(m2.goroutines-m0.goroutines), "idle-goroutines")
		c.Close()
	}
}
