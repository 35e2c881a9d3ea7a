package redis

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// fixedClock is a manual clock.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time                         { return c.t }
func (c fixedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// TestSchedule_ClockSkewChangesNothing: a worker whose clock is an hour
// ahead (its claims say so) cannot start sooner than the interval on
// Redis's clock allows.
func TestSchedule_ClockSkewChangesNothing(t *testing.T) {
	a := realStore(t)
	b := otherProcess(t, a)
	ctx := context.Background()
	now := time.Now()
	c := fetch.Claim{Key: "a.example", Owner: "a-1", Now: now, Gap: 10 * time.Second, TTL: time.Second}
	if _, ok, err := a.Schedule().Acquire(ctx, c); !ok || err != nil {
		t.Fatalf("first claim: %v, %v", ok, err)
	}
	if err := a.Schedule().Release(ctx, c.Key, c.Owner, now); err != nil {
		t.Fatal(err)
	}
	for _, skew := range []time.Duration{time.Hour, -time.Hour} {
		skewed := fetch.Claim{Key: "a.example", Owner: "b-1", Now: time.Now().Add(skew), Gap: 10 * time.Second, TTL: time.Minute}
		wait, ok, err := b.Schedule().Acquire(ctx, skewed)
		// What is left of the 10 s on Redis's clock: the time since the
		// first claim is all that may have shortened it.
		if ok || err != nil || wait > 10*time.Second || wait < 10*time.Second-time.Since(now)-time.Millisecond {
			t.Fatalf("claim of a worker %v off, %v after the first = wait %v, ok %v, err %v; want to wait the rest of 10 s on Redis's clock",
				skew, time.Since(now), wait, ok, err)
		}
	}
}

// TestLedger_ClockSkewChangesNothing: a cool-down recorded by one worker
// ends at the same moment for a worker whose clock is an hour ahead: the
// instant is stored on Redis's clock and read back on each caller's.
func TestLedger_ClockSkewChangesNothing(t *testing.T) {
	a := realStore(t)
	now := time.Now()
	ahead := fixedClock{now.Add(time.Hour)}
	b := &Store{Client: a.Client, Prefix: a.Prefix, Clock: ahead}
	a.Clock = fixedClock{now}
	ctx := context.Background()
	la := &backoff.Ledger{Store: a.Ledger()}
	lb := &backoff.Ledger{Store: b.Ledger()}
	if _, err := la.Observe(ctx, "shop.example", backoff.Outcome{Kind: backoff.Feed, Status: 429, RetryAfter: "600"}, now); err != nil {
		t.Fatal(err)
	}
	d := lb.Check(ctx, "shop.example", backoff.Feed, ahead.Now().Add(time.Minute))
	if d.Allowed {
		t.Fatalf("a worker an hour ahead, a minute after a 10-minute cool-down began: %+v, want refused", d)
	}
	if want := ahead.Now().Add(10 * time.Minute); d.Until.Sub(want).Abs() > time.Second {
		t.Fatalf("cool-down ends at %v on the skewed clock, want %v", d.Until, want)
	}
}

// TestRobots_FetchedOnceByManyProcesses: five processes (five Stores, five
// robots caches) asking at once for a host none has read fetch its
// robots.txt once: one takes the fetch lease, the others wait for its
// record.
func TestRobots_FetchedOnceByManyProcesses(t *testing.T) {
	web := politetest.NewWeb(t)
	site := web.Site("news.example")
	path := site.AddArticle(politetest.Article{}).Path
	first := realStore(t)
	u := mustURL(t, site.URL(path))
	var wg sync.WaitGroup
	for range 5 {
		st := &Store{Client: first.Client, Prefix: first.Prefix}
		c := &robots.Cache{Transport: web.Transport(), UserAgent: "RedisWorkerBot/1", Store: st.Robots()}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Allow(context.Background(), u); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, q := range web.Requests() {
		if q.Path == "/robots.txt" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("robots.txt fetched %d times by 5 processes, want once", n)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
