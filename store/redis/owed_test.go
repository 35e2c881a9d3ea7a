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
