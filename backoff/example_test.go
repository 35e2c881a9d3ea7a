package backoff_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/politefetch/politefetch/backoff"
)

// The fetch chain asks the ledger before sending and tells it every answer.
// Here a site refuses an article with 429 and Retry-After: 600, then the
// strict crawler's ledger keeps it at bay for ten minutes (S4).
func Example() {
	ctx := context.Background()
	l := &backoff.Ledger{Policy: backoff.StrictNews()}
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

	if d := l.Check(ctx, "news.example", backoff.Article, now); d.Allowed {
		fmt.Println("first request: allowed")
	}

	h := http.Header{"Retry-After": {"600"}}
	o := backoff.NewOutcome(backoff.Article, http.StatusTooManyRequests, h, []byte("slow down"))
	ev, _ := l.Observe(ctx, "news.example", o, now)
	fmt.Println(ev.Type, ev.Cause, "until", ev.Until.Format("15:04"))

	d := l.Check(ctx, "news.example", backoff.Feed, now.Add(5*time.Minute))
	fmt.Println(d.Err())

	d = l.Check(ctx, "news.example", backoff.Feed, now.Add(10*time.Minute))
	fmt.Println("at 08:10 allowed:", d.Allowed)
	// Output:
	// first request: allowed
	// refused status 429 until 08:10
	// backoff: feed request to news.example refused: cooling down until 2026-11-30T08:10:00Z (last refusal: status 429)
	// at 08:10 allowed: true
}

// DetectChallenge recognises a bot-challenge page whatever its status.
func ExampleDetectChallenge() {
	h := http.Header{"Cf-Mitigated": {"challenge"}, "Server": {"cloudflare"}}
	provider, ok := backoff.DetectChallenge(http.StatusForbidden, h, []byte("<title>Just a moment...</title>"))
	fmt.Println(provider, ok)

	provider, ok = backoff.DetectChallenge(http.StatusForbidden, http.Header{"Server": {"nginx"}}, []byte("<h1>403 Forbidden</h1>"))
	fmt.Printf("%q %v\n", provider, ok)
	// Output:
	// cloudflare true
	// "" false
}

// The strict crawler's ladder, step by step (S4).
func ExamplePolicy_Step() {
	p := backoff.StrictNews()
	for n := 1; n <= 8; n++ {
		fmt.Print(p.Step(n), " ")
	}
	fmt.Println()
	// Output:
	// 5m0s 10m0s 20m0s 40m0s 1h20m0s 2h40m0s 5h20m0s 6h0m0s
}
