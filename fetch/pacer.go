package fetch

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/internal/hostkey"
)

// Clock is the time source of the chain's layers: a caller may pass its own
// (any type with these two methods, safe for concurrent use). nil means real
// time. Every instant the chain records — a request's start, a handshake, a
// response's first byte, the read instant of a proof — comes from the one
// clock a [Client] is given, so that they agree with each other.
type Clock = clock.Clock

// Pacer is the layer that paces requests per host (D2, S2, V7, P1): the start of
// one request to a host and the start of the next are at least Interval apart (a
// random draw in [Interval, IntervalMax] when a band is set), or longer when a
// robots.txt Crawl-delay or the ledger asks for longer; at most InFlight requests
// are in flight to one host; waiting goroutines go in first-come, first-served
// order; a wait ends early when the request's context is done.
//
// A request holds its in-flight slot until its response body reaches EOF or is
// closed, so the caller must close every body, as [http.Client] requires anyway.
// Pacing state of a host is released once the host is idle and its interval has
// passed, so memory follows the hosts in use, not the hosts ever seen.
//
// The zero Pacer paces at DefaultInterval, one in flight per host, over
// [http.DefaultTransport]. Set the fields before the first RoundTrip; a Pacer is
// safe for concurrent use and must not be copied after first use. Pacing holds
// across every goroutine sharing one Pacer (P1).
type Pacer struct {
	Next        http.RoundTripper // nil: http.DefaultTransport
	Interval    time.Duration     // 0: DefaultInterval
	IntervalMax time.Duration     // > Interval: random band [Interval, IntervalMax]
	InFlight    int               // 0: DefaultInFlight
	PerSite     bool              // key by registrable domain instead of host
	Clock       Clock             // nil: real time
	// Schedule, when set, is consulted after the local grant: every start is
	// claimed in it and its real start reported to it, so Pacers of several
	// processes sharing it keep the interval between them (P1). nil: pacing
	// holds within this Pacer only.
	Schedule Schedule

	mu    sync.Mutex
	hosts map[string]*paceState
	ops   int
}

type paceState struct {
	last     time.Time     // start of the latest request
	gap      time.Duration // drawn interval after last
	maxMin   time.Duration // longest per-request minimum seen (Crawl-delay, ledger)
	inflight int
	queue    []*paceWaiter
}

type paceWaiter struct {
	wake chan struct{}
	min  time.Duration
}

func (p *Pacer) limits() (lo, hi time.Duration, n int) {
	lo, hi, n = p.Interval, p.IntervalMax, p.InFlight
	if lo <= 0 {
		lo = DefaultInterval
	}
	if hi < lo {
		hi = lo
	}
	if n <= 0 {
		n = DefaultInFlight
	}
	return lo, hi, n
}

func (p *Pacer) draw() time.Duration {
	lo, hi, _ := p.limits()
	if hi <= lo {
		return lo
	}
	return lo + rand.N(hi-lo+1)
}

// Key returns the pacing key of u: its normalised host, or its registrable domain
// when PerSite is set.
func (p *Pacer) Key(u *url.URL) (string, error) { return pacingKey(context.Background(), u, p.PerSite) }

func pacingKey(ctx context.Context, u *url.URL, perSite bool) (string, error) {
	k, err := hostKey(ctx, u)
	if err != nil {
		return "", err
	}
	if perSite {
		return hostkey.Site(k), nil
	}
	return k, nil
}

// Wait blocks until a request to key may start, taking an in-flight slot, and
// returns the function that gives the slot back (call it exactly once; further
// calls do nothing) and how long it waited. min lengthens the interval before this
// request (a Crawl-delay). It returns ctx.Err() if ctx ends first.
func (p *Pacer) Wait(ctx context.Context, key string, min time.Duration) (release func(), waited time.Duration, err error) {
	waited, err = p.wait(ctx, key, min)
	if err != nil {
		return nil, waited, err
	}
	s := &paceSlot{p: p, key: key}
	return s.release, waited, nil
}

// paceSlot is one granted in-flight slot: its release gives it back once.
type paceSlot struct {
	p    *Pacer
	key  string
	done atomic.Bool
}

func (s *paceSlot) release() {
	if s.done.CompareAndSwap(false, true) {
		s.p.release(s.key)
	}
}

// wait blocks until a request to key may start and takes an in-flight slot
// for it, which the caller gives back with p.release(key) (once); on error
// no slot is held.
func (p *Pacer) wait(ctx context.Context, key string, min time.Duration) (time.Duration, error) {
	waited, err := p.waitLocal(ctx, key, min)
	if err != nil || p.Schedule == nil {
		return waited, err
	}
	// The shared schedule: claim this start among every process's, waiting
	// (holding the local slot) until a claim succeeds.
	clk := clock.Or(p.Clock)
	lo, _, _ := p.limits()
	for {
		now := clk.Now()
		next, ok, err := p.Schedule.Claim(ctx, key, now, max(lo, min))
		if err != nil {
			p.release(key)
			return waited, err
		}
		if ok {
			return waited, nil
		}
		d := next.Sub(now)
		select {
		case <-clk.After(d):
			waited += d
		case <-ctx.Done():
			p.release(key)
			return waited + clk.Now().Sub(now), ctx.Err()
		}
	}
}

func (p *Pacer) waitLocal(ctx context.Context, key string, min time.Duration) (time.Duration, error) {
	clk := clock.Or(p.Clock)
	start := clk.Now()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	_, _, n := p.limits()

	p.mu.Lock()
	if p.hosts == nil {
		p.hosts = make(map[string]*paceState)
	}
	p.sweepLocked(start)
	st := p.hosts[key]
	if st == nil {
		st = &paceState{}
		p.hosts[key] = st
	}
	// Fast path: nobody waiting, a slot free, the interval over.
	if len(st.queue) == 0 && st.inflight < n && (st.last.IsZero() || !start.Before(st.last.Add(max(st.gap, min)))) {
		p.grantLocked(st, start, min)
		p.mu.Unlock()
		return 0, nil
	}
	w := &paceWaiter{wake: make(chan struct{}, 1), min: min}
	st.queue = append(st.queue, w)
	for {
		var timer <-chan time.Time
		if st.queue[0] == w && st.inflight < n {
			now := clk.Now()
			ready := st.last.Add(max(st.gap, w.min))
			if st.last.IsZero() || !now.Before(ready) {
				st.queue = st.queue[1:]
				p.grantLocked(st, now, w.min)
				p.wakeHeadLocked(st)
				p.mu.Unlock()
				return now.Sub(start), nil
			}
			timer = clk.After(ready.Sub(now))
		}
		p.mu.Unlock()
		select {
		case <-w.wake:
		case <-timer:
		case <-ctx.Done():
			p.mu.Lock()
			for i, q := range st.queue {
				if q == w {
					st.queue = append(st.queue[:i], st.queue[i+1:]...)
					if i == 0 {
						p.wakeHeadLocked(st)
					}
					break
				}
			}
			p.mu.Unlock()
			return clk.Now().Sub(start), ctx.Err()
		}
		p.mu.Lock()
	}
}

func (p *Pacer) grantLocked(st *paceState, now time.Time, min time.Duration) {
	st.inflight++
	st.last = now
	st.gap = p.draw()
	st.maxMin = max(st.maxMin, min)
}

func (p *Pacer) wakeHeadLocked(st *paceState) {
	if len(st.queue) > 0 {
		select {
		case st.queue[0].wake <- struct{}{}:
		default:
		}
	}
}

func (p *Pacer) release(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.hosts[key]
	if st == nil {
		return
	}
	st.inflight--
	p.wakeHeadLocked(st)
}

// sweepLocked drops the state of idle hosts whose interval has passed. It runs
// once per len(hosts) calls, so its cost per request stays constant.
func (p *Pacer) sweepLocked(now time.Time) {
	p.ops++
	if p.ops < len(p.hosts)+64 {
		return
	}
	p.ops = 0
	for k, st := range p.hosts {
		if st.inflight == 0 && len(st.queue) == 0 && !now.Before(st.last.Add(max(st.gap, st.maxMin))) {
			delete(p.hosts, k)
		}
	}
}

// Hosts returns how many hosts the Pacer holds state for (busy, or idle within
// their interval, or not yet swept).
func (p *Pacer) Hosts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.hosts)
}

// RoundTrip waits for the request's turn at its host, then sends it down the chain.
// A wait cut short by the context returns the context's error, with req.Body closed.
func (p *Pacer) RoundTrip(req *http.Request) (*http.Response, error) {
	return p.roundTrip(p.Next, req)
}

func (p *Pacer) roundTrip(nextRT http.RoundTripper, req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	key, err := pacingKey(ctx, req.URL, p.PerSite)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	waited, err := p.wait(ctx, key, minGapFrom(ctx))
	call := callFrom(ctx)
	if call != nil && call.rec != nil {
		call.rec.addWait(waited)
	}
	if err != nil {
		closeBody(req)
		return nil, waitError(key, err)
	}
	// The interval counts from the moment the request is on the wire, not from the
	// grant: a new connection's handshake must not eat into the next interval. In a
	// Client's chain the connection reports when the request's bytes reached the
	// kernel; on its own the Pacer traces Go's WroteHeaders, which fires just
	// before the transport flushes. The slot lives in the body that gives it back
	// (one allocation for both).
	rb := &releaseBody{slot: paceSlot{p: p, key: key}}
	if call != nil {
		call.wrote = &rb.slot
	} else {
		trace := &httptrace.ClientTrace{WroteHeaders: func() { p.markStart(key) }}
		req = req.WithContext(httptrace.WithClientTrace(ctx, trace))
	}
	resp, err := next(nextRT).RoundTrip(req)
	if err != nil {
		rb.slot.release()
		return nil, err
	}
	rb.rc = resp.Body
	resp.Body = rb
	return resp, nil
}

// markStart moves the host's last start to now, if later, here and in the
// shared Schedule: the request has just been written.
func (p *Pacer) markStart(key string) {
	now := clock.Or(p.Clock).Now()
	p.mu.Lock()
	if st := p.hosts[key]; st != nil && now.After(st.last) {
		st.last = now
	}
	p.mu.Unlock()
	if p.Schedule != nil {
		// An error leaves the claim's instant as the latest start: a few
		// milliseconds early at worst, which the next claim then counts from.
		_ = p.Schedule.Started(context.Background(), key, now)
	}
}

// releaseBody gives the in-flight slot back at EOF, at the first read error, or at
// Close, whichever comes first — unless a layer above holds the release (see
// hold), in which case the slot goes back when that layer lets go.
type releaseBody struct {
	rc   io.ReadCloser
	slot paceSlot

	mu   sync.Mutex
	held bool // a layer above is still reading the start of the body
	due  bool // EOF, an error or Close came while held
}

func (b *releaseBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.release()
	}
	return n, err
}

func (b *releaseBody) Close() error {
	err := b.rc.Close()
	b.release()
	return err
}

func (b *releaseBody) release() {
	b.mu.Lock()
	if b.held {
		b.due = true
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	b.slot.release()
}

// hold keeps the slot taken even if the body ends, until unhold: the
// [LedgerGate] above the Pacer peeks at a body (which may read it to EOF)
// before the ledger has seen the response, and the next request to the host
// must not be granted before then, or it would be sent into a cool-down the
// response is about to start.
func (b *releaseBody) hold() {
	b.mu.Lock()
	b.held = true
	b.mu.Unlock()
}

// unhold ends hold, giving the slot back if the body ended meanwhile.
func (b *releaseBody) unhold() {
	b.mu.Lock()
	b.held = false
	due := b.due
	b.mu.Unlock()
	if due {
		b.slot.release()
	}
}

// slotHolder is a response body whose in-flight slot can be held while a layer
// reads its start (a [Pacer]'s).
type slotHolder interface {
	hold()
	unhold()
}

type minGapKey struct{}

// withMinGap records a per-request minimum interval (a Crawl-delay, a ledger's
// demand) for the Pacer below; the longest one given wins.
func withMinGap(ctx context.Context, d time.Duration) context.Context {
	if d <= minGapFrom(ctx) {
		return ctx
	}
	return context.WithValue(ctx, minGapKey{}, d)
}

func minGapFrom(ctx context.Context) time.Duration {
	d, _ := ctx.Value(minGapKey{}).(time.Duration)
	return d
}

func next(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		return http.DefaultTransport
	}
	return rt
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
