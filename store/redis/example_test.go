package redis_test

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/store/redis"
)

// Two workers share one host's budget through Redis: the second claim,
// made at once by another process, is told how long to wait. (It needs a
// redis-server at localhost:6379; the tests prove the same on servers of
// their own.)
func ExampleStore_Schedule() {
	ctx := context.Background()
	worker := func() *redis.Store {
		return &redis.Store{Client: goredis.NewClient(&goredis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})}
	}
	a, b := worker(), worker()
	claim := fetch.Claim{Key: "news.example", Gap: time.Second, TTL: time.Minute, Now: time.Now()}

	claim.Owner = "a-1"
	_, ok, err := a.Schedule().Acquire(ctx, claim)
	fmt.Println("worker a:", ok, err) // true <nil>
	claim.Owner = "b-1"
	wait, ok, err := b.Schedule().Acquire(ctx, claim)
	// a holds the host's one slot: b waits for a's lease, a minute at most.
	fmt.Println("worker b:", ok, err, wait > 0 && wait <= time.Minute) // false <nil> true
	// Only the owner's token releases a lease.
	fmt.Println("b releases:", b.Schedule().Release(ctx, "news.example", "b-1", time.Now())) // fetch: schedule lease not held
	fmt.Println("a releases:", a.Schedule().Release(ctx, "news.example", "a-1", time.Now())) // <nil>
}

// A Store over a Redis Cluster: the same code, over a ClusterClient.
func ExampleStore_cluster() {
	rc := goredis.NewClusterClient(&goredis.ClusterOptions{
		Addrs:                 []string{"redis-1.internal:6379", "redis-2.internal:6379", "redis-3.internal:6379"},
		ContextTimeoutEnabled: true,
	})
	defer rc.Close()
	st := &redis.Store{Client: rc, Prefix: "newsroom:"}
	_ = st.Schedule() // and Ledger, Robots, Validators, State, as over one Redis
}
