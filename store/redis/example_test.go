package redis_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/store/redis"
)

// Two workers share one host's budget through Redis: the second claim,
// made at once by another process, is told how long to wait.
func ExampleStore_Schedule() {
	mr, err := miniredis.Run() // a real deployment points at its redis-server
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	ctx := context.Background()
	worker := func() *redis.Store {
		return &redis.Store{Client: goredis.NewClient(&goredis.Options{Addr: mr.Addr(), ContextTimeoutEnabled: true})}
	}
	a, b := worker(), worker()
	claim := fetch.Claim{Key: "news.example", Gap: time.Second, TTL: time.Minute, Now: time.Now()}

	claim.Owner = "a-1"
	_, ok, err := a.Schedule().Acquire(ctx, claim)
	fmt.Println("worker a:", ok, err)
	claim.Owner = "b-1"
	wait, ok, err := b.Schedule().Acquire(ctx, claim)
	// a holds the host's one slot: b waits for a's lease, a minute at most.
	fmt.Println("worker b:", ok, err, wait > 0 && wait <= time.Minute)
	// Only the owner's token releases a lease.
	fmt.Println("b releases:", b.Schedule().Release(ctx, "news.example", "b-1", time.Now()))
	fmt.Println("a releases:", a.Schedule().Release(ctx, "news.example", "a-1", time.Now()))
	// Output:
	// worker a: true <nil>
	// worker b: false <nil> true
	// b releases: fetch: schedule lease not held
	// a releases: <nil>
}
