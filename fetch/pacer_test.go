package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politefetch/politefetch/backoff"
)

// TestPacer_D2_FIFOAndInterval: five goroutines queued on one host start in the
// order they arrived, one interval apart, each after the previous one released its
// slot (D2, P1). Runs under synctest: the waits are exact and take no real time.
func TestPacer_D2_FIFOAndInterval(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &pacer{Interval: time.Second}
		ctx := context.Background()
		t0 := time.Now()
		type grant struct {
			i  int
			at time.Duration
		}
		grants := make(chan grant, 5)
		var wg sync.WaitGroup
		defer wg.Wait()
		for i := range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				release, _, err := p.waitTurn(ctx, "news.example", 0)
				if err != nil {
					t.Error(err)
					return
				}
				grants <- grant{i, time.Since(t0)}
				time.Sleep(100 * time.Millisecond) // the request in flight
				release()
			}()
			synctest.Wait() // goroutine i is granted or queued before i+1 starts
		}
		for want := range 5 {
			g := <-grants
			if g.i != want || g.at != time.Duration(want)*time.Second {
				t.Fatalf("grant %d: goroutine %d at %v, want goroutine %d at %v", want, g.i, g.at, want, time.Duration(want)*time.Second)
			}
		}
	})
}

// TestPacer_D2_OneInFlight: with the interval long past, a second request still
// waits for the first one's release (one in flight per host, D2).
func TestPacer_D2_OneInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &pacer{Interval: 10 * time.Millisecond}
		ctx := context.Background()
		release, _, _ := p.waitTurn(ctx, "a.example", 0)
		done := make(chan time.Duration)
		t0 := time.Now()
		go func() {
			r, _, _ := p.waitTurn(ctx, "a.example", 0)
			done <- time.Since(t0)
			r()
		}()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("second request started while the first was in flight")
		default:
		}
		release()
		release() // a second call does nothing
		if got := <-done; got != 5*time.Second {
			t.Fatalf("second request started at %v, want 5s", got)
		}
		// Another host is not held up by a.example.
		r, waited, _ := p.waitTurn(ctx, "b.example", 0)
		r()
		if waited != 0 {
			t.Fatalf("b.example waited %v", waited)
		}
	})
}

// TestPacer_V7_CrawlDelayLengthens: a per-request minimum (the Crawl-delay)
// longer than the interval wins; a shorter one changes nothing (V7).
func TestPacer_V7_CrawlDelayLengthens(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &pacer{Interval: time.Second}
		ctx := context.Background()
		for _, tc := range []struct {
			min, want time.Duration
		}{{0, 0}, {3 * time.Second, 3 * time.Second}, {500 * time.Millisecond, time.Second}} {
			r, waited, err := p.waitTurn(ctx, "slow.example", tc.min)
			if err != nil {
				t.Fatal(err)
			}
			r()
			if waited != tc.want {
				t.Errorf("min %v: waited %v, want %v", tc.min, waited, tc.want)
			}
		}
	})
}

// TestPacer_D2_BandAndCancel: intervals drawn from a 2–5 s band stay within it
// (D2), and a waiter whose context ends leaves the queue without holding up the
// next one.
func TestPacer_D2_BandAndCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &pacer{Interval: 2 * time.Second, IntervalMax: 5 * time.Second}
		ctx := context.Background()
		last := time.Time{}
		for range 50 {
			r, _, _ := p.waitTurn(ctx, "band.example", 0)
			now := time.Now()
			if !last.IsZero() {
				if gap := now.Sub(last); gap < 2*time.Second || gap > 5*time.Second {
					t.Fatalf("gap %v outside 2–5 s", gap)
				}
			}
			last = now
			r()
		}
		cctx, cancel := context.WithCancel(ctx)
		errc := make(chan error)
		go func() {
			_, _, err := p.waitTurn(cctx, "band.example", 0)
			errc <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled wait returned %v", err)
		}
		r, waited, err := p.waitTurn(ctx, "band.example", 0)
		if err != nil || waited > 5*time.Second {
			t.Fatalf("after a cancelled waiter: waited %v, err %v", waited, err)
		}
		r()
	})
}

// TestPacer_IdleStateReleased: the state of 10,000 hosts is dropped once they are
// idle past their interval.
func TestPacer_IdleStateReleased(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &pacer{Interval: time.Second}
		ctx := context.Background()
		for i := range 10_000 {
			r, _, _ := p.waitTurn(ctx, fmt.Sprintf("h%d.example", i), 0)
			r()
		}
		time.Sleep(2 * time.Second)
		for range 20_000 {
			r, _, _ := p.waitTurn(ctx, "busy.example", 0)
			r()
			if p.Hosts() == 1 {
				return
			}
		}
		t.Fatalf("pacer still holds %d hosts", p.Hosts())
	})
}

// TestPacer_P1_SharedScheduleAcrossProcesses: two Pacers (two processes) sharing
// one Schedule keep the host's interval between their requests (P1).
func TestPacer_P1_SharedScheduleAcrossProcesses(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		shared := &MemorySchedule{}
		a := &pacer{Interval: time.Second, Schedule: shared}
		b := &pacer{Interval: time.Second, Schedule: shared}
		ctx := context.Background()
		t0 := time.Now()
		var mu sync.Mutex
		var starts []time.Duration
		var wg sync.WaitGroup
		for _, p := range []*pacer{a, b, a, b, a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, _, err := p.waitTurn(ctx, "shared.example", 0)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				starts = append(starts, time.Since(t0))
				mu.Unlock()
				time.Sleep(10 * time.Millisecond)
				r()
			}()
			synctest.Wait()
		}
		wg.Wait()
		slices.Sort(starts)
		for i, s := range starts {
			if want := time.Duration(i) * time.Second; s != want {
				t.Fatalf("start %d at %v, want %v (all: %v)", i, s, want, starts)
			}
		}
	})
}

// TestPacer_P1_SharedScheduleCountsFromTheWrite: a request that leaves 300 ms
// after its claim (a slow write) pushes the other process's next start 300 ms
// later: the Schedule holds the real start, not the claim (P1).
func TestPacer_P1_SharedScheduleCountsFromTheWrite(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		shared := &MemorySchedule{}
		a := &pacer{Interval: time.Second, Schedule: shared}
		b := &pacer{Interval: time.Second, Schedule: shared}
		ctx := context.Background()
		t0 := time.Now()
		turn, _, err := turnFor(ctx, a, "shared.example", 0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		turn.wrote() // the request's bytes reach the kernel now
		turn.end(false)
		release, _, err := b.waitTurn(ctx, "shared.example", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		if got, want := time.Since(t0), 1300*time.Millisecond; got != want {
			t.Fatalf("the other process started at %v, want %v (one interval after the write)", got, want)
		}
	})
}

// TestPacer_D2_TracedEndBeforeItsWriteIsHeard: on its own, the pacer learns of
// a write from net/http's WroteRequest hook, which net/http calls after its
// flush, from its writer goroutine: the answer may be read, and the request
// end, first. Such a request, over while its write is still unheard, counts
// its end as its start, so the next request waits one interval from the end,
// not from the grant, earlier than the bytes (D2, P1; the race made
// TestLayersAlone/pacer start a request 46.9 ms after the previous one at an
// interval of 50 ms).
func TestPacer_D2_TracedEndBeforeItsWriteIsHeard(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &pacer{Interval: time.Second}
		ctx := context.Background()
		t0 := time.Now()
		first, _, err := turnFor(ctx, p, "traced.example", 0)
		if err != nil {
			t.Fatal(err)
		}
		first.gotConn()
		// The bytes leave late, more than an interval after the grant, and
		// the answer is read: the request ends before WroteRequest is called.
		time.Sleep(1500 * time.Millisecond)
		first.end(false)
		release, _, err := p.waitTurn(ctx, "traced.example", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		first.wrote() // the hook, after the next turn's grant
		if got, want := time.Since(t0), 2500*time.Millisecond; got != want {
			t.Fatalf("the next request started at %v, want %v (one interval after the first one's end)", got, want)
		}
	})
}

// turnFor takes a turn at key as a request would, for tests of pacing alone.
func turnFor(ctx context.Context, p *pacer, key string, min time.Duration) (*turn, time.Duration, error) {
	t := &turn{p: p, key: key, ctx: ctx}
	waited, err := p.acquire(ctx, t, min)
	if err != nil {
		return nil, waited, err
	}
	return t, waited, nil
}

// waitTurn takes a turn at key, as a request that is written at once, and
// returns the function that ends it (call it once; more calls do nothing).
func (p *pacer) waitTurn(ctx context.Context, key string, min time.Duration) (release func(), waited time.Duration, err error) {
	t, waited, err := turnFor(ctx, p, key, min)
	if err != nil {
		return nil, waited, err
	}
	t.gotConn()
	t.wrote()
	return func() { t.end(false) }, waited, nil
}

// observingLedger is a Ledger that notes, at each Observe, how many requests the
// pacer still counts in flight to the host.
type observingLedger struct {
	backoff.Ledger
	p        *pacer
	inflight []int
}

func (l *observingLedger) Observe(ctx context.Context, host string, o backoff.Outcome, now time.Time) (backoff.Event, error) {
	l.p.mu.Lock()
	n := -1
	if st := l.p.hosts[host]; st != nil {
		n = st.inflight
	}
	l.p.mu.Unlock()
	l.inflight = append(l.inflight, n)
	return l.Ledger.Observe(ctx, host, o, now)
}

// TestLedgerGate_S4_D5_ObservesBeforeSlotRelease: a ledgerGate below a pacer (as
// a Client stacks them) peeks at a short refusal page (a 429, a challenge) and so
// reads it to its end; the host's in-flight slot must still be held when the
// ledger observes the refusal, or the next request to the host, queued in the
// pacer, is granted and sent into the cool-down the refusal starts (the auditor's
// "cooldown" rule, S4, D5). Once the ledger has seen it, the slot goes back as
// soon as the body is done.
func TestLedgerGate_S4_D5_ObservesBeforeSlotRelease(t *testing.T) {
	far := rtFunc(func(r *http.Request) (*http.Response, error) {
		resp := answer(http.StatusTooManyRequests, "<html>slow down</html>")
		resp.Header.Set("Content-Type", "text/html")
		resp.Header.Set("Retry-After", "120")
		return resp, nil
	})
	p := &pacer{Interval: time.Nanosecond}
	l := &observingLedger{Ledger: backoff.Ledger{Policy: backoff.Digest()}, p: p}
	p.Next = &ledgerGate{Ledger: l, Next: far}
	req, _ := http.NewRequest(http.MethodGet, "https://news.example/a", nil)
	resp, err := p.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(l.inflight, []int{1}) {
		t.Fatalf("in flight at Observe: %v, want [1] (the slot given back before the ledger saw the 429)", l.inflight)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "<html>slow down</html>" {
		t.Errorf("body %q", body)
	}
	p.mu.Lock()
	n := p.hosts["news.example"].inflight
	p.mu.Unlock()
	if n != 0 {
		t.Errorf("in flight after the body was read: %d, want 0", n)
	}
	resp.Body.Close()
	if d := l.Check(context.Background(), "news.example", backoff.Article, time.Now()); d.Allowed {
		t.Error("the 429 started no cool-down")
	}
}

// TestPacer_P1_OneKeyPerHost: pacing keys a request by internal/hostkey's one
// key, as the ledger, robots.txt and the validators do: case, a trailing dot
// and the scheme's default port make no other host; another port does (it may
// be another server). NextStart tells when the host's next request may start.
func TestPacer_P1_OneKeyPerHost(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &pacer{Interval: time.Second}
		ctx := context.Background()
		key := func(raw string) string {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			k, err := pacingKey(ctx, u, false)
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
		for _, tc := range []struct{ url, want string }{
			{"https://example.com/a", "example.com"},
			{"https://Example.COM:443/a", "example.com"},
			{"https://example.com./a", "example.com"},
			{"http://example.com:80/a", "example.com"},
			{"https://example.com:8443/a", "example.com:8443"},
		} {
			if got := key(tc.url); got != tc.want {
				t.Errorf("key of %s = %q, want %q", tc.url, got, tc.want)
			}
		}
		u, _ := url.Parse("https://Example.COM:443/a")
		if next := p.NextStart(u); !next.IsZero() {
			t.Fatalf("NextStart of an unknown host = %v, want zero (now)", next)
		}
		release, _, err := p.waitTurn(ctx, key("https://example.com/x"), 0)
		if err != nil {
			t.Fatal(err)
		}
		release()
		if got, want := p.NextStart(u), time.Now().Add(time.Second); !got.Equal(want) {
			t.Fatalf("NextStart after a start = %v, want %v", got, want)
		}
		other, _ := url.Parse("https://example.com:8443/a")
		if next := p.NextStart(other); !next.IsZero() {
			t.Fatalf("NextStart of another port = %v, want zero", next)
		}
		time.Sleep(time.Second)
		if next := p.NextStart(u); !next.IsZero() {
			t.Fatalf("NextStart once the interval passed = %v, want zero", next)
		}
	})
}
