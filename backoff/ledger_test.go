package backoff_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
)

var (
	ctx = context.Background()
	t0  = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
)

func refusal(status int) backoff.Outcome {
	return backoff.Outcome{Kind: backoff.Article, Status: status}
}

func observe(t *testing.T, l *backoff.Ledger, host string, o backoff.Outcome, now time.Time) backoff.Event {
	t.Helper()
	ev, err := l.Observe(ctx, host, o, now)
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	return ev
}

// TestStrictNews_S4_Ladder: each refusal in a row cools the host down
// 5 min, doubling, up to 6 h; the host is refused until the cool-down ends
// and allowed from that instant.
func TestStrictNews_S4_Ladder(t *testing.T) {
	t.Parallel()
	l := &backoff.Ledger{Policy: backoff.StrictNews()}
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 360, 360, 360}
	now := t0
	for i, m := range want {
		step := m * time.Minute
		ev := observe(t, l, "news.example", refusal(403), now)
		if ev.Strikes != i+1 || !ev.Until.Equal(now.Add(step)) {
			t.Fatalf("refusal %d: strikes %d until +%v, want %d until +%v", i+1, ev.Strikes, ev.Until.Sub(now), i+1, step)
		}
		// Feeds are cooled down too (a host that refused is left alone, S2).
		if d := l.Check(ctx, "news.example", backoff.Feed, now.Add(step-time.Nanosecond)); d.Allowed || d.Reason != backoff.Cooldown || !d.Until.Equal(now.Add(step)) {
			t.Fatalf("refusal %d: Check 1 ns before the end = %+v, want refused cooling down until +%v", i+1, d, step)
		}
		now = now.Add(step)
		if d := l.Check(ctx, "news.example", backoff.Feed, now); !d.Allowed {
			t.Fatalf("refusal %d: Check at the end of the cool-down = %+v, want allowed", i+1, d)
		}
	}
}

// TestStrictNews_S4_FifthStrikeSuspendsArticles: the fifth refusal in a row
// suspends the host's articles for a day, while its feeds keep their
// schedule once the cool-down (80 min) is over.
func TestStrictNews_S4_FifthStrikeSuspendsArticles(t *testing.T) {
	t.Parallel()
	var events []backoff.Event
	l := &backoff.Ledger{OnEvent: func(e backoff.Event) { events = append(events, e) }} // zero Policy: StrictNews
	now := t0
	for i := 1; i <= 5; i++ {
		ev := observe(t, l, "news.example", refusal(403), now)
		wantType := backoff.EventRefused
		if i == 5 {
			wantType = backoff.EventSuspended
		}
		if ev.Type != wantType {
			t.Fatalf("refusal %d: event %v, want %v", i, ev.Type, wantType)
		}
		if i < 5 {
			now = ev.Until
		}
	}
	fifth := now
	if got := events[len(events)-1]; got.Type != backoff.EventSuspended || !got.NextCheck.Equal(fifth.Add(24*time.Hour)) || !got.Until.Equal(fifth.Add(80*time.Minute)) || got.Host != "news.example" || got.Cause != "status 403" {
		t.Fatalf("suspension event = %+v", got)
	}
	d := l.Check(ctx, "news.example", backoff.Article, fifth.Add(80*time.Minute))
	if d.Allowed || d.Reason != backoff.Suspended || !d.Until.Equal(fifth.Add(24*time.Hour)) || d.Strikes != 5 || d.Cause != "status 403" {
		t.Fatalf("article after the cool-down = %+v, want suspended until +24h", d)
	}
	if !errors.Is(d.Err(), backoff.ErrSuspended) {
		t.Fatalf("Err() = %v, want ErrSuspended", d.Err())
	}
	// While the cool-down runs, an article is refused until the later of
	// the two (the re-check).
	if d := l.Check(ctx, "news.example", backoff.Article, fifth.Add(time.Minute)); d.Allowed || d.Reason != backoff.Suspended || !d.Until.Equal(fifth.Add(24*time.Hour)) {
		t.Fatalf("article during the cool-down = %+v", d)
	}
	// An image is an article for the ledger; sitemaps and API lists are
	// feeds.
	if d := l.Check(ctx, "news.example", backoff.Image, fifth.Add(80*time.Minute)); d.Allowed || d.Reason != backoff.Suspended {
		t.Fatalf("image after the cool-down = %+v, want suspended", d)
	}
	for _, k := range []backoff.Kind{backoff.Feed, backoff.Robots, backoff.Sitemap, backoff.API} {
		if d := l.Check(ctx, "news.example", k, fifth.Add(80*time.Minute-1)); d.Allowed || d.Reason != backoff.Cooldown {
			t.Fatalf("%v during the cool-down = %+v, want cooling down", k, d)
		}
		if d := l.Check(ctx, "news.example", k, fifth.Add(80*time.Minute)); !d.Allowed {
			t.Fatalf("%v after the cool-down = %+v, want allowed (feeds keep their schedule)", k, d)
		}
	}
	// A feed read that succeeds does not lift the articles' suspension.
	observe(t, l, "news.example", backoff.Outcome{Kind: backoff.Feed, Status: 200}, fifth.Add(2*time.Hour))
	if d := l.Check(ctx, "news.example", backoff.Article, fifth.Add(2*time.Hour)); d.Reason != backoff.Suspended {
		t.Fatalf("article after a successful feed read = %+v, want still suspended", d)
	}
}

// TestStrictNews_S4_DailyRecheck: a suspended host lets exactly one article
// request through per day; a refused re-check keeps it suspended, a
// successful one clears it.
func TestStrictNews_S4_DailyRecheck(t *testing.T) {
	t.Parallel()
	l := &backoff.Ledger{Policy: backoff.StrictNews()}
	now := t0
	for range 5 {
		ev := observe(t, l, "news.example", refusal(429), now)
		now = ev.Until
	}
	day1, _ := suspendedAt(t, l, "news.example")
	// Day 1: the first article Check at the re-check instant is allowed, the
	// second is not.
	d := l.Check(ctx, "news.example", backoff.Article, day1)
	if !d.Allowed || d.Reason != backoff.Recheck {
		t.Fatalf("re-check at day 1 = %+v, want allowed (re-check)", d)
	}
	if d := l.Check(ctx, "news.example", backoff.Article, day1); d.Allowed || d.Reason != backoff.Suspended || !d.Until.Equal(day1.Add(24*time.Hour)) {
		t.Fatalf("second article at day 1 = %+v, want suspended until day 2", d)
	}
	// The re-check is refused again: still suspended, next check a day on.
	ev := observe(t, l, "news.example", refusal(403), day1.Add(time.Second))
	if ev.Type != backoff.EventRefused || ev.Strikes != 6 || !ev.Suspended() {
		t.Fatalf("refused re-check event = %+v", ev)
	}
	day2 := day1.Add(24*time.Hour + time.Second)
	if d := l.Check(ctx, "news.example", backoff.Article, day2.Add(-time.Nanosecond)); d.Allowed {
		t.Fatalf("article just before day 2 = %+v, want refused", d)
	}
	if d := l.Check(ctx, "news.example", backoff.Article, day2); !d.Allowed || d.Reason != backoff.Recheck {
		t.Fatalf("re-check at day 2 = %+v, want allowed", d)
	}
	ev = observe(t, l, "news.example", refusal(200), day2.Add(time.Second))
	if ev.Type != backoff.EventCleared || ev.Suspended() {
		t.Fatalf("successful re-check event = %+v, want cleared", ev)
	}
	if d := l.Check(ctx, "news.example", backoff.Article, day2.Add(time.Second)); !d.Allowed || d.Reason != backoff.None || d.Strikes != 0 {
		t.Fatalf("article after a successful re-check = %+v, want allowed", d)
	}
}

// suspendedAt returns the re-check instant of a suspended host, read from
// the refusal Check gives just after the suspension.
func suspendedAt(t *testing.T, l *backoff.Ledger, host string) (time.Time, backoff.Decision) {
	t.Helper()
	d := l.Check(ctx, host, backoff.Article, t0.Add(12*time.Hour))
	if d.Allowed || d.Reason != backoff.Suspended {
		t.Fatalf("host not suspended: %+v", d)
	}
	return d.Until, d
}

// TestStrictNews_S4_RecheckOncePerDayUnderLoad: many goroutines asking at
// the re-check instant get exactly one article through (P1).
func TestStrictNews_S4_RecheckOncePerDayUnderLoad(t *testing.T) {
	t.Parallel()
	l := &backoff.Ledger{}
	now := t0
	for range 5 {
		now = observe(t, l, "news.example", refusal(403), now).Until
	}
	due, _ := suspendedAt(t, l, "news.example")
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if l.Check(ctx, "news.example", backoff.Article, due).Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != 1 {
		t.Fatalf("%d article requests allowed at the re-check, want 1", allowed)
	}
}

// TestStrictNews_S4_SuccessResets: a success clears the strikes, so the
// next refusal starts the ladder again at 5 min; it does not cut a running
// cool-down short.
func TestStrictNews_S4_SuccessResets(t *testing.T) {
	t.Parallel()
	l := &backoff.Ledger{}
	now := t0
	for range 3 {
		now = observe(t, l, "news.example", refusal(403), now).Until
	}
	// An in-flight request answered 200 while a Retry-After cool-down runs.
	ev := observe(t, l, "news.example", backoff.Outcome{Kind: backoff.Article, Status: 429, RetryAfter: "7200"}, now)
	if ev.Strikes != 4 || !ev.Until.Equal(now.Add(2*time.Hour)) {
		t.Fatalf("429 with Retry-After 7200 = %+v, want 4 strikes until +2h", ev)
	}
	ev = observe(t, l, "news.example", refusal(200), now.Add(time.Minute))
	if ev.Type != backoff.EventCleared || ev.Strikes != 0 || !ev.Until.Equal(now.Add(2*time.Hour)) {
		t.Fatalf("success = %+v, want cleared with the cool-down kept", ev)
	}
	if d := l.Check(ctx, "news.example", backoff.Feed, now.Add(time.Hour)); d.Allowed {
		t.Fatalf("Check during the Retry-After after a success = %+v, want refused", d)
	}
	now = now.Add(2 * time.Hour)
	ev = observe(t, l, "news.example", refusal(403), now)
	if ev.Strikes != 1 || !ev.Until.Equal(now.Add(5*time.Minute)) {
		t.Fatalf("refusal after the reset = %+v, want strike 1, +5 min", ev)
	}
	// A success after the cool-down leaves nothing behind in the store.
	var store backoff.MemoryStore
	l2 := &backoff.Ledger{Store: &store}
	observe(t, l2, "a.example", refusal(403), t0)
	observe(t, l2, "a.example", refusal(200), t0.Add(5*time.Minute))
	if store.Len() != 0 {
		t.Fatalf("store holds %d records after the host was cleared, want 0", store.Len())
	}
}

// TestStrictNews_S4_FeedSuccessDoesNotClearArticleRefusals: an article
// refusal weighs more than a feed read; only an article success clears it,
// so a site that serves its feed but refuses articles still reaches the
// fifth strike.
func TestStrictNews_S4_FeedSuccessDoesNotClearArticleRefusals(t *testing.T) {
	t.Parallel()
	l := &backoff.Ledger{}
	now := t0
	var ev backoff.Event
	for range 5 {
		ev = observe(t, l, "news.example", refusal(403), now)
		now = ev.Until
		if e := observe(t, l, "news.example", backoff.Outcome{Kind: backoff.Feed, Status: 200}, now); e.Type != backoff.EventNone {
			t.Fatalf("feed success after an article refusal: event %+v, want none", e)
		}
	}
	if ev.Type != backoff.EventSuspended {
		t.Fatalf("fifth article refusal between feed reads: %+v, want suspended", ev)
	}
	// A feed refusal is cleared by a feed success.
	l = &backoff.Ledger{}
	observe(t, l, "b.example", backoff.Outcome{Kind: backoff.Feed, Status: 429}, t0)
	if ev := observe(t, l, "b.example", backoff.Outcome{Kind: backoff.Feed, Status: 304}, t0.Add(5*time.Minute)); ev.Type != backoff.EventCleared {
		t.Fatalf("feed 304 after a feed refusal: %+v, want cleared", ev)
	}
}

// TestStrictNews_S4_RetryAfter: Retry-After wins when longer than the
// ladder, the ladder when longer than Retry-After, and an absurd value is
// capped at the policy's ceiling (24 h).
func TestStrictNews_S4_RetryAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, retryAfter string
		want             time.Duration
	}{
		{"absent", "", 5 * time.Minute},
		{"shorter seconds", "60", 5 * time.Minute},
		{"longer seconds", "3600", time.Hour},
		{"longer IMF-fixdate", t0.Add(90 * time.Minute).Format(http.TimeFormat), 90 * time.Minute},
		{"longer RFC 850 date", t0.Add(2 * time.Hour).Format(time.RFC850), 2 * time.Hour},
		{"longer asctime date", t0.Add(3 * time.Hour).Format(time.ANSIC), 3 * time.Hour},
		{"past date", t0.Add(-time.Hour).Format(http.TimeFormat), 5 * time.Minute},
		{"negative", "-3600", 5 * time.Minute},
		{"malformed", "soon", 5 * time.Minute},
		{"absurd seconds", "999999999999999999999999", 24 * time.Hour},
		{"absurd date", "Fri, 31 Dec 9999 23:59:59 GMT", 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &backoff.Ledger{Policy: backoff.StrictNews()}
			ev := observe(t, l, "news.example", backoff.Outcome{Status: 429, RetryAfter: tc.retryAfter}, t0)
			if got := ev.Until.Sub(t0); got != tc.want {
				t.Fatalf("cool-down = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStrictNews_S4_RetryAfterWithoutRefusal: a 503 is not a refusal for
// the strict crawler, but its Retry-After is still honoured, without a
// strike.
func TestStrictNews_S4_RetryAfterWithoutRefusal(t *testing.T) {
	t.Parallel()
	l := &backoff.Ledger{}
	ev := observe(t, l, "news.example", backoff.Outcome{Kind: backoff.Feed, Status: 503, RetryAfter: "1800"}, t0)
	if ev.Type != backoff.EventCooledDown || ev.Strikes != 0 || !ev.Until.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("503 with Retry-After: %+v, want cooled down 30 min, no strike", ev)
	}
	if d := l.Check(ctx, "news.example", backoff.Feed, t0.Add(29*time.Minute)); d.Allowed || d.Reason != backoff.Cooldown {
		t.Fatalf("Check during the 503's Retry-After = %+v", d)
	}
	if ev := observe(t, l, "news.example", refusal(404), t0); ev.Type != backoff.EventNone {
		t.Fatalf("404: event %+v, want none", ev)
	}
}

// TestDigest_D5_JitterBand: every cool-down the digest preset draws, at
// every strike, lies in 30–60 min, and the draws spread over the band.
func TestDigest_D5_JitterBand(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	l := &backoff.Ledger{Policy: backoff.Digest(), Rand: r.Float64}
	lo, hi := time.Duration(1<<62), time.Duration(0)
	now := t0
	for i := range 5000 {
		status := []int{429, 503}[i%2]
		ev := observe(t, l, "digest.example", backoff.Outcome{Kind: backoff.Feed, Status: status}, now)
		d := ev.Until.Sub(now)
		if d < 30*time.Minute || d > 60*time.Minute {
			t.Fatalf("draw %d (strike %d, status %d): cool-down %v outside 30–60 min", i, ev.Strikes, status, d)
		}
		if ev.Strikes == 1 {
			lo, hi = min(lo, d), max(hi, d)
		}
		now = ev.Until
		if i%4 == 3 { // a success now and then restarts the ladder
			observe(t, l, "digest.example", backoff.Outcome{Kind: backoff.Feed, Status: 200}, now)
		}
	}
	if lo > 31*time.Minute || hi < 59*time.Minute {
		t.Fatalf("first-strike draws span %v–%v, want them spread over 30–60 min", lo, hi)
	}
}

// TestDigest_D5_Exponential: without jitter draws the ladder doubles from
// 30 min and the band's ceiling holds it at 60 min; a longer Retry-After
// still wins.
func TestDigest_D5_Exponential(t *testing.T) {
	t.Parallel()
	l := &backoff.Ledger{Policy: backoff.Digest(), Rand: func() float64 { return 0 }}
	now := t0
	for i, want := range []time.Duration{30, 60, 60, 60} {
		ev := observe(t, l, "digest.example", refusal(503), now)
		if got := ev.Until.Sub(now); got != want*time.Minute {
			t.Fatalf("strike %d: %v, want %v", i+1, got, want*time.Minute)
		}
		now = ev.Until
	}
	ev := observe(t, l, "digest.example", backoff.Outcome{Status: 429, RetryAfter: "7200"}, now)
	if got := ev.Until.Sub(now); got != 2*time.Hour {
		t.Fatalf("429 with Retry-After 7200: %v, want 2h", got)
	}
	if p := backoff.Digest(); p.Step(1) != 30*time.Minute || p.Step(2) != 60*time.Minute || p.Step(9) != 60*time.Minute {
		t.Fatalf("Digest steps %v %v %v", p.Step(1), p.Step(2), p.Step(9))
	}
}

// TestDigest_D5_429NeverUnder15Min: a 429 is never retried within 15 min,
// even when the ladder would allow it or Retry-After asks for less.
func TestDigest_D5_429NeverUnder15Min(t *testing.T) {
	t.Parallel()
	p := backoff.Digest()
	p.Base, p.Ceiling = time.Minute, time.Minute // a hypothetical faster ladder
	l := &backoff.Ledger{Policy: p, Rand: func() float64 { return 0 }}
	ev := observe(t, l, "digest.example", backoff.Outcome{Status: 429, RetryAfter: "0"}, t0)
	if got := ev.Until.Sub(t0); got != 15*time.Minute {
		t.Fatalf("429 cool-down = %v, want 15 min", got)
	}
	ev = observe(t, l, "other.example", refusal(503), t0)
	if got := ev.Until.Sub(t0); got != time.Minute {
		t.Fatalf("503 cool-down = %v, want the ladder's 1 min", got)
	}
	// The preset itself: never under 15 min (in fact never under 30).
	l = &backoff.Ledger{Policy: backoff.Digest(), Rand: func() float64 { return 0 }}
	if ev := observe(t, l, "digest.example", refusal(429), t0); ev.Until.Sub(t0) < 15*time.Minute {
		t.Fatalf("preset 429 cool-down %v < 15 min", ev.Until.Sub(t0))
	}
}

// TestDigest_D5_NeverSuspends: the digest engine never suspends a host,
// however many refusals in a row.
func TestDigest_D5_NeverSuspends(t *testing.T) {
	t.Parallel()
	p := backoff.Digest()
	l := &backoff.Ledger{Policy: p}
	now := t0
	for range 20 {
		now = observe(t, l, "digest.example", refusal(429), now).Until
	}
	if d := l.Check(ctx, "digest.example", backoff.Article, now); !d.Allowed {
		t.Fatalf("digest host after 20 refusals and their cool-downs: %+v, want allowed", d)
	}
}

// TestVault_V12_RecordsWithoutBackoffOfItsOwn: every final non-200 answer is
// recorded as a refusal, and the vault connector's ledger never refuses a
// request for a back-off of its own (V12: "retry on the next pass"): no
// ladder, no suspension however many strikes; redirects and robots.txt
// answers are not refusals.
func TestVault_V12_RecordsWithoutBackoffOfItsOwn(t *testing.T) {
	t.Parallel()
	var events []backoff.Event
	l := &backoff.Ledger{Policy: backoff.Vault(), OnEvent: func(e backoff.Event) { events = append(events, e) }}
	for i, st := range []int{403, 404, 429, 500, 503, 403, 403} {
		ev := observe(t, l, "vault.example", backoff.Outcome{Status: st}, t0)
		if ev.Type != backoff.EventRefused || ev.Strikes != i+1 || !ev.Until.IsZero() || ev.Suspended() {
			t.Fatalf("status %d: %+v, want refused, strike %d, no cool-down", st, ev, i+1)
		}
	}
	d := l.Check(ctx, "vault.example", backoff.Article, t0)
	if !d.Allowed || d.Strikes != 7 || d.Cause != "status 403" {
		t.Fatalf("Check = %+v, want allowed with 7 strikes recorded", d)
	}
	if len(events) != 7 {
		t.Fatalf("%d events, want 7", len(events))
	}
	if ev := observe(t, l, "vault.example", refusal(200), t0); ev.Type != backoff.EventCleared {
		t.Fatalf("200: %+v, want cleared", ev)
	}
}

// TestVault_V12_HonoursRetryAfter: "no back-off of its own" is not licence to
// be rude (never rude): a refusal carrying a Retry-After — a 429, a 503, any
// other refusal, a challenge — cools the vault's host down for exactly that
// long, whatever the strike count (no ladder, no Min429, no jitter), capped at
// 24 h; every kind of request waits, and the next request after it is allowed.
func TestVault_V12_HonoursRetryAfter(t *testing.T) {
	t.Parallel()
	date := t0.Add(90 * time.Minute).Format(http.TimeFormat)
	for _, tc := range []struct {
		name string
		o    backoff.Outcome
		want time.Duration
	}{
		{"429 seconds", backoff.Outcome{Status: 429, RetryAfter: "120"}, 2 * time.Minute},
		{"503 seconds", backoff.Outcome{Status: 503, RetryAfter: "7"}, 7 * time.Second},
		{"403 seconds", backoff.Outcome{Status: 403, RetryAfter: "30"}, 30 * time.Second},
		{"challenge", backoff.Outcome{Status: 403, RetryAfter: "45", Challenge: backoff.Cloudflare}, 45 * time.Second},
		{"429 date", backoff.Outcome{Status: 429, RetryAfter: date}, 90 * time.Minute},
		{"429 capped", backoff.Outcome{Status: 429, RetryAfter: "864000"}, 24 * time.Hour},
		{"429 zero", backoff.Outcome{Status: 429, RetryAfter: "0"}, 0},
		{"429 garbage", backoff.Outcome{Status: 429, RetryAfter: "soon"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &backoff.Ledger{Policy: backoff.Vault()}
			// Several refusals in a row: still exactly the server's figure.
			var ev backoff.Event
			for range 3 {
				ev = observe(t, l, "vault.example", tc.o, t0)
			}
			if ev.Type != backoff.EventRefused || ev.Suspended() {
				t.Fatalf("event %+v, want refused, not suspended", ev)
			}
			if tc.want == 0 {
				if !ev.Until.IsZero() {
					t.Fatalf("Until %v, want no cool-down", ev.Until)
				}
				if d := l.Check(ctx, "vault.example", backoff.Article, t0); !d.Allowed {
					t.Fatalf("Check = %+v, want allowed", d)
				}
				return
			}
			if want := t0.Add(tc.want); !ev.Until.Equal(want) {
				t.Fatalf("Until %v, want %v (exactly the Retry-After)", ev.Until, want)
			}
			for _, k := range []backoff.Kind{backoff.Article, backoff.Feed, backoff.Robots} {
				d := l.Check(ctx, "vault.example", k, t0.Add(tc.want-time.Nanosecond))
				if d.Allowed || d.Reason != backoff.Cooldown || !d.Until.Equal(t0.Add(tc.want)) {
					t.Fatalf("%v just before the end: %+v, want cooling down until +%v", k, d, tc.want)
				}
			}
			if d := l.Check(ctx, "vault.example", backoff.Article, t0.Add(tc.want)); !d.Allowed {
				t.Fatalf("at the end of the Retry-After: %+v, want allowed", d)
			}
		})
	}
}

// TestLedgerKeys: hosts are keyed without case, port or trailing dot, by
// their IDNA A-label (P1: one host, one key, as in every other layer), and
// PerSite shares one record per registrable domain.
func TestLedgerKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		perSite    bool
		host, want string
	}{
		{false, "News.Example.COM", "news.example.com"},
		{false, "news.example.com:443", "news.example.com"},
		{false, "news.example.com.", "news.example.com"},
		{false, "[2001:db8::1]:443", "2001:db8::1"},
		{false, "news.example.com:8443", "news.example.com"},
		{false, "Bücher.Example", "xn--bcher-kva.example"}, // P1: the IDNA A-label, as every layer keys it
		{false, "xn--bcher-kva.example.", "xn--bcher-kva.example"},
		{true, "www.Bücher.Example:443", "xn--bcher-kva.example"},
		{true, "www.bbc.co.uk", "bbc.co.uk"},
		{true, "news.bbc.co.uk:443", "bbc.co.uk"},
		{true, "blog.example.github.io", "example.github.io"},
		{true, "192.0.2.10", "192.0.2.10"},
		{true, "co.uk", "co.uk"},
	} {
		l := &backoff.Ledger{PerSite: tc.perSite}
		if got := l.Key(tc.host); got != tc.want {
			t.Errorf("PerSite %v: Key(%q) = %q, want %q", tc.perSite, tc.host, got, tc.want)
		}
	}
	l := &backoff.Ledger{PerSite: true}
	observe(t, l, "www.bbc.co.uk", refusal(403), t0)
	if d := l.Check(ctx, "news.bbc.co.uk", backoff.Feed, t0); d.Allowed || d.Host != "bbc.co.uk" {
		t.Fatalf("sibling host of a refusing site: %+v, want refused", d)
	}
	if d := l.Check(ctx, "www.bbc.com", backoff.Feed, t0); !d.Allowed {
		t.Fatalf("another site: %+v, want allowed", d)
	}
}

// failing is a Store that cannot answer.
type failing struct{ err error }

func (f failing) Get(context.Context, string) (backoff.State, bool, error) {
	return backoff.State{}, false, f.err
}
func (f failing) Update(context.Context, string, func(backoff.State, bool) (backoff.State, bool)) error {
	return f.err
}

// TestLedgerStoreErrorRefuses: the ledger never fails open.
func TestLedgerStoreErrorRefuses(t *testing.T) {
	t.Parallel()
	boom := errors.New("store down")
	l := &backoff.Ledger{Store: failing{boom}}
	d := l.Check(ctx, "news.example", backoff.Feed, t0)
	if d.Allowed || d.Reason != backoff.Unavailable {
		t.Fatalf("Check with a failing store = %+v, want refused (unavailable)", d)
	}
	err := d.Err()
	var re *backoff.CooldownError
	if !errors.As(err, &re) || !errors.Is(err, backoff.ErrUnavailable) || !errors.Is(err, boom) || re.Host != "news.example" {
		t.Fatalf("Err() = %v, want a CooldownError wrapping ErrUnavailable and the store's error", err)
	}
	if _, err := l.Observe(ctx, "news.example", refusal(403), t0); !errors.Is(err, boom) {
		t.Fatalf("Observe with a failing store: %v, want the store's error", err)
	}
}

// TestDecisionErr: a refused Decision's error says who, why and until when.
func TestDecisionErr(t *testing.T) {
	t.Parallel()
	l := &backoff.Ledger{}
	observe(t, l, "news.example", backoff.Outcome{Status: 429}, t0)
	d := l.Check(ctx, "news.example", backoff.Article, t0)
	err := d.Err()
	var re *backoff.CooldownError
	if !errors.As(err, &re) || !errors.Is(err, backoff.ErrCooldown) {
		t.Fatalf("Err() = %v", err)
	}
	want := "backoff: article request to news.example refused: cooling down until 2026-11-30T08:05:00Z (last refusal: status 429)"
	if err.Error() != want {
		t.Fatalf("Error() = %q\nwant %q", err.Error(), want)
	}
	if err := l.Check(ctx, "other.example", backoff.Article, t0).Err(); err != nil {
		t.Fatalf("allowed Decision's Err() = %v", err)
	}
}

// TestLedgerSweep: a record left by a Retry-After without a strike is swept
// once its cool-down ends; a record with strikes is kept.
func TestLedgerSweep(t *testing.T) {
	t.Parallel()
	var store backoff.MemoryStore
	l := &backoff.Ledger{Store: &store}
	observe(t, l, "slow.example", backoff.Outcome{Status: 503, RetryAfter: "600"}, t0)
	observe(t, l, "refusing.example", refusal(403), t0)
	if n, err := l.Sweep(ctx, t0.Add(5*time.Minute)); n != 0 || err != nil {
		t.Fatalf("Sweep during the cool-downs = %d, %v; want 0", n, err)
	}
	if n, _ := l.Sweep(ctx, t0.Add(10*time.Minute)); n != 1 || store.Len() != 1 {
		t.Fatalf("Sweep after the cool-downs dropped %d, %d left; want 1 dropped, 1 left", n, store.Len())
	}
	if d := l.Check(ctx, "refusing.example", backoff.Article, t0.Add(10*time.Minute)); d.Strikes != 1 {
		t.Fatalf("refusing host after Sweep = %+v, want its strike kept", d)
	}
	if n, err := (&backoff.Ledger{Store: failing{errors.New("x")}}).Sweep(ctx, t0); n != 0 || err != nil {
		t.Fatalf("Sweep on a store without Sweeper = %d, %v", n, err)
	}
}

// TestNames: the names events, errors and logs print.
func TestNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ got, want string }{
		{backoff.Article.String(), "article"},
		{backoff.Feed.String(), "feed"},
		{backoff.Robots.String(), "robots"},
		{backoff.Kind(9).String(), "kind(9)"},
		{backoff.None.String(), "none"},
		{backoff.Cooldown.String(), "cooling down"},
		{backoff.Suspended.String(), "suspended"},
		{backoff.Recheck.String(), "daily re-check"},
		{backoff.Unavailable.String(), "ledger unavailable"},
		{backoff.Reason(9).String(), "reason(9)"},
		{backoff.Neutral.String(), "neutral"},
		{backoff.Success.String(), "success"},
		{backoff.Refusal.String(), "refusal"},
		{backoff.Verdict(9).String(), "verdict(9)"},
		{backoff.EventNone.String(), "none"},
		{backoff.EventCooledDown.String(), "cooled down"},
		{backoff.Outcome{Status: 403, Challenge: backoff.Akamai}.Cause(), "challenge akamai"},
		{backoff.State{}.Cause(), ""},
		{backoff.State{LastStatus: 401}.Cause(), "status 401"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestZeroPolicyIsStrict_S4: a zero Policy judges and backs off like
// StrictNews, never fail-open.
func TestZeroPolicyIsStrict_S4(t *testing.T) {
	t.Parallel()
	var p backoff.Policy
	for _, st := range []int{401, 403, 429} {
		if got := p.Classify(refusal(st)); got != backoff.Refusal {
			t.Errorf("zero Policy Classify(%d) = %v, want refusal", st, got)
		}
	}
	if p.Step(1) != 5*time.Minute || p.Step(20) != 6*time.Hour {
		t.Errorf("zero Policy steps %v, %v; want 5m, 6h", p.Step(1), p.Step(20))
	}
}

// TestStrictNews_S3_RobotsRefusal: a robots.txt answering 429 is a refusal
// the ledger keeps (the robots cache separately disallows the site), and
// any success afterwards clears it.
func TestStrictNews_S3_RobotsRefusal(t *testing.T) {
	t.Parallel()
	l := &backoff.Ledger{}
	ev := observe(t, l, "news.example", backoff.Outcome{Kind: backoff.Robots, Status: 429, RetryAfter: "900"}, t0)
	if ev.Type != backoff.EventRefused || !ev.Until.Equal(t0.Add(15*time.Minute)) {
		t.Fatalf("robots.txt 429: %+v, want refused for 15 min", ev)
	}
	if d := l.Check(ctx, "news.example", backoff.Robots, t0.Add(10*time.Minute)); d.Allowed {
		t.Fatalf("robots.txt during the cool-down: %+v, want refused", d)
	}
	if ev := observe(t, l, "news.example", backoff.Outcome{Kind: backoff.Robots, Status: 200}, t0.Add(15*time.Minute)); ev.Type != backoff.EventCleared {
		t.Fatalf("robots.txt 200 afterwards: %+v, want cleared", ev)
	}
}

// ctxStore is a MemoryStore that refuses to work under a cancelled context, as
// a networked store would.
type ctxStore struct{ backoff.MemoryStore }

func (s *ctxStore) Update(ctx context.Context, key string, fn func(backoff.State, bool) (backoff.State, bool)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.MemoryStore.Update(ctx, key, fn)
}

// TestObserve_S4_RefusalOutlivesCancelledCaller: a caller that gives up as
// the refusal arrives still leaves the host cooling down; a success at a
// host with nothing against it writes nothing.
func TestObserve_S4_RefusalOutlivesCancelledCaller(t *testing.T) {
	store := &ctxStore{}
	l := &backoff.Ledger{Store: store}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.Observe(cancelled, "news.example", refusal(429), t0); err != nil {
		t.Fatalf("Observe under a cancelled context: %v", err)
	}
	if d := l.Check(ctx, "news.example", backoff.Article, t0.Add(time.Minute)); d.Allowed {
		t.Fatalf("a refusal observed under a cancelled context was lost: %+v", d)
	}
	if ev, err := l.Observe(cancelled, "quiet.example", backoff.Outcome{Status: 200}, t0); err != nil || ev.Type != backoff.EventNone {
		t.Fatalf("success at a quiet host = %v, %v; want no event, no error", ev, err)
	}
	if _, ok, _ := store.Get(ctx, "quiet.example"); ok {
		t.Fatal("a success at a quiet host left a record")
	}
	quiet := &backoff.Ledger{}
	if n := testing.AllocsPerRun(100, func() {
		_, _ = quiet.Observe(ctx, "quiet.example", backoff.Outcome{Status: 200}, t0)
	}); n != 0 {
		t.Errorf("Observe of a success at a quiet host: %v allocs, want 0", n)
	}
}

// TestStrictNews_S4_RetryAfterDateFromServerClock: a Retry-After date is
// read against the response's Date, so a worker whose clock runs an hour
// ahead still cools the host down for the 10 minutes the server asked
// (before, it read the date as an hour past and kept no cool-down); without
// a Date, against the worker's clock as before.
func TestStrictNews_S4_RetryAfterDateFromServerClock(t *testing.T) {
	t.Parallel()
	server := t0
	skewed := t0.Add(time.Hour)
	ra := server.Add(10 * time.Minute).Format(http.TimeFormat)
	l := &backoff.Ledger{Policy: backoff.StrictNews()}
	ev := observe(t, l, "news.example", backoff.Outcome{Status: 503, RetryAfter: ra, Date: server.Format(http.TimeFormat)}, skewed)
	if got := ev.Until.Sub(skewed); got != 10*time.Minute {
		t.Fatalf("cool-down with the server's Date = %v, want 10m0s", got)
	}
	o := backoff.NewOutcome(backoff.Feed, 503, http.Header{"Retry-After": {ra}, "Date": {server.Format(http.TimeFormat)}}, nil)
	if o.Date == "" {
		t.Fatal("NewOutcome kept no Date")
	}
	l = &backoff.Ledger{Policy: backoff.StrictNews()}
	if ev := observe(t, l, "news.example", backoff.Outcome{Status: 503, RetryAfter: "120", Date: server.Format(http.TimeFormat)}, skewed); ev.Until.Sub(skewed) != 2*time.Minute {
		t.Errorf("delta-seconds with a Date: cool-down %v, want 2m0s", ev.Until.Sub(skewed))
	}
}
