package redis

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/fetch"
)

// TestSchedule_ReleaseWaitsForOwedRefusal: a request is refused while Redis
// is away, so its refusal and the release of its slot are both owed. When
// Redis is back, a Release of that host (here the owed one is retried by a
// later request's own Release) must not free the slot before the refusal is
// written, even while another goroutine of the process is busy writing what
// it owes (its list taken before this refusal was added): otherwise another
// process takes the free slot, reads no record, and asks the host inside its
// cool-down.
func TestSchedule_ReleaseWaitsForOwedRefusal(t *testing.T) {
	a, mr := newMini(t)
	b := &Store{Client: goredis.NewClient(&goredis.Options{Addr: mr.Addr(), ContextTimeoutEnabled: true})}
	t.Cleanup(func() { b.Client.Close() })
	ctx := context.Background()
	la, lb := &backoff.Ledger{Store: a.Ledger()}, &backoff.Ledger{Store: b.Ledger()}
	now := time.Now()
	claim := fetch.Claim{Key: "shop.example", Owner: "a-1", Now: now, Limit: 1, TTL: time.Minute}
	if _, ok, err := a.Schedule().Acquire(ctx, claim); !ok || err != nil {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	mr.Close()
	if _, err := la.Observe(ctx, "shop.example", backoff.Outcome{Kind: backoff.Feed, Status: 429, RetryAfter: "600"}, now); err == nil {
		t.Fatal("Observe with Redis down: no error")
	}
	if err := mr.Restart(); err != nil {
		t.Fatal(err)
	}
	// Another goroutine of a is writing what a owes: calls do not wait for it.
	a.flushing.Store(true)
	_ = a.Schedule().Release(ctx, "shop.example", "a-1", now)
	a.flushing.Store(false)
	c := claim
	c.Owner = "b-1"
	_, ok, err := b.Schedule().Acquire(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return // the slot is still held: nobody may ask the host
	}
	if d := lb.Check(ctx, "shop.example", backoff.Feed, now.Add(time.Second)); d.Allowed {
		t.Fatalf("another process got the slot and Check = %+v: the refusal owed was not written before the slot was freed", d)
	}
}

// TestLedger_CheckAfterClaimCostsNoRoundTrip: the claim's script reads the
// host's ledger record too, so the ledger's Check that follows a granted
// claim makes no round trip of its own, and sees what another process
// recorded before the claim; a claim whose Check never came, a record this
// process changes, and a Check of another host all read Redis.
func TestLedger_CheckAfterClaimCostsNoRoundTrip(t *testing.T) {
	a, mr := newMini(t)
	cnt := &counter{}
	a.Client.(*goredis.Client).AddHook(cnt)
	b := &Store{Client: goredis.NewClient(&goredis.Options{Addr: mr.Addr(), ContextTimeoutEnabled: true})}
	t.Cleanup(func() { b.Client.Close() })
	ctx := context.Background()
	la, lb := &backoff.Ledger{Store: a.Ledger()}, &backoff.Ledger{Store: b.Ledger()}
	now := time.Now()
	if _, err := lb.Observe(ctx, "shop.example", backoff.Outcome{Kind: backoff.Feed, Status: 429, RetryAfter: "600"}, now); err != nil {
		t.Fatal(err)
	}
	claim := fetch.Claim{Key: "shop.example", Owner: "a-1", Now: now, Limit: 1, TTL: time.Minute}
	// The script loaded, and the clocks' offset measured, once for all.
	if _, ok, err := a.Schedule().Acquire(ctx, fetch.Claim{Key: "warm.example", Owner: "a-0", Now: now, Limit: 1, TTL: time.Minute}); !ok || err != nil {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	n0 := cnt.trips.Load()
	if _, ok, err := a.Schedule().Acquire(ctx, fetch.Claim{Key: "warm.example", Owner: "a-0b", Now: now, Limit: 2, TTL: time.Minute}); !ok || err != nil {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	claimTrips := cnt.trips.Load() - n0
	n0 = cnt.trips.Load()
	if _, ok, err := a.Schedule().Acquire(ctx, claim); !ok || err != nil {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	d := la.Check(ctx, "shop.example", backoff.Feed, now.Add(time.Second))
	if d.Allowed || d.Reason != backoff.Cooldown || d.Until.Before(now.Add(9*time.Minute)) {
		t.Fatalf("Check after the claim = %+v, want the other process's 10-minute cool-down", d)
	}
	if n := cnt.trips.Load() - n0; n != claimTrips {
		t.Fatalf("claim and Check: %d round trips, want %d, the claim's alone", n, claimTrips)
	}
	// The view answers once: the next Check reads Redis.
	n0 = cnt.trips.Load()
	la.Check(ctx, "shop.example", backoff.Feed, now.Add(time.Second))
	if n := cnt.trips.Load() - n0; n == 0 {
		t.Fatal("a second Check made no round trip")
	}
	// A record this process writes is not answered from the claim's view.
	if err := a.Schedule().Release(ctx, "shop.example", "a-1", now); err != nil {
		t.Fatal(err)
	}
	mr.Del(a.key("ledger", "shop.example"))
	claim.Now = now.Add(2 * time.Second)
	if _, ok, err := a.Schedule().Acquire(ctx, claim); !ok || err != nil {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	if _, err := la.Observe(ctx, "shop.example", backoff.Outcome{Kind: backoff.Feed, Status: 429, RetryAfter: "60"}, now); err != nil {
		t.Fatal(err)
	}
	if d := la.Check(ctx, "shop.example", backoff.Feed, now.Add(time.Second)); d.Allowed {
		t.Fatalf("Check after this process's own refusal = %+v, want refused (not the claim's empty view)", d)
	}
	// A claim's view is for its own host only.
	if _, ok, err := a.Schedule().Acquire(ctx, fetch.Claim{Key: "other.example", Owner: "a-2", Now: now, Limit: 1, TTL: time.Minute}); !ok || err != nil {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	if d := la.Check(ctx, "shop.example", backoff.Feed, now.Add(time.Second)); d.Allowed {
		t.Fatalf("Check of another host than the claim's = %+v, want refused", d)
	}
}
