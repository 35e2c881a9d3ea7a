package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"testing"
	"testing/synctest"
	"time"
)

// TestPacer_P1_SweepKeepsTheStartACrawlDelayCountsFrom: a host's robots.txt
// is read (a turn with no minimum: its Crawl-delay is not known yet), the
// interval passes and the pacer sweeps its idle hosts; the host's next
// request then comes with the Crawl-delay robots.txt asked for, and must wait
// it out from the robots.txt request's start. The sweep forgot that start,
// and the request was granted at once (found by the hostile crawl: a feed
// read a second after a robots.txt asking for "Crawl-delay: 86400").
func TestPacer_P1_SweepKeepsTheStartACrawlDelayCountsFrom(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &pacer{Interval: 50 * time.Millisecond}
		ctx := context.Background()
		t0 := time.Now()
		p.Next = rtFunc(func(r *http.Request) (*http.Response, error) { // the request reaches the host
			tr := httptrace.ContextClientTrace(r.Context())
			tr.GotConn(httptrace.GotConnInfo{})
			tr.WroteRequest(httptrace.WroteRequestInfo{})
			return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
		})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://delay.example/robots.txt", nil)
		resp, err := p.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		time.Sleep(time.Second) // the interval is long over
		for range 100 {         // another host's requests, over time: enough operations for a sweep
			r, _, err := p.waitTurn(ctx, "other.example", 0)
			if err != nil {
				t.Fatal(err)
			}
			r()
			time.Sleep(p.Interval)
		}
		const crawlDelay = time.Hour
		release, _, err := p.waitTurn(ctx, "delay.example", crawlDelay)
		if err != nil {
			t.Fatal(err)
		}
		release()
		if got := time.Since(t0); got < crawlDelay {
			t.Errorf("granted %v after the robots.txt request, Crawl-delay %v", got, crawlDelay)
		}
	})
}

// TestPacer_P1_TurnPastTheDeadlineFailsAtOnce: a request whose host's turn
// comes after its context's deadline (a Crawl-delay of a day, a Get's
// time-out of seconds) fails at once with ErrPacingDeadline, sending
// nothing, instead of holding its caller until the deadline.
func TestPacer_P1_TurnPastTheDeadlineFailsAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sent := 0
		p := &pacer{Interval: 50 * time.Millisecond, Next: rtFunc(func(r *http.Request) (*http.Response, error) {
			sent++
			tr := httptrace.ContextClientTrace(r.Context())
			tr.GotConn(httptrace.GotConnInfo{})
			tr.WroteRequest(httptrace.WroteRequestInfo{})
			return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
		})}
		get := func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://slow.example/feed.xml", nil)
			resp, err := p.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		if err := get(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(withMinGap(context.Background(), 24*time.Hour), 8*time.Second)
		defer cancel()
		start := time.Now()
		err := get(ctx)
		if !errors.Is(err, ErrPacingDeadline) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want ErrPacingDeadline", err)
		}
		if waited := time.Since(start); waited != 0 || sent != 1 {
			t.Errorf("failed after %v with %d requests sent, want at once with 1", waited, sent)
		}
		// The host's next request with time enough still gets its turn.
		if err := get(context.Background()); err != nil || sent != 2 {
			t.Errorf("next request: %v, %d sent", err, sent)
		}
	})
}
