package fetch

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestPacer_S4_RefusalAnsweredAfterTheCallerGaveUp: a 429 whose answer
// comes after its caller's deadline is still observed. The caller gets its
// context's error at once; the answer is read in the background, the
// host's turn held until it comes; the ledger records the refusal, so the
// host's next request waits for that turn and is then refused by the
// cool-down, never sent.
func TestPacer_S4_RefusalAnsweredAfterTheCallerGaveUp(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("late.example")
	s.Handle("/late", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(400 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond))
	if _, err := c.Get(context.Background(), s.URL("/")); err != nil { // robots.txt first
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	start := time.Now()
	_, err := c.Get(ctx, s.URL("/late"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("late answer: err %v, want the caller's deadline", err)
	}
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Errorf("the caller got its error after %v, not at its deadline", d)
	}
	_, err = c.Get(context.Background(), s.URL("/next"))
	re := refusal(t, err, Cooldown)
	if !re.Until.After(time.Now().Add(50 * time.Minute)) {
		t.Errorf("cool-down until %v, want the hour the 429 asked", re.Until)
	}
	if requested(web, "late.example", "/next") {
		t.Error("the next request went out inside the cool-down")
	}
	for _, q := range web.Requests() {
		if q.Path == "/late" && q.Status != http.StatusTooManyRequests {
			t.Errorf("the late request ended with status %d: the chain hung up before the answer", q.Status)
		}
	}
	if rep := web.Audit(auditPolicy(testPolicy(Digest(), time.Millisecond))); !rep.OK() {
		t.Error(rep)
	}
}
