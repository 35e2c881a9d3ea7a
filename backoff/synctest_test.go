package backoff_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/internal/clock"
)

// TestStrictNews_S4_CrawlerWaitsAsTold runs a crawler loop that asks the
// ledger before every article request, waits as told and is refused every
// time, in a synctest bubble: the four days of back-off take microseconds.
// Its requests land at 0, 5, 15, 35 and 75 min (the ladder), then once a
// day (the daily re-check after the fifth strike).
func TestStrictNews_S4_CrawlerWaitsAsTold(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var clk clock.Clock = clock.Real{} // virtual time inside the bubble
		l := &backoff.Ledger{}
		start := clk.Now()
		var sent []time.Duration
		for len(sent) < 8 {
			now := clk.Now()
			d := l.Check(ctx, "news.example", backoff.Article, now)
			if !d.Allowed {
				<-clk.After(d.Until.Sub(now))
				continue
			}
			sent = append(sent, now.Sub(start))
			if _, err := l.Observe(ctx, "news.example", backoff.Outcome{Status: 403}, now); err != nil {
				t.Fatal(err)
			}
		}
		m, day := time.Minute, 24*time.Hour
		want := []time.Duration{0, 5 * m, 15 * m, 35 * m, 75 * m, 75*m + day, 75*m + 2*day, 75*m + 3*day}
		for i := range want {
			if sent[i] != want[i] {
				t.Fatalf("requests at %v, want %v", sent, want)
			}
		}
	})
}

// TestLedgerEvents: every refusal, cool-down and suspension reaches the
// logger and the metrics hook with host, cause and until.
func TestLedgerEvents(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	var types []backoff.EventType
	l := &backoff.Ledger{Logger: logger, OnEvent: func(e backoff.Event) { types = append(types, e.Type) }}
	now := t0
	for range 5 {
		ev, _ := l.Observe(ctx, "news.example", backoff.Outcome{Status: 403}, now)
		now = ev.Until
	}
	l.Observe(ctx, "news.example", backoff.Outcome{Kind: backoff.Feed, Status: 503, RetryAfter: "86400"}, now)
	l.Check(ctx, "news.example", backoff.Article, now.Add(48*time.Hour))
	l.Observe(ctx, "news.example", backoff.Outcome{Status: 200}, now.Add(48*time.Hour))
	wantTypes := []backoff.EventType{backoff.EventRefused, backoff.EventRefused, backoff.EventRefused, backoff.EventRefused,
		backoff.EventSuspended, backoff.EventCooledDown, backoff.EventRecheck, backoff.EventCleared}
	if len(types) != len(wantTypes) {
		t.Fatalf("events %v, want %v", types, wantTypes)
	}
	for i := range types {
		if types[i] != wantTypes[i] {
			t.Fatalf("events %v, want %v", types, wantTypes)
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	wantLines := []string{
		`level=WARN msg="backoff: refused" host=news.example kind=article cause="status 403" strikes=1 until=2026-11-30T08:05:00.000Z`,
		`level=WARN msg="backoff: suspended" host=news.example kind=article cause="status 403" strikes=5 until=2026-11-30T10:35:00.000Z next_check=2026-12-01T09:15:00.000Z`,
		`level=INFO msg="backoff: cooled down" host=news.example kind=feed cause=retry-after strikes=5 until=2026-12-01T10:35:00.000Z next_check=2026-12-01T09:15:00.000Z`,
		`level=INFO msg="backoff: re-check" host=news.example kind=article cause="status 403" strikes=5 next_check=2026-12-03T10:35:00.000Z`,
		`level=INFO msg="backoff: cleared" host=news.example kind=article cause="status 403" strikes=0`,
	}
	if len(lines) != len(wantTypes) {
		t.Fatalf("%d log lines, want %d:\n%s", len(lines), len(wantTypes), buf.String())
	}
	for j, i := range []int{0, 4, 5, 6, 7} {
		if lines[i] != wantLines[j] {
			t.Errorf("log line %d:\n got %s\nwant %s", i, lines[i], wantLines[j])
		}
	}
}
