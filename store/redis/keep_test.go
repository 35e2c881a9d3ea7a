package redis

import (
	"context"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/fetch"
)

// TestSchedule_ClaimLeavesLedgerExpiry: a claim reads its host's ledger
// record in the same script, and must leave its expiry alone: a record
// holding strikes never expires (only a success clears a refusal), and a
// claim giving it the pacing keys' hour would forget the strike an hour
// after the host's last request.
func TestSchedule_ClaimLeavesLedgerExpiry(t *testing.T) {
	s := realStore(t)
	ctx := context.Background()
	l := &backoff.Ledger{Store: s.Ledger()}
	now := time.Now()
	if _, err := l.Observe(ctx, "shop.example", backoff.Outcome{Kind: backoff.Feed, Status: 403}, now); err != nil {
		t.Fatal(err)
	}
	k := s.key("ledger", "shop.example")
	if d := s.Client.PTTL(ctx, k).Val(); d != -time.Nanosecond {
		t.Fatalf("a strike's record expires in %v, want never", d)
	}
	if _, ok, err := s.Schedule().Acquire(ctx, fetch.Claim{Key: "shop.example", Owner: "o", Now: now, Limit: 1, TTL: time.Minute}); !ok || err != nil {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	if d := s.Client.PTTL(ctx, k).Val(); d != -time.Nanosecond {
		t.Fatalf("after a claim, the strike's record expires in %v, want never", d)
	}
	if d := s.Client.PTTL(ctx, s.key("sched", "shop.example")).Val(); d <= 0 {
		t.Fatalf("the start hash expires in %v, want its retention", d)
	}
}
