package fetch

import (
	"context"
	"crypto/rand"
	"errors"
	"maps"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/internal/hostkey"
)

// pacer is the layer that paces requests per host: the start of
// one request to a host and the start of the next are at least Interval apart (a
// random draw in [Interval, IntervalMax] when a band is set), or longer when a
// robots.txt Crawl-delay asks for longer; at most InFlight requests are in flight
// to one host; waiting goroutines go in first-come, first-served order; a wait
// ends early when the request's context is done.
//
// A request's start is every moment it puts load on the host: when a connection
// is dialled for it, when that connection's handshake ends, and when its bytes
// are written. A request holds its in-flight slot until its response body
// reaches EOF or is closed (the caller must close every body, as [http.Client]
// requires anyway) and, if it ends before that, until any connection being
// dialled for it is done: net/http goes on dialling after a request is
// cancelled, and an opened connection is load on the publisher. A request that
// ends without anything reaching the host (refused below the pacer, cancelled
// while queued for a connection) gives its start back.
//
// What the pacer reads from a request: its URL's host (the key, see
// [hostkey]); a Crawl-delay left in the context by a robotsGate above.
// What it adds, used alone: an [httptrace.ClientTrace] that learns when the
// request dials, is handed a connection and is written (hooks that
// [http.Transport] calls). In a [Client] the base transport reports the same
// moments, more exactly (see turn). It modifies nothing else.
//
// Pacing state of a host is released once the host is idle and its interval has
// passed, so memory follows the hosts in use, not the hosts ever seen.
//
// The zero pacer paces at DefaultInterval, one in flight per host, over
// [http.DefaultTransport]. Set the fields before the first RoundTrip; a pacer is
// safe for concurrent use and must not be copied after first use. Pacing holds
// across every goroutine sharing one pacer.
type pacer struct {
	Next        http.RoundTripper // nil: http.DefaultTransport
	Interval    time.Duration     // 0: DefaultInterval
	IntervalMax time.Duration     // > Interval: random band [Interval, IntervalMax]
	InFlight    int               // 0: DefaultInFlight
	PerSite     bool              // key by registrable domain instead of host
	Clock       clock.Clock       // nil: real time
	// Schedule, when set, is asked after the local turn: every start and
	// in-flight slot is claimed in it under a lease, so Pacers of several
	// processes sharing it keep the interval and the in-flight limit between
	// them. nil: pacing holds within this pacer only.
	Schedule Schedule
	// ScheduleTimeout bounds each call to the Schedule. 0:
	// defaultScheduleTimeout.
	ScheduleTimeout time.Duration
	// AnswerGrace is how long a request already written to its host is
	// still awaited once its caller has given up (its context cancelled,
	// its deadline passed): the caller gets its context's error at once,
	// the answer is read in the background, where the layers below observe
	// it (the ledger records a refusal on its way), and the turn goes back
	// when the answer has come or the grace has run out. A request not yet
	// written is abandoned at once. 0: defaultAnswerGrace; negative: none
	// (the request ends with its caller).
	AnswerGrace time.Duration

	// observe, when set, is shown each request's events (WithObserver).
	observe observer

	life lifecycle

	mu    sync.Mutex
	hosts map[string]*paceState
	ops   int
	peak  int // the most hosts held at a sweep since the map was last made
}

type paceState struct {
	last     time.Time     // start of the latest request
	gap      time.Duration // drawn interval after last
	maxMin   time.Duration // longest per-request minimum seen (Crawl-delay)
	seq      uint64        // counts the changes of last: a turn gives its start back only if it was the latest
	inflight int
	queue    []*paceWaiter
	// robots: the latest grant was for robots.txt, whose answer may ask
	// for a Crawl-delay that the host's next request counts from this
	// start, so the sweep keeps it (for DefaultRobotsTTL at most).
	robots bool
	// open lists the turns whose response body has been handed to its
	// caller and is not done yet, oldest first (see markOpen): a body left
	// open holds its host's turn, and the wait error and Explain say so.
	open, openTail *turn
}

type paceWaiter struct {
	wake chan struct{}
	min  time.Duration
}

func (p *pacer) limits() (lo, hi time.Duration, n int) {
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

func (p *pacer) draw() time.Duration {
	lo, hi, _ := p.limits()
	if hi <= lo {
		return lo
	}
	return lo + mrand.N(hi-lo+1)
}

func (p *pacer) scheduleTimeout() time.Duration {
	if p.ScheduleTimeout > 0 {
		return p.ScheduleTimeout
	}
	return defaultScheduleTimeout
}

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

// NextStart returns the earliest instant the interval lets the next request to u's
// host (or site) start, on the pacer's clock: the latest start plus the interval
// drawn after it (or a longer Crawl-delay seen). The zero time means now: nothing
// is known about the host, or its interval has passed. Requests in flight or
// queued for the host go first; NextStart does not count them. It is a query for
// explanations ([Client.Explain]); it reserves nothing.
func (p *pacer) NextStart(u *url.URL) time.Time {
	key, err := pacingKey(context.Background(), u, p.PerSite)
	if err != nil {
		return time.Time{}
	}
	now := clock.Or(p.Clock).Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.hosts[key]
	if st == nil || st.last.IsZero() {
		return time.Time{}
	}
	next := st.last.Add(max(st.gap, st.maxMin))
	if !next.After(now) {
		return time.Time{}
	}
	return next
}

// acquire blocks until a request to key may start and takes an in-flight slot
// for it, locally and in the Schedule: t receives its grant, and the caller
// gives the slot back with t.end (once). minGap lengthens the interval before
// this request (a Crawl-delay). On error no slot is held; the error is ctx's, or the
// Schedule's.
func (p *pacer) acquire(ctx context.Context, t *turn, minGap time.Duration) (time.Duration, error) {
	waited, err := p.waitLocal(ctx, t, minGap)
	if err != nil || p.Schedule == nil {
		return waited, err
	}
	// The shared schedule: claim this start and a slot among every
	// process's, waiting (holding the local slot) until a claim succeeds.
	clk := clock.Or(p.Clock)
	lo, _, n := p.limits()
	t.owner = rand.Text()
	ttl := defaultLeaseTTL
	if dl, ok := ctx.Deadline(); ok {
		ttl = time.Until(dl) + p.scheduleTimeout()
	}
	t.ttl = ttl
	for {
		now := clk.Now()
		cctx, cancel := context.WithTimeout(ctx, p.scheduleTimeout())
		wait, ok, err := p.Schedule.Acquire(cctx, Claim{Key: t.key, Owner: t.owner, Now: now, Gap: max(lo, minGap), Limit: n, TTL: ttl})
		cancel()
		if err != nil {
			// The store may have granted the claim and its answer been
			// lost (a time-out after the script ran): giveBack releases
			// the owner's lease, a no-op if it holds none, so that no
			// lease nobody will use holds the host back for its TTL.
			p.giveBack(t, false)
			t.owner = ""
			return waited, err
		}
		if ok {
			t.renewAt = now.Add(ttl / 2)
			return waited, nil
		}
		// Another process's lease may end before the store's estimate: ask
		// again within one interval at the latest.
		d := min(max(wait, time.Millisecond), lo)
		select {
		case <-clock.Until(clk, now.Add(d)):
			waited += d
		case <-ctx.Done():
			t.owner = ""
			p.giveBack(t, false)
			return waited + clk.Now().Sub(now), ctx.Err()
		}
	}
}

func (p *pacer) waitLocal(ctx context.Context, t *turn, min time.Duration) (time.Duration, error) {
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
	st := p.hosts[t.key]
	if st == nil {
		st = &paceState{}
		p.hosts[t.key] = st
	}
	// Fast path: nobody waiting, a slot free, the interval over.
	if len(st.queue) == 0 && st.inflight < n && (st.last.IsZero() || !start.Before(st.last.Add(max(st.gap, min)))) {
		p.grantLocked(st, t, start, min)
		p.mu.Unlock()
		return 0, nil
	}
	w := &paceWaiter{wake: make(chan struct{}, 1), min: min}
	st.queue = append(st.queue, w)
	announced := p.observe == nil
	for {
		var timer <-chan time.Time
		if st.queue[0] == w && st.inflight < n {
			now := clk.Now()
			ready := st.last.Add(max(st.gap, w.min))
			if st.last.IsZero() || !now.Before(ready) {
				st.queue = st.queue[1:]
				p.grantLocked(st, t, now, w.min)
				p.wakeHeadLocked(st)
				p.mu.Unlock()
				return now.Sub(start), nil
			}
			if dl, ok := ctx.Deadline(); ok && p.Clock == nil && ready.Sub(now) > time.Until(dl) {
				// The turn comes after the deadline (a Crawl-delay
				// longer than the request may wait): say so now, not at
				// the deadline. (Only on real time, which deadlines are
				// in: an injected clock's waits end when it is moved.)
				st.queue = st.queue[1:]
				p.wakeHeadLocked(st)
				p.mu.Unlock()
				return clk.Now().Sub(start), context.DeadlineExceeded
			}
			timer = clock.Until(clk, ready)
		}
		p.mu.Unlock()
		if !announced {
			announced = true
			p.emit(requestEvent(ctx, EventWaiting, t.req))
		}
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

func (p *pacer) grantLocked(st *paceState, t *turn, now time.Time, min time.Duration) {
	st.inflight++
	t.prev = st.last
	st.last = now
	st.seq++
	t.seq = st.seq
	st.gap = p.draw()
	st.maxMin = max(st.maxMin, min)
	st.robots = false
}

// markRobots records that the turn just granted at key is a robots.txt
// request (see paceState.robots).
func (p *pacer) markRobots(key string) {
	p.mu.Lock()
	if st := p.hosts[key]; st != nil {
		st.robots = true
	}
	p.mu.Unlock()
}

func (p *pacer) wakeHeadLocked(st *paceState) {
	if len(st.queue) > 0 {
		select {
		case st.queue[0].wake <- struct{}{}:
		default:
		}
	}
}

// giveBack returns t's slot, and its lease in the Schedule. A turn whose
// request put nothing on the wire gives its start back too, unless a later
// start was recorded meanwhile.
func (p *pacer) giveBack(t *turn, wire bool) {
	p.mu.Lock()
	if st := p.hosts[t.key]; st != nil {
		st.unlinkOpen(t)
		st.inflight--
		if !wire && st.seq == t.seq {
			st.last = t.prev
			st.seq++
		}
		p.wakeHeadLocked(st)
	}
	p.mu.Unlock()
	if p.Schedule != nil && t.owner != "" {
		ctx, cancel := t.scheduleCtx()
		// An error leaves the lease to expire (see Schedule).
		_ = p.Schedule.Release(ctx, t.key, t.owner, clock.Or(p.Clock).Now())
		cancel()
	}
}

// markStart moves t's host's latest start to now, if later, here and in the
// shared Schedule: the request has just put load on the host. It returns now.
func (p *pacer) markStart(t *turn) time.Time {
	now := clock.Or(p.Clock).Now()
	p.mu.Lock()
	if st := p.hosts[t.key]; st != nil && now.After(st.last) {
		st.last = now
		st.seq++
	}
	p.mu.Unlock()
	if p.Schedule != nil && t.owner != "" {
		ctx, cancel := t.scheduleCtx()
		// An error leaves the claim's instant as the latest start: a few
		// milliseconds early at worst, which the next claim then counts from.
		_ = p.Schedule.Started(ctx, t.key, t.owner, now)
		cancel()
	}
	return now
}

// sweepLocked drops the state of idle hosts whose interval has passed. It runs
// once per len(hosts) calls, so its cost per request stays constant.
func (p *pacer) sweepLocked(now time.Time) {
	p.ops++
	if p.ops < len(p.hosts)+64 {
		return
	}
	p.ops = 0
	p.peak = max(p.peak, len(p.hosts))
	for k, st := range p.hosts {
		if st.inflight == 0 && len(st.queue) == 0 && !now.Before(st.last.Add(max(st.gap, st.maxMin))) &&
			!(st.robots && now.Before(st.last.Add(DefaultRobotsTTL))) {
			delete(p.hosts, k)
		}
	}
	// A map keeps the room it grew to: once the hosts in use are a small
	// part of the most there were, copy them to a map of their size.
	if p.peak > 256 && len(p.hosts) < p.peak/4 {
		m := make(map[string]*paceState, len(p.hosts))
		maps.Copy(m, p.hosts)
		p.hosts, p.peak = m, len(m)
	}
}

// Hosts returns how many hosts the pacer holds state for (busy, or idle within
// their interval, or not yet swept).
func (p *pacer) Hosts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.hosts)
}

// RoundTrip waits for the request's turn at its host, then sends it down the chain.
// A wait cut short by the context returns the context's error, with req.Body closed.
func (p *pacer) RoundTrip(req *http.Request) (*http.Response, error) {
	return p.roundTrip(p.Next, req)
}

func (p *pacer) roundTrip(nextRT http.RoundTripper, req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	key, err := pacingKey(ctx, req.URL, p.PerSite)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	// The turn lives in the body that gives it back (one allocation for
	// both, none for the first hop of a call, whose call holds it).
	call := callFrom(ctx)
	var rb *releaseBody
	if call != nil {
		rb = call.firstBody()
	}
	if rb == nil {
		rb = new(releaseBody)
	}
	rb.turn = turn{p: p, key: key, ctx: ctx, req: req}
	t := &rb.turn
	waited, err := p.acquire(ctx, t, minGapFrom(ctx))
	if call != nil && call.rec != nil {
		call.rec.addWait(waited)
	}
	if p.observe != nil {
		e := requestEvent(ctx, EventSlot, req)
		e.Wait, e.Err = waited, err
		p.emit(e)
	}
	if err != nil {
		closeBody(req)
		p.ended(ctx, req, err)
		if since := p.openSince(key); !since.IsZero() && errors.Is(err, context.DeadlineExceeded) {
			return nil, &openBodyError{host: key, since: since, err: err}
		}
		return nil, waitError(key, waitTurn, err)
	}
	if req.URL.Path == "/robots.txt" {
		p.markRobots(key)
	}
	// The layers below report the request's load on the host to its turn
	// through the one mechanism documented on turn: a Client's base transport
	// and hop recorder find it in the Get's call; on its own, the pacer
	// learns it from net/http's trace hooks.
	if call != nil {
		call.turn = t
	} else {
		req = req.WithContext(httptrace.WithClientTrace(ctx, t.trace()))
	}
	grace := p.answerGrace()
	if grace == 0 {
		resp, err := next(nextRT).RoundTrip(req)
		if err != nil {
			t.end(true)
			p.ended(ctx, req, err)
			return nil, err
		}
		rb.rc = resp.Body
		rb.status = resp.StatusCode
		resp.Body = rb
		p.markOpen(t)
		return resp, nil
	}
	resp, err := p.await(nextRT, req, rb, grace)
	if err != nil && rb.state.Load() != abandoned {
		p.ended(ctx, req, err) // an abandoned request's end is the background's to show
	}
	return resp, err
}

// emit shows e to the observer, at the pacer's clock's now.
func (p *pacer) emit(e Event) {
	e.At = clock.Or(p.Clock).Now()
	p.observe(e)
}

// ended shows the observer the end of req, which failed with err below the
// pacer (or in it): a robots.txt fetch's EventRobots, an EventFailed, or
// nothing for a refusal of ours, which the top of the chain shows.
func (p *pacer) ended(ctx context.Context, req *http.Request, err error) {
	if p.observe == nil {
		return
	}
	e := requestEvent(ctx, EventFailed, req)
	if e.Request == KindRobots {
		e.Kind = EventRobots
	} else if _, ours := refusedEvent(e.Request, err); ours {
		return
	}
	e.Err = err
	p.emit(e)
}

// answered shows the observer the end of the answer to t's request:
// status, the body bytes read, and why the body ended early (nil: at its
// end or closed).
func (p *pacer) answered(t *turn, status int, bytes int64, err error) {
	e := requestEvent(t.ctx, EventAnswered, t.req)
	e.Status, e.Bytes, e.Err = status, bytes, err
	switch {
	case e.Request == KindRobots:
		e.Kind = EventRobots
	case status == http.StatusNotModified:
		e.Kind = EventNotModified
		e.Saved = t.savedBytes()
	}
	p.emit(e)
}

type minGapKey struct{}

// withMinGap records a per-request minimum interval (a Crawl-delay) for the
// pacer below; the longest one given wins.
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
