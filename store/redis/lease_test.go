package redis

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
)

// TestState_ShortLeaseOnRedisClock: a pass lease across machines is short
// and renewed (here 45 s, renewed at a third), on Redis's clock: a worker
// whose clock is an hour ahead holds exactly the TTL it asked from Redis's
// now, each renewal moves the expiry a TTL on from Redis's now, and
// another worker, a minute behind, reads the same instant on its own clock
// (the moment the dead worker's source is free for it: one TTL after the
// last renewal).
func TestState_ShortLeaseOnRedisClock(t *testing.T) {
	base := realStore(t)
	const ttl = 45 * time.Second
	ahead := &Store{Client: base.Client, Prefix: base.Prefix, Clock: skewedClock{time.Hour}}
	behind := &Store{Client: base.Client, Prefix: base.Prefix, Clock: skewedClock{-time.Minute}}
	ctx := context.Background()
	// expiry is the lease's expiry as Redis holds it, on Redis's clock,
	// and Redis's now.
	expiry := func() (time.Time, time.Time) {
		t.Helper()
		v, err := base.Client.HGet(ctx, base.key("pass", "s"), "exp").Result()
		if err != nil {
			t.Fatal(err)
		}
		us, _ := strconv.ParseInt(v, 10, 64)
		now, err := base.Client.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		return time.UnixMicro(us), now
	}
	l, err := ahead.State().AcquireLease(ctx, "s", "a", ahead.now(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	exp, now := expiry()
	if d := exp.Sub(now); d > ttl || d < ttl-time.Second {
		t.Fatalf("lease expires %v after Redis's now, want %v", d, ttl)
	}
	if d := l.Expires.Sub(ahead.now()); d > ttl || d < ttl-time.Second {
		t.Fatalf("the holder, an hour ahead, reads its lease as ending in %v, want %v", d, ttl)
	}
	for range 3 { // the renewals: each a TTL on from Redis's now
		before := exp
		r, err := ahead.State().RenewLease(ctx, "s", "a", ahead.now(), ttl)
		if err != nil || r.Pass != l.Pass {
			t.Fatalf("renewal = %+v, %v", r, err)
		}
		exp, now = expiry()
		if d := exp.Sub(now); exp.Before(before) || d > ttl || d < ttl-time.Second {
			t.Fatalf("renewed lease expires %v after Redis's now (before %v), want %v", d, before, ttl)
		}
	}
	_, err = behind.State().AcquireLease(ctx, "s", "b", behind.now(), ttl)
	var le *crawl.LeaseError
	if !errors.As(err, &le) || !errors.Is(err, crawl.ErrLeaseHeld) || le.Held.Owner != "a" {
		t.Fatalf("another worker's acquire: %v, want ErrLeaseHeld naming a", err)
	}
	if d := le.Held.Expires.Sub(behind.now()); d > ttl || d < ttl-time.Second {
		t.Fatalf("a worker a minute behind reads the lease as ending in %v, want %v: one TTL after the last renewal", d, ttl)
	}
}

// TestState_TakeOverDeadOwnersLease: a lease whose owner is known dead (the
// process a restart on the same machine replaces) is taken over at once,
// well before it expires: ReleaseLease is a compare-and-delete on the
// owner's token, so a process that knows the dead owner's token may end its
// lease, and AcquireLease then starts a new pass. Several processes doing
// so at once get one pass between them.
func TestState_TakeOverDeadOwnersLease(t *testing.T) {
	base := realStore(t)
	ctx := context.Background()
	dead, err := base.State().AcquireLease(ctx, "s", "host-1/boot-1/pid-7/start-1", base.now(), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []crawl.Lease
	for i := range 8 {
		st := otherProcess(t, base).State()
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := "restart-" + strconv.Itoa(i)
			l, err := st.AcquireLease(ctx, "s", owner, base.now(), time.Minute)
			var le *crawl.LeaseError
			if errors.As(err, &le) && le.Held.Owner == dead.Owner {
				// The dead owner's: end it, and ask again.
				if err := st.ReleaseLease(ctx, "s", le.Held.Owner); err != nil {
					t.Error(err)
					return
				}
				l, err = st.AcquireLease(ctx, "s", owner, base.now(), time.Minute)
			}
			switch {
			case err == nil:
				mu.Lock()
				won = append(won, l)
				mu.Unlock()
			case !errors.Is(err, crawl.ErrLeaseHeld):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(won) != 1 || won[0].Pass != dead.Pass+1 {
		t.Fatalf("after the dead owner's lease was released: %+v won, want one, in pass %d", won, dead.Pass+1)
	}
}
