package sqlite

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/robots"
)

// benchDeposit is a 10 KB article with its proof; n makes it unique.
func benchDeposit(n int64) *crawl.Deposit {
	env := bytes.Repeat([]byte("<p>Paragraph of a ten-kilobyte article body, as received.</p>\n"), 200)[:10<<10]
	env = append(env, fmt.Sprintf("<!-- %d -->", n)...)
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second)
	u := fmt.Sprintf("https://news-%d.example/2026/06/01/article-%d/", n%500, n)
	d := &crawl.Deposit{Source: fmt.Sprintf("news-%d", n%500), Key: fmt.Sprint(n), URL: u, ReadAt: at, Envelope: env, MediaType: "text/html",
		Proof: &provenance.Proof{Schema: provenance.Schema, RequestedURL: u, FinalURL: u, ReadAt: at,
			Hops: []provenance.Hop{{URL: u, Status: 200, ConnectedIP: "192.0.2.7", TLSVersion: "TLS 1.3", CipherSuite: "TLS_AES_128_GCM_SHA256", SNI: "news.example",
				HandshakeAt: at, Chain: []string{strings.Repeat("M", 560), strings.Repeat("M", 560)}}},
			Digest: provenance.DigestOf(env), Length: int64(len(env))}}
	d.Digest = d.Sum()
	return d
}

// BenchmarkDeposits puts distinct 10 KB deposits with their proofs, one
// at a time and from 32 goroutines per CPU (which the group commit
// batches): committed to the WAL (the default: a kill -9 loses none), and
// synced to disk before Put returns (SyncDeposits: a power failure loses
// none either); the anchor is crawl.MemoryDeposits in the same run.
func BenchmarkDeposits(b *testing.B) {
	for _, c := range []struct {
		name string
		new  func(b *testing.B) crawl.Deposits
	}{
		{"SQLite", func(b *testing.B) crawl.Deposits { return openTest(b, nil).Deposits() }},
		{"SQLiteSynced", func(b *testing.B) crawl.Deposits { return openTest(b, &Options{SyncDeposits: true}).Deposits() }},
		{"Memory", func(*testing.B) crawl.Deposits { return &crawl.MemoryDeposits{} }},
	} {
		for _, par := range []bool{false, true} {
			name := c.name
			if par {
				name += "/parallel"
			}
			b.Run(name, func(b *testing.B) {
				ds := c.new(b)
				var n atomic.Int64
				put := func() {
					if _, err := ds.Put(context.Background(), benchDeposit(n.Add(1))); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(10 << 10)
				if par {
					b.SetParallelism(32) // as many deposits at once as a crawl of many hosts makes
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							put()
						}
					})
				} else {
					for b.Loop() {
						put()
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deposits/s")
			})
		}
	}
}

// stores is one set of the chain's state stores.
type stores struct {
	ledger     backoff.Store
	robots     robots.Store
	schedule   fetch.Schedule
	validators fetch.ValidatorStore
}

// BenchmarkStatePerFetch does what the chain asks of its stores for one
// fetch of a page on a host already known and in good standing: the
// ledger's record (Check; Observe of a success writes nothing), the robots
// record, the schedule's claim with its in-flight lease, the request's
// start and the lease's release, the URL's validators read and a new pair
// kept. Hosts rotate over 10,000. The anchor is the in-memory stores in
// the same run.
func BenchmarkStatePerFetch(b *testing.B) {
	for _, c := range []struct {
		name string
		new  func(b *testing.B) stores
	}{
		{"SQLite", func(b *testing.B) stores {
			db := openTest(b, nil)
			return stores{db.Ledger(), db.Robots(), db.Schedule(), db.Validators()}
		}},
		{"Memory", func(*testing.B) stores {
			return stores{&backoff.MemoryStore{}, &robots.MemoryStore{MaxEntries: 20000}, &fetch.MemorySchedule{}, &fetch.MemoryStore{}}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			s := c.new(b)
			const hosts = 10_000
			now := time.Now()
			body := []byte("User-agent: *\nDisallow: /private/\n")
			for h := range hosts {
				host := fmt.Sprintf("news-%d.example", h)
				if err := s.robots.Put(ctx, host, robots.Record{Outcome: robots.ParseBody, Status: 200, Body: body, FetchedAt: now, Expires: now.Add(24 * time.Hour)}); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			for b.Loop() {
				i++
				host := fmt.Sprintf("news-%d.example", i%hosts)
				u := "https://" + host + "/article-" + fmt.Sprint(i)
				at := now.Add(time.Duration(i) * time.Second) // each host's gap has passed
				if _, _, err := s.ledger.Get(ctx, host); err != nil {
					b.Fatal(err)
				}
				if _, _, err := s.robots.Get(ctx, host); err != nil {
					b.Fatal(err)
				}
				if _, ok, err := s.schedule.Acquire(ctx, fetch.Claim{Key: host, Owner: "p1", Now: at, Gap: time.Second, Limit: 1, TTL: time.Minute}); err != nil || !ok {
					b.Fatalf("Acquire = %v, %v", ok, err)
				}
				if err := s.schedule.Started(ctx, host, "p1", at); err != nil {
					b.Fatal(err)
				}
				if _, _, err := s.validators.Get(ctx, u); err != nil {
					b.Fatal(err)
				}
				if err := s.schedule.Release(ctx, host, "p1", at); err != nil {
					b.Fatal(err)
				}
				if err := s.validators.Put(ctx, u, fetch.Validator{ETag: `"abc"`}); err != nil {
					b.Fatal(err)
				}
				if err := s.ledger.Update(ctx, host, func(cur backoff.State, ok bool) (backoff.State, bool) { return cur, ok }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLedgerCheck is the refusal ledger's Check of a host with no
// record, as the fetch chain makes one before every request, while another
// goroutine commits a write every 200 µs (as a crawl's deposits and state
// do, each commit emptying the readers' page caches): from the file every
// time (shared), and under the DB's hold on the schedule (held), where
// only the host's first Check reads the file.
func BenchmarkLedgerCheck(b *testing.B) {
	for _, held := range []bool{false, true} {
		name := "shared"
		if held {
			name = "held"
		}
		b.Run(name, func(b *testing.B) {
			db := openTest(b, nil)
			if held {
				h, err := db.HoldSchedule(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				defer h.Close()
			}
			ledger := &backoff.Ledger{Store: db.Ledger()}
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-time.After(200 * time.Microsecond):
					}
					if err := db.Validators().Put(context.Background(), fmt.Sprintf("https://w%d.example/feed", i%64), fetch.Validator{ETag: fmt.Sprint(i)}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
			hosts := make([]string, 300)
			for i := range hosts {
				hosts[i] = fmt.Sprintf("news-%d.example", i)
			}
			now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
			for i := 0; b.Loop(); i++ {
				if d := ledger.Check(context.Background(), hosts[i%len(hosts)], backoff.Article, now); !d.Allowed {
					b.Fatalf("%+v", d)
				}
			}
			close(stop)
			<-done
		})
	}
}
