package redis

import (
	"context"
	"fmt"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// counter counts round trips (a command, or a pipeline) and the time spent
// in them.
type counter struct {
	trips atomic.Int64
	nanos atomic.Int64
}

func (c *counter) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (c *counter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		c.trips.Add(1)
		c.nanos.Add(int64(time.Since(start)))
		return err
	}
}

func (c *counter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		c.trips.Add(1)
		c.nanos.Add(int64(time.Since(start)))
		return err
	}
}

// BenchmarkFetch reads articles through the whole chain, kept-alive
// loopback TLS, round robin over 64 hosts at a 1 ms interval (so that
// pacing waits little), with the in-memory stores and with every store in
// a real redis-server on loopback. It reports the Redis round trips per
// Get and the time spent in them: the added latency of sharing politeness.
// Run it once: -benchtime=2000x.
func BenchmarkFetch(b *testing.B) {
	web := politetest.NewWeb(b)
	var urls []string
	for h := range 64 {
		s := web.Site(fmt.Sprintf("bench-%d.example", h))
		urls = append(urls, s.URL(s.AddArticle(politetest.Article{}).Path))
	}
	p, err := workerPolicy(time.Millisecond)
	if err != nil {
		b.Fatal(err)
	}
	base := []fetch.Option{fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})}
	run := func(b *testing.B, opts []fetch.Option, cnt *counter) {
		c, err := fetch.New(p, append(base, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ctx := context.Background()
		for _, u := range urls { // robots.txt and the connections, outside the timing
			if _, err := c.Get(ctx, u); err != nil {
				b.Fatal(err)
			}
		}
		var t0, n0 int64
		if cnt != nil {
			t0, n0 = cnt.trips.Load(), cnt.nanos.Load()
		}
		b.ResetTimer()
		i := 0
		for b.Loop() {
			if _, err := c.Get(ctx, urls[i%len(urls)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.StopTimer()
		if cnt != nil {
			b.ReportMetric(float64(cnt.trips.Load()-t0)/float64(i), "roundtrips/op")
			b.ReportMetric(float64(cnt.nanos.Load()-n0)/float64(i)/1e3, "µs-in-redis/op")
		}
	}
	b.Run("memory", func(b *testing.B) {
		run(b, []fetch.Option{fetch.WithStores(fetch.Stores{Schedule: &fetch.MemorySchedule{}})}, nil)
	})
	b.Run("redis-cluster", func(b *testing.B) {
		clu := startCluster(b, 0)
		cnt := &counter{}
		rc := clu.client(b)
		rc.AddHook(cnt)
		st := &Store{Client: rc}
		run(b, []fetch.Option{fetch.WithStores(fetch.Stores{Schedule: st.Schedule()}), fetch.WithStores(fetch.Stores{Ledger: st.Ledger()}),
			fetch.WithStores(fetch.Stores{Robots: st.Robots()}), fetch.WithStores(fetch.Stores{Validators: st.Validators()})}, cnt)
	})
	b.Run("redis-server", func(b *testing.B) {
		srv := startServer(b, 0)
		cnt := &counter{}
		rc := goredis.NewClient(&goredis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
		defer rc.Close()
		rc.AddHook(cnt)
		st := &Store{Client: rc}
		run(b, []fetch.Option{fetch.WithStores(fetch.Stores{Schedule: st.Schedule()}), fetch.WithStores(fetch.Stores{Ledger: st.Ledger()}),
			fetch.WithStores(fetch.Stores{Robots: st.Robots()}), fetch.WithStores(fetch.Stores{Validators: st.Validators()})}, cnt)
	})
}

// BenchmarkClusterWait: what making a write wait for its replica costs.
// Each op is one claim of a host's slot (the acquire script, a write on
// the host's master) and its release, on a cluster of three masters and
// three replicas on loopback: as the Store does it, and with WAIT 1 (at
// most 100 ms) sent after the claim on the same connection of the same
// master, so the claim is acknowledged only once a replica has it.
// -benchtime=2000x.
func BenchmarkClusterWait(b *testing.B) {
	clu := startCluster(b, 0)
	rc := clu.client(b)
	ctx := context.Background()
	for _, wait := range []bool{false, true} {
		name := "no-wait"
		if wait {
			name = "wait-1"
		}
		b.Run(name, func(b *testing.B) {
			st := &Store{Client: rc, Prefix: fmt.Sprintf("w%d:", prefixes.Add(1))}
			sc := st.Schedule()
			i := 0
			for b.Loop() {
				host := fmt.Sprintf("h%d.example", i%64)
				owner := fmt.Sprint("o", i)
				i++
				if _, ok, err := sc.Acquire(ctx, fetch.Claim{Key: host, Owner: owner, Now: time.Now(), Limit: 1, TTL: time.Minute}); err != nil || !ok {
					b.Fatal(ok, err)
				}
				if wait {
					m, err := rc.MasterForKey(ctx, st.key("sched", host))
					if err != nil {
						b.Fatal(err)
					}
					// WAIT counts the writes of its own connection: a
					// pipeline is one connection, so the probe write and
					// the WAIT go together, as a Store doing so would send
					// its script and the WAIT.
					var wc *goredis.Cmd
					if _, err := m.Pipelined(ctx, func(p goredis.Pipeliner) error {
						p.HSet(ctx, st.key("sched", host), "probe", i)
						wc = p.Do(ctx, "WAIT", 1, 100)
						return nil
					}); err != nil {
						b.Fatal(err)
					}
					if n, err := wc.Int64(); err != nil || n < 1 {
						b.Fatalf("WAIT 1: %d replicas acknowledged, %v", n, err)
					}
				}
				if err := sc.Release(ctx, host, owner, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
