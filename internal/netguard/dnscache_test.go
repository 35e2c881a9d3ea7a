package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
)

// countingResolver answers every name with 93.184.215.<n> where n counts
// lookups, optionally blocking until released.
type countingResolver struct {
	calls   atomic.Int64
	release chan struct{} // nil: answer at once
	err     error         // returned instead of an answer when set
}

func (r *countingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	n := r.calls.Add(1)
	if r.release != nil {
		select {
		case <-r.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return []netip.Addr{netip.AddrFrom4([4]byte{93, 184, 215, byte(n)})}, nil
}

var epoch = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func lookup(t *testing.T, c *DNSCache, host string) netip.Addr {
	t.Helper()
	addrs, err := c.LookupNetIP(context.Background(), "ip", host)
	if err != nil {
		t.Fatalf("LookupNetIP(%s): %v", host, err)
	}
	if len(addrs) != 1 {
		t.Fatalf("LookupNetIP(%s) = %v", host, addrs)
	}
	return addrs[0]
}

// D8: answers are cached for TTL, then looked up again.
func TestDNSCacheD8TTL(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(epoch)
	res := &countingResolver{}
	c := &DNSCache{Resolver: res, TTL: time.Minute, Clock: clk}

	first := lookup(t, c, "a.test")
	if got := lookup(t, c, "A.TEST."); got != first {
		t.Errorf("second lookup (other spelling) = %v, want cached %v", got, first)
	}
	clk.Advance(59 * time.Second)
	if got := lookup(t, c, "a.test"); got != first {
		t.Errorf("lookup at 59 s = %v, want cached %v", got, first)
	}
	if n := res.calls.Load(); n != 1 {
		t.Errorf("resolver called %d times within TTL, want 1", n)
	}
	clk.Advance(time.Second)
	if got := lookup(t, c, "a.test"); got == first {
		t.Errorf("lookup at 60 s = %v, still the expired answer", got)
	}
	if n := res.calls.Load(); n != 2 {
		t.Errorf("resolver called %d times after expiry, want 2", n)
	}
	// Networks are cached apart.
	if _, err := c.LookupNetIP(context.Background(), "ip4", "a.test"); err != nil {
		t.Fatal(err)
	}
	if n := res.calls.Load(); n != 3 {
		t.Errorf("resolver called %d times after an ip4 lookup, want 3", n)
	}
}

// D8: the zero TTL means DefaultTTL.
func TestDNSCacheDefaultTTL(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(epoch)
	res := &countingResolver{}
	c := &DNSCache{Resolver: res, Clock: clk}
	lookup(t, c, "a.test")
	clk.Advance(DefaultTTL - time.Nanosecond)
	lookup(t, c, "a.test")
	clk.Advance(time.Nanosecond)
	lookup(t, c, "a.test")
	if n := res.calls.Load(); n != 2 {
		t.Errorf("resolver called %d times, want 2", n)
	}
}

// D8: callers may not change the cached answer through the slice they get.
func TestDNSCacheReturnsCopies(t *testing.T) {
	t.Parallel()
	c := &DNSCache{Resolver: &countingResolver{}, Clock: clock.NewManual(epoch)}
	addrs, err := c.LookupNetIP(context.Background(), "ip", "a.test")
	if err != nil {
		t.Fatal(err)
	}
	want := addrs[0]
	addrs[0] = netip.MustParseAddr("10.0.0.1")
	if got := lookup(t, c, "a.test"); got != want {
		t.Errorf("cached answer changed to %v", got)
	}
}

// D8: "not found" is cached for NegativeTTL; transient failures are not.
func TestDNSCacheNegative(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(epoch)
	notFound := &countingResolver{err: &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}}
	c := &DNSCache{Resolver: notFound, NegativeTTL: 10 * time.Second, Clock: clk}
	for range 3 {
		_, err := c.LookupNetIP(context.Background(), "ip", "gone.test")
		var de *net.DNSError
		if !errors.As(err, &de) || !de.IsNotFound {
			t.Fatalf("error = %v, want not found", err)
		}
	}
	if n := notFound.calls.Load(); n != 1 {
		t.Errorf("not-found looked up %d times, want 1", n)
	}
	clk.Advance(10 * time.Second)
	c.LookupNetIP(context.Background(), "ip", "gone.test")
	if n := notFound.calls.Load(); n != 2 {
		t.Errorf("not-found looked up %d times after NegativeTTL, want 2", n)
	}

	off := &DNSCache{Resolver: notFound, NegativeTTL: -1, Clock: clk}
	off.LookupNetIP(context.Background(), "ip", "gone.test")
	off.LookupNetIP(context.Background(), "ip", "gone.test")
	if n := notFound.calls.Load(); n != 4 {
		t.Errorf("with NegativeTTL < 0, looked up %d times in all, want 4", n)
	}

	transient := &countingResolver{err: &net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}}
	tc := &DNSCache{Resolver: transient, Clock: clk}
	tc.LookupNetIP(context.Background(), "ip", "slow.test")
	tc.LookupNetIP(context.Background(), "ip", "slow.test")
	if n := transient.calls.Load(); n != 2 {
		t.Errorf("transient failure looked up %d times, want 2 (not cached)", n)
	}
}

// D8: at most MaxEntries answers are kept, the oldest evicted first.
func TestDNSCacheBounded(t *testing.T) {
	t.Parallel()
	res := &countingResolver{}
	c := &DNSCache{Resolver: res, MaxEntries: 3, Clock: clock.NewManual(epoch)}
	for i := range 5 {
		lookup(t, c, fmt.Sprintf("h%d.test", i))
	}
	if n := c.Len(); n != 3 {
		t.Errorf("Len = %d, want 3", n)
	}
	lookup(t, c, "h4.test") // newest: cached
	if n := res.calls.Load(); n != 5 {
		t.Errorf("h4 looked up again (%d calls)", n)
	}
	lookup(t, c, "h0.test") // oldest: evicted
	if n := res.calls.Load(); n != 6 {
		t.Errorf("h0 not looked up again (%d calls), want 6", n)
	}
	if n := c.Len(); n != 3 {
		t.Errorf("Len = %d, want 3", n)
	}

	// The zero MaxEntries is DefaultMaxEntries.
	big := &DNSCache{Resolver: res, Clock: clock.NewManual(epoch)}
	for i := range DefaultMaxEntries + 10 {
		if _, err := big.LookupNetIP(context.Background(), "ip", fmt.Sprintf("h%d.test", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := big.Len(); n != DefaultMaxEntries {
		t.Errorf("Len = %d, want %d", n, DefaultMaxEntries)
	}
}

// D8: 50 concurrent callers for one name share one lookup.
func TestDNSCacheD8OneLookupInFlight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		res := &countingResolver{release: make(chan struct{})}
		c := &DNSCache{Resolver: res}
		var wg sync.WaitGroup
		got := make([][]netip.Addr, 50)
		errs := make([]error, 50)
		for i := range 50 {
			wg.Go(func() {
				got[i], errs[i] = c.LookupNetIP(context.Background(), "ip", "busy.test")
			})
		}
		synctest.Wait() // all 50 blocked: one in the resolver, 49 waiting on it
		if n := res.calls.Load(); n != 1 {
			t.Fatalf("%d lookups in flight for 50 callers, want 1", n)
		}
		close(res.release)
		wg.Wait()
		for i := range 50 {
			if errs[i] != nil || len(got[i]) != 1 || got[i][0] != netip.MustParseAddr("93.184.215.1") {
				t.Fatalf("caller %d got %v, %v", i, got[i], errs[i])
			}
		}
		if n := res.calls.Load(); n != 1 {
			t.Errorf("%d lookups in all, want 1", n)
		}
	})
}

// A caller whose context ends stops waiting at once; the shared lookup goes
// on for the others and is bounded by LookupTimeout.
func TestDNSCacheHonoursContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		res := &countingResolver{release: make(chan struct{})}
		c := &DNSCache{Resolver: res, LookupTimeout: time.Second}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := c.LookupNetIP(ctx, "ip", "busy.test")
			done <- err
		}()
		other := make(chan error, 1)
		go func() {
			_, err := c.LookupNetIP(context.Background(), "ip", "busy.test")
			other <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled caller got %v", err)
		}
		close(res.release)
		if err := <-other; err != nil {
			t.Errorf("other caller got %v", err)
		}

		// A resolver that never answers is cut off by LookupTimeout.
		hang := &countingResolver{release: make(chan struct{})}
		hc := &DNSCache{Resolver: hang, LookupTimeout: time.Second}
		start := time.Now()
		_, err := hc.LookupNetIP(context.Background(), "ip", "hang.test")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("hung lookup got %v, want DeadlineExceeded", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("hung lookup took %v, want 1s", d)
		}

		// An already cancelled context does not start a lookup.
		if _, err := hc.LookupNetIP(ctx, "ip", "new.test"); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled ctx got %v", err)
		}
		if n := hang.calls.Load(); n != 1 {
			t.Errorf("resolver called %d times, want 1", n)
		}
	})
}

// IP literals are answered without a lookup.
func TestDNSCacheIPLiteral(t *testing.T) {
	t.Parallel()
	res := &countingResolver{}
	c := &DNSCache{Resolver: res}
	addrs, err := c.LookupNetIP(context.Background(), "ip", "2001:db8::1")
	if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddr("2001:db8::1") {
		t.Errorf("got %v, %v", addrs, err)
	}
	if n := res.calls.Load(); n != 0 {
		t.Errorf("resolver called %d times", n)
	}
}

// D8 with V10: after the TTL a rebinding answer is refused by the Dialer.
func TestDialerOverDNSCacheRebinding(t *testing.T) {
	t.Parallel()
	target, _ := listen(t)
	clk := clock.NewManual(epoch)
	res := newSeqResolver(map[string][]string{"rebind.test": {"93.184.215.14", "192.168.0.1"}})
	rd := &routingDial{t: t, target: target}
	d := &Dialer{Guard: &Guard{Allow: loopback}, Resolver: &DNSCache{Resolver: res, TTL: time.Minute, Clock: clk}, Dial: rd.Dial}
	for range 2 {
		conn, err := d.DialContext(context.Background(), "tcp", "rebind.test:443")
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
	}
	clk.Advance(time.Minute)
	_, err := d.DialContext(context.Background(), "tcp", "rebind.test:443")
	wantBlocked(t, err, "192.168.0.1")
	if n := len(rd.Asked()); n != 2 {
		t.Errorf("base dialer asked %d times, want 2", n)
	}
}
