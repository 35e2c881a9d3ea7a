package backoff_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
)

// countingStore counts the calls of a networked store (each a round trip).
type countingStore struct {
	backoff.MemoryStore
	gets, updates atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, key string) (backoff.State, bool, error) {
	s.gets.Add(1)
	return s.MemoryStore.Get(ctx, key)
}

func (s *countingStore) Update(ctx context.Context, key string, fn func(backoff.State, bool) (backoff.State, bool)) error {
	s.updates.Add(1)
	return s.MemoryStore.Update(ctx, key, fn)
}

// TestLedger_P1_SuccessAfterCleanCheckCostsNoRoundTrip: the common request,
// a success at a host whose Check found no record, costs the store one read
// (the Check's), not two: Observe, told the Check's decision (NoRecord),
// reads nothing and writes nothing. A refusal another process records
// between that Check and Observe stands (the polite side), and the next
// Check, which always reads the store, refuses the host. Observe without
// NoRecord still reads the store, and clears what it finds.
func TestLedger_P1_SuccessAfterCleanCheckCostsNoRoundTrip(t *testing.T) {
	t.Parallel()
	store := &countingStore{}
	l := &backoff.Ledger{Policy: backoff.StrictNews(), Store: store}
	other := &backoff.Ledger{Policy: backoff.StrictNews(), Store: store} // another process on the same store
	now := t0
	d := l.Check(ctx, "a.example", backoff.Article, now)
	if !d.Allowed || d.Recorded {
		t.Fatalf("clean host: %+v, want allowed with no record", d)
	}
	o := backoff.Outcome{Kind: backoff.Article, Status: 200, NoRecord: !d.Recorded}
	observe(t, l, "a.example", o, now)
	if g, u := store.gets.Load(), store.updates.Load(); g != 1 || u != 0 {
		t.Fatalf("Check + Observe of a success at a clean host: %d reads, %d writes; want 1 and 0", g, u)
	}

	d = l.Check(ctx, "a.example", backoff.Article, now)
	observe(t, other, "a.example", refusal(429), now.Add(time.Millisecond)) // meanwhile, elsewhere
	observe(t, l, "a.example", backoff.Outcome{Kind: backoff.Article, Status: 200, NoRecord: !d.Recorded}, now.Add(2*time.Millisecond))
	if d := l.Check(ctx, "a.example", backoff.Article, now.Add(time.Second)); d.Allowed || d.Reason != backoff.Cooldown || d.Strikes != 1 {
		t.Fatalf("after another process's refusal: %+v, want the cool-down and its strike", d)
	}

	// Told nothing, a success reads the store and clears the strikes.
	later := now.Add(24 * time.Hour)
	d = l.Check(ctx, "a.example", backoff.Article, later)
	if !d.Allowed || !d.Recorded {
		t.Fatalf("after the cool-down: %+v, want allowed, recorded", d)
	}
	if ev := observe(t, l, "a.example", backoff.Outcome{Kind: backoff.Article, Status: 200, NoRecord: !d.Recorded}, later); ev.Type != backoff.EventCleared {
		t.Fatalf("success at a recorded host: %v, want cleared", ev.Type)
	}
	if _, ok, _ := store.MemoryStore.Get(ctx, "a.example"); ok {
		t.Fatal("record kept after the success cleared it")
	}
}
