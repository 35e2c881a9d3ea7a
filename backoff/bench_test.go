package backoff_test

import (
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
)

const benchHosts = 100_000

func hostNames(n int) []string {
	hs := make([]string, n)
	for i := range hs {
		hs[i] = "news-" + strconv.Itoa(i) + ".example"
	}
	return hs
}

// BenchmarkCheckObserveParallel: every goroutine checks a host and reports
// its answer, over 100,000 hosts; one answer in 16 is a 429, one in 4 a
// success that clears the record (Ledger with the in-memory store).
func BenchmarkCheckObserveParallel(b *testing.B) {
	hosts := hostNames(benchHosts)
	l := &backoff.Ledger{Policy: backoff.StrictNews()}
	var seq atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := seq.Add(1) * 7919
		for pb.Next() {
			i++
			h := hosts[i%benchHosts]
			now := t0.Add(time.Duration(i) * time.Millisecond)
			d := l.Check(ctx, h, backoff.Article, now)
			if !d.Allowed {
				continue
			}
			st := 200
			switch {
			case i%16 == 0:
				st = 429
			case i%4 != 0:
				st = 404 // neutral: no store write
			}
			if _, err := l.Observe(ctx, h, backoff.Outcome{Status: st}, now); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCheckAllowed: the common path, a host with nothing against it.
func BenchmarkCheckAllowed(b *testing.B) {
	l := &backoff.Ledger{}
	b.ReportAllocs()
	for b.Loop() {
		l.Check(ctx, "news.example", backoff.Article, t0)
	}
}

// BenchmarkMemoryPerHost reports the heap held per host: bytes/idle-host
// for 100,000 hosts that were read successfully (the ledger keeps nothing),
// and bytes/refused-host for 100,000 hosts holding a refusal record (key
// string included).
func BenchmarkMemoryPerHost(b *testing.B) {
	for b.Loop() {
		for _, refused := range []bool{false, true} {
			heap := func() uint64 {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				return ms.HeapAlloc
			}
			before := heap()
			store := new(backoff.MemoryStore)
			l := &backoff.Ledger{Store: store}
			for i := range benchHosts {
				h := "news-" + strconv.Itoa(i) + ".example"
				st := 200
				if refused {
					st = 403
				}
				if _, err := l.Observe(ctx, h, backoff.Outcome{Status: st}, t0); err != nil {
					b.Fatal(err)
				}
			}
			after := heap()
			per := float64(int64(after)-int64(before)) / benchHosts
			if refused {
				b.ReportMetric(per, "bytes/refused-host")
			} else {
				b.ReportMetric(per, "bytes/idle-host")
			}
			runtime.KeepAlive(l)
			runtime.KeepAlive(store)
		}
	}
}
