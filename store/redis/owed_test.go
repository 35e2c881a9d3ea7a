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
	a, srv := ownStore(t)
	a.Timeout = 500 * time.Millisecond // each call while the server is down waits this long
	b := otherProcess(t, a)
	ctx := context.Background()
	la, lb := &backoff.Ledger{Store: a.Ledger()}, &backoff.Ledger{Store: b.Ledger()}
	now := time.Now()
	claim := fetch.Claim{Key: "shop.example", Owner: "a-1", Now: now, Limit: 1, TTL: time.Minute}
	if _, ok, err := a.Schedule().Acquire(ctx, claim); !ok || err != nil {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	srv.Stop()
	if _, err := la.Observe(ctx, "shop.example", backoff.Outcome{Kind: backoff.Feed, Status: 429, RetryAfter: "600"}, now); err == nil {
		t.Fatal("Observe with Redis down: no error")
	}
	restart(t, srv)
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
	a := realStore(t)
	cnt := &counter{}
	a.Client.(*goredis.Client).AddHook(cnt)
	b := otherProcess(t, a)
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
	if err := a.Client.Del(ctx, a.key("ledger", "shop.example")).Err(); err != nil {
		t.Fatal(err)
	}
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

// steps is a clock that answers its instants in turn, then the last.
type steps struct{ at []time.Time }

func (c *steps) Now() time.Time {
	t := c.at[0]
	if len(c.at) > 1 {
		c.at = c.at[1:]
	}
	return t
}
func (c *steps) After(d time.Duration) <-chan time.Time { return time.After(d) }

// TestStore_SlowRoundTripKeepsOffset: one round trip slow to come back (a
// loaded machine, a request queued in Redis) does not move the offset
// between this process's clock and Redis's by its length, which would move
// every instant it reads back (a cool-down's end) as much; a real change of
// the offset, larger than the round trip's uncertainty, still moves it.
func TestStore_SlowRoundTripKeepsOffset(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := &steps{}
	s := &Store{Clock: clk}
	clk.at = []time.Time{t0.Add(2 * time.Millisecond)}
	if off := s.observe(t0, t0.Add(time.Millisecond)); off != 0 {
		t.Fatalf("offset after a quick round trip = %v, want 0", off)
	}
	// Redis answered 230 ms into a 240 ms round trip.
	clk.at = []time.Time{t0.Add(time.Second + 240*time.Millisecond)}
	if off := s.observe(t0.Add(time.Second), t0.Add(time.Second+230*time.Millisecond)); off != 0 {
		t.Fatalf("offset after a slow round trip = %v, want 0 still", off)
	}
	// This process's clock moved a minute on: quick or slow, it is seen.
	clk.at = []time.Time{t0.Add(time.Minute + 2*time.Second + 240*time.Millisecond)}
	if off := s.observe(t0.Add(time.Minute+2*time.Second), t0.Add(2*time.Second+10*time.Millisecond)); off < 59*time.Second {
		t.Fatalf("offset after the clock moved a minute = %v, want about a minute", off)
	}
}
