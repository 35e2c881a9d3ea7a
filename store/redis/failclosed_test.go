package redis

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// TestLedger_RefusalKeptWhileRedisDown: a refusal observed while Redis is
// unreachable is kept by the process and written at its next call once
// Redis is back, before that call answers; another process then sees it.
func TestLedger_RefusalKeptWhileRedisDown(t *testing.T) {
	a, srv := ownStore(t)
	a.Timeout = 500 * time.Millisecond // each call while the server is down waits this long
	b := otherProcess(t, a)
	ctx := context.Background()
	la, lb := &backoff.Ledger{Store: a.Ledger()}, &backoff.Ledger{Store: b.Ledger()}
	now := time.Now()
	srv.Stop()
	if _, err := la.Observe(ctx, "shop.example", backoff.Outcome{Kind: backoff.Feed, Status: 429, RetryAfter: "600"}, now); err == nil {
		t.Fatal("Observe with Redis down: no error")
	}
	if d := la.Check(ctx, "shop.example", backoff.Feed, now); d.Allowed {
		t.Fatalf("Check with Redis down = %+v, want refused", d)
	}
	restart(t, srv)
	// The first call of a, of any kind, writes what it owes.
	if _, _, err := a.Validators().Get(ctx, "https://shop.example/feed.xml"); err != nil {
		t.Fatal(err)
	}
	d := lb.Check(ctx, "shop.example", backoff.Feed, now.Add(time.Minute))
	if d.Allowed || d.Reason != backoff.Cooldown || d.Until.Before(now.Add(9*time.Minute)) {
		t.Fatalf("another process's Check after Redis came back = %+v, want the 10-minute cool-down", d)
	}
}

// TestSchedule_FailsClosed: with Redis unreachable, or too slow to answer
// within the Store's Timeout, every call fails, and the fetch client sends
// nothing: no request leaves without its claim and its slot.
func TestSchedule_FailsClosed(t *testing.T) {
	// A listener that accepts and never answers: a Redis too slow.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	dead := storeAt(t, goneAddr(t), "")
	dead.Client.Close()
	unbounded := &Store{Client: goredis.NewClient(&goredis.Options{Addr: ln.Addr().String()})}
	t.Cleanup(func() { unbounded.Client.Close() })
	for name, s := range map[string]*Store{
		"unbounded": unbounded,
		"slow":      {Client: goredis.NewClient(&goredis.Options{Addr: ln.Addr().String(), MaxRetries: -1, ContextTimeoutEnabled: true}), Timeout: 50 * time.Millisecond},
		"closed":    dead,
		"none":      {},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			start := time.Now()
			_, ok, err := s.Schedule().Acquire(ctx, fetch.Claim{Key: "a.example", Owner: "o", Now: start, Gap: time.Second, TTL: time.Minute})
			var e *Error
			if ok || !errors.As(err, &e) {
				t.Fatalf("Acquire = ok %v, err %v; want a *redis.Error", ok, err)
			}
			if name == "none" && !errors.Is(err, ErrNoClient) {
				t.Fatalf("Acquire without a client: %v, want ErrNoClient", err)
			}
			if name == "unbounded" && !errors.Is(err, ErrUnbounded) {
				t.Fatalf("Acquire over a client without ContextTimeoutEnabled: %v, want ErrUnbounded", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("Acquire took %v: the Timeout does not bound it", d)
			}
			if _, _, err := s.Ledger().Get(ctx, "a.example"); err == nil {
				t.Fatal("ledger Get: no error")
			}
			if _, _, err := s.Robots().Get(ctx, "a.example"); err == nil {
				t.Fatal("robots Get: no error")
			}
			if _, err := s.State().AcquireLease(ctx, "s", "o", start, time.Minute); err == nil {
				t.Fatal("AcquireLease: no error")
			}
		})
	}
}

// TestClient_FailsClosedWithoutRedis: a fetch client whose schedule, ledger
// and robots.txt records are in a Redis that is gone sends nothing at all:
// not the page, not robots.txt.
func TestClient_FailsClosedWithoutRedis(t *testing.T) {
	web := politetest.NewWeb(t)
	site := web.Site("news.example")
	path := site.AddArticle(politetest.Article{}).Path
	s := storeAt(t, goneAddr(t), "") // a Redis that is gone
	p, err := workerPolicy(100 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c, err := fetch.New(p, fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}),
		fetch.WithStores(fetch.Stores{Schedule: s.Schedule()}), fetch.WithStores(fetch.Stores{Ledger: s.Ledger()}), fetch.WithStores(fetch.Stores{Robots: s.Robots()}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := c.Get(ctx, site.URL(path)); err == nil {
		t.Fatal("Get with Redis gone: no error")
	}
	if n := len(web.Requests()); n != 0 {
		t.Fatalf("%d requests reached the web with Redis gone, want none", n)
	}
}
