package fetch

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"io"
	"maps"
	mrand "math/rand/v2"
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

// Pacer is the layer that paces requests per host: the start of
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
// ends without anything reaching the host (refused below the Pacer, cancelled
// while queued for a connection) gives its start back.
//
// What the Pacer reads from a request: its URL's host (the key, see
// [hostkey]); a Crawl-delay left in the context by a [RobotsGate] above.
// What it adds, used alone: an [httptrace.ClientTrace] that learns when the
// request dials, is handed a connection and is written (hooks that
// [http.Transport] calls). In a [Client] the base transport reports the same
// moments, more exactly (see turn). It modifies nothing else.
//
// Pacing state of a host is released once the host is idle and its interval has
// passed, so memory follows the hosts in use, not the hosts ever seen.
//
// The zero Pacer paces at DefaultInterval, one in flight per host, over
// [http.DefaultTransport]. Set the fields before the first RoundTrip; a Pacer is
// safe for concurrent use and must not be copied after first use. Pacing holds
// across every goroutine sharing one Pacer.
type Pacer struct {
	Next        http.RoundTripper // nil: http.DefaultTransport
	Interval    time.Duration     // 0: DefaultInterval
	IntervalMax time.Duration     // > Interval: random band [Interval, IntervalMax]
	InFlight    int               // 0: DefaultInFlight
	PerSite     bool              // key by registrable domain instead of host
	Clock       Clock             // nil: real time
	// Schedule, when set, is asked after the local turn: every start and
	// in-flight slot is claimed in it under a lease, so Pacers of several
	// processes sharing it keep the interval and the in-flight limit between
	// them. nil: pacing holds within this Pacer only.
	Schedule Schedule
	// ScheduleTimeout bounds each call to the Schedule. 0:
	// DefaultScheduleTimeout.
	ScheduleTimeout time.Duration
	// AnswerGrace is how long a request already written to its host is
	// still awaited once its caller has given up (its context cancelled,
	// its deadline passed): the caller gets its context's error at once,
	// the answer is read in the background, where the layers below observe
	// it (the ledger records a refusal on its way), and the turn goes back
	// when the answer has come or the grace has run out. A request not yet
	// written is abandoned at once. 0: DefaultAnswerGrace; negative: none
	// (the request ends with its caller).
	AnswerGrace time.Duration

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
	return lo + mrand.N(hi-lo+1)
}

// DefaultAnswerGrace is a Pacer's AnswerGrace when unset.
const DefaultAnswerGrace = 5 * time.Second

func (p *Pacer) answerGrace() time.Duration {
	if p.AnswerGrace == 0 {
		return DefaultAnswerGrace
	}
	return max(p.AnswerGrace, 0)
}

func (p *Pacer) scheduleTimeout() time.Duration {
	if p.ScheduleTimeout > 0 {
		return p.ScheduleTimeout
	}
	return DefaultScheduleTimeout
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
// host (or site) start, on the Pacer's clock: the latest start plus the interval
// drawn after it (or a longer Crawl-delay seen). The zero time means now: nothing
// is known about the host, or its interval has passed. Requests in flight or
// queued for the host go first; NextStart does not count them. It is a query for
// explanations ([Client.Explain]); it reserves nothing.
func (p *Pacer) NextStart(u *url.URL) time.Time {
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
func (p *Pacer) acquire(ctx context.Context, t *turn, minGap time.Duration) (time.Duration, error) {
	waited, err := p.waitLocal(ctx, t, minGap)
	if err != nil || p.Schedule == nil {
		return waited, err
	}
	// The shared schedule: claim this start and a slot among every
	// process's, waiting (holding the local slot) until a claim succeeds.
	clk := clock.Or(p.Clock)
	lo, _, n := p.limits()
	t.owner = rand.Text()
	ttl := DefaultLeaseTTL
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
			t.owner = ""
			p.giveBack(t, false)
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

func (p *Pacer) waitLocal(ctx context.Context, t *turn, min time.Duration) (time.Duration, error) {
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

func (p *Pacer) grantLocked(st *paceState, t *turn, now time.Time, min time.Duration) {
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
func (p *Pacer) markRobots(key string) {
	p.mu.Lock()
	if st := p.hosts[key]; st != nil {
		st.robots = true
	}
	p.mu.Unlock()
}

func (p *Pacer) wakeHeadLocked(st *paceState) {
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
func (p *Pacer) giveBack(t *turn, wire bool) {
	p.mu.Lock()
	if st := p.hosts[t.key]; st != nil {
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
func (p *Pacer) markStart(t *turn) time.Time {
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
func (p *Pacer) sweepLocked(now time.Time) {
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
	rb.turn = turn{p: p, key: key, ctx: ctx}
	t := &rb.turn
	waited, err := p.acquire(ctx, t, minGapFrom(ctx))
	if call != nil && call.rec != nil {
		call.rec.addWait(waited)
	}
	if err != nil {
		closeBody(req)
		return nil, waitError(key, err)
	}
	if req.URL.Path == "/robots.txt" {
		p.markRobots(key)
	}
	// The layers below report the request's load on the host to its turn
	// through the one mechanism documented on turn: a Client's base transport
	// and hop recorder find it in the Get's call; on its own, the Pacer
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
			return nil, err
		}
		rb.rc = resp.Body
		resp.Body = rb
		return resp, nil
	}
	return p.await(nextRT, req, rb, grace)
}

// await sends req with a context of its own, which keeps req's values but
// not its cancellation, from a goroutine of its own, and waits for the
// answer while req's context lives. If that context ends first:
//
//   - a request not yet written is stopped, and ends as it would have;
//   - one written whose answer has not begun is left to finish in the
//     background, for grace at most, holding the turn (see AnswerGrace),
//     and the caller gets its context's error at once;
//   - one whose answer has begun is stopped, and the caller gets what the
//     layers below made of it.
//
// Once the answer has come, the same goroutine ends the request's own
// context when the caller's ends, so that the caller's context still ends
// the body at once, or when the body is done. Nothing else is made per
// request: no timer (the grace's is armed only when a caller gives up on a
// written request), no trace (the turn learns of the answer's first byte
// from the layers below, see turn.answered), no second deadline.
func (p *Pacer) await(nextRT http.RoundTripper, req *http.Request, rb *releaseBody, grace time.Duration) (*http.Response, error) {
	ctx := req.Context()
	t := &rb.turn
	inner, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	rb.caller, rb.inner, rb.stop = ctx, inner, stop
	rb.done = make(chan struct{})
	p.life.wg.Add(1)
	go p.answer(nextRT, req.WithContext(inner), rb)
	select {
	case <-rb.done:
	case <-ctx.Done():
		if t.written() && !t.answering() && p.abandon(rb, grace) {
			return nil, ctx.Err()
		}
		stop(ctx.Err())
		<-rb.done
	case <-p.life.closing:
		stop(errClosed)
		<-rb.done
	}
	if rb.err != nil {
		stop(nil)
		t.end(true)
		if ctx.Err() != nil && (errors.Is(rb.err, context.Canceled) || errors.Is(rb.err, ctx.Err())) {
			return nil, ctx.Err() // stopped for the caller: the caller's reason
		}
		return nil, rb.err
	}
	resp := rb.resp
	rb.resp = nil
	rb.rc = resp.Body
	resp.Body = rb
	return resp, nil
}

// Where an awaited request stands (releaseBody.state).
const (
	awaiting  int32 = iota // the caller waits for the answer
	answered               // the answer (or the failure) was handed to the caller
	abandoned              // the caller gave up on the written request: the grace holds it
)

// errClosed ends the requests of a Client being closed.
var errClosed = errors.New("fetch: the client was closed")

// errGraceOver ends a written request whose answer did not come within the grace.
var errGraceOver = errors.New("fetch: no answer within the answer grace")

// abandon hands rb's written request over to the background, for grace at
// most, if its answer has not been handed to the caller meanwhile (then it
// reports false, and the caller takes the answer as usual).
func (p *Pacer) abandon(rb *releaseBody, grace time.Duration) bool {
	p.life.mu.Lock()
	defer p.life.mu.Unlock()
	if p.life.closed || !rb.state.CompareAndSwap(awaiting, abandoned) {
		return false
	}
	rb.grace = time.AfterFunc(grace, func() { rb.stop(errGraceOver) })
	if p.life.held == nil {
		p.life.held = make(map[*releaseBody]struct{})
	}
	p.life.held[rb] = struct{}{}
	return true
}

// answer runs on await's goroutine: it sends req below and hands the answer
// to the caller, then ends the request's own context when the caller's
// context ends, the Client closes, or the body is done (which stops it).
// An answer the caller gave up on is closed, once the layers below have
// observed it, and the turn goes back.
func (p *Pacer) answer(nextRT http.RoundTripper, req *http.Request, rb *releaseBody) {
	defer p.life.wg.Done()
	resp, err := next(nextRT).RoundTrip(req)
	rb.resp, rb.err = resp, err
	if rb.state.CompareAndSwap(awaiting, answered) {
		close(rb.done)
		if err != nil {
			return
		}
		select {
		case <-rb.caller.Done():
			rb.stop(rb.caller.Err())
		case <-rb.inner.Done():
		case <-p.life.closing:
			rb.stop(errClosed)
		}
		return
	}
	// Abandoned: the grace's timer is set (see abandon).
	p.life.mu.Lock()
	delete(p.life.held, rb)
	p.life.mu.Unlock()
	rb.grace.Stop()
	if err == nil {
		resp.Body.Close() // the layers below have observed the answer
	}
	rb.stop(nil)
	rb.turn.end(true)
}

// lifecycle is what a Pacer keeps of the goroutines it starts, so that a
// Client's Close ends and awaits them.
type lifecycle struct {
	closing chan struct{} // closed by close; nil (never closed) for a Pacer alone
	wg      sync.WaitGroup
	mu      sync.Mutex
	closed  bool
	held    map[*releaseBody]struct{} // requests abandoned to their grace
}

// closeWait bounds how long close awaits the Pacer's goroutines once it has
// ended their requests.
const closeWait = 5 * time.Second

// close ends every request the Pacer awaits (the answers in their grace, the
// bodies still open) and waits, closeWait at most, for their goroutines to
// return. It reports whether they all did.
func (p *Pacer) close() bool {
	p.life.mu.Lock()
	if p.life.closed {
		p.life.mu.Unlock()
		return true
	}
	p.life.closed = true
	if p.life.closing != nil {
		close(p.life.closing)
	}
	for rb := range p.life.held {
		rb.stop(errClosed)
	}
	p.life.mu.Unlock()
	done := make(chan struct{})
	go func() { p.life.wg.Wait(); close(done) }()
	timer := time.NewTimer(closeWait)
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	}
}

// turn is one request's turn at its host, granted by a Pacer, and the one
// mechanism by which the layers below the Pacer tell it what the request did
// to the host:
//
//   - dialBegun and dialEnded bracket a connection dialled on the request's
//     behalf (the TCP connect and the TLS handshake): each is a start, and
//     the turn is not given back while a dial it began is in progress, even
//     if the request has ended;
//   - gotConn says a connection was handed to the request (from then on,
//     something may reach the host);
//   - wrote says the request's bytes were written: a start; beginWrite and
//     endWrite bracket that write where the connection is ours, and the
//     start is recorded, once the bytes are in the kernel, before the turn
//     can be given back (the answer, and the end of the request, may come
//     before the writer returns from the kernel: the next turn would then
//     count from the grant, earlier than the bytes).
//
// The Client's base transport calls dialBegun and dialEnded (it owns the
// dialer) and beginWrite and endWrite (around the connection's first Write
// of the request); its hop recorder calls gotConn (net/http's GotConn hook),
// and wrote only for a connection not ours. A Pacer used alone gets them from net/http's trace
// hooks (ConnectStart and ConnectDone, TLSHandshakeStart and
// TLSHandshakeDone, GotConn, and WroteRequest, which comes just before the
// transport flushes the request).
// The methods are safe to call from any goroutine, at any time, even after
// the request has ended.
//
// A turn is one request on the wire, once. When a reused connection fails
// after the request was written to it (a reset, or the server closing it
// before any answer), net/http sends an idempotent request again at once on
// a new connection: a second request to the host within its interval. So
// the base transport asks the turn first (hasSent, maySendOn): a dial, or a
// write on another connection, for a turn whose request already went out is
// refused with ErrNotResent, and the request fails with it; a connection
// whose dial ends after its turn's request went out on another one is
// closed unused. A Pacer used alone learns of a resend only as it happens,
// from net/http's hooks, and counts it as one more start.
type turn struct {
	p       *Pacer
	key     string
	ctx     context.Context // the request's: its values bound the Schedule calls
	prev    time.Time       // the latest start before this turn's grant
	seq     uint64          // paceState.seq at the grant
	owner   string          // the Schedule lease's owner; "" without one
	ttl     time.Duration
	renewAt time.Time // when the lease is past half its life

	mu      sync.Mutex
	dials   int         // dials in progress on this turn's behalf
	writes  int         // writes of its request in progress (base transport only)
	wire    bool        // something may have reached the host
	over    bool        // the request has ended
	back    bool        // the slot has been given back
	sent    *tracedConn // the connection the request's bytes went out on (base transport only)
	heard   bool        // net/http's trace said the request was written (a Pacer alone)
	wroteAt time.Time   // when the request's bytes were written (base transport only)
	firstAt time.Time   // when the answer's first byte came
}

// answered says the answer's first byte has come: the base transport's
// connection reports it at its first read after the request's write, and,
// for a Pacer alone, net/http's GotFirstResponseByte through the turn's
// own trace.
func (t *turn) answered() {
	now := clock.Or(t.p.Clock).Now()
	t.mu.Lock()
	if t.firstAt.IsZero() {
		t.firstAt = now
	}
	t.mu.Unlock()
}

// answering reports whether the answer's first byte has come.
func (t *turn) answering() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.firstAt.IsZero()
}

// times returns when the request was written on a connection of the base
// transport and when its answer's first byte came (zero: not known).
func (t *turn) times() (wrote, first time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wroteAt, t.firstAt
}

// hasSent reports whether the turn's request went out on a connection.
func (t *turn) hasSent() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent != nil
}

// written reports whether the turn's request has been written, as the base
// transport or net/http's trace reports it.
func (t *turn) written() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent != nil || t.heard
}

// maySendOn reports whether the turn's request may be written on c: it has
// not gone out yet, or went out on c (a request is written in several parts).
func (t *turn) maySendOn(c *tracedConn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent == nil || t.sent == c
}

// errTurnOver refuses a write for a request that has ended (net/http may
// still be about to write a request its caller gave up on): nothing of it
// goes out once its turn is over.
var errTurnOver = errors.New("fetch: request ended before it was written")

// beginWrite is called before the turn's request is written on c (the base
// transport's connection). It refuses a resend on another connection and a
// write for a request that is over; otherwise the turn is held until
// endWrite, so that the write's start is recorded before the slot can go
// back: the answer, and the end of the request, may come before the writer
// returns from the kernel.
func (t *turn) beginWrite(c *tracedConn) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.sent != nil && t.sent != c:
		return ErrNotResent
	case t.over:
		return errTurnOver
	}
	t.writes++
	t.wire = true
	return nil
}

// endWrite records the write begun with beginWrite: sent says bytes went out
// on c. The write is a start, recorded now, once the bytes are in the kernel;
// then the turn is released if its request has ended meanwhile.
func (t *turn) endWrite(c *tracedConn, sent bool) {
	now := t.p.markStart(t)
	t.mu.Lock()
	if sent && t.sent == nil {
		t.sent = c
		t.wroteAt = now
	}
	t.writes--
	t.unlockGiveBackIfOver()
}

// unlockGiveBackIfOver gives the turn back when its request is over and no
// dial or write of it is under way. It is called with t.mu held, and
// unlocks it.
func (t *turn) unlockGiveBackIfOver() {
	give := t.over && t.dials == 0 && t.writes == 0 && !t.back
	if give {
		t.back = true
	}
	t.mu.Unlock()
	if give {
		t.p.giveBack(t, true)
	}
}

func (t *turn) dialBegun() {
	t.mu.Lock()
	t.dials++
	t.wire = true
	t.mu.Unlock()
	t.p.markStart(t)
}

func (t *turn) dialEnded() {
	t.p.markStart(t)
	t.mu.Lock()
	t.dials--
	t.unlockGiveBackIfOver()
}

func (t *turn) gotConn() {
	t.mu.Lock()
	t.wire = true
	t.mu.Unlock()
}

func (t *turn) wrote() {
	t.mu.Lock()
	t.wire, t.heard = true, true
	t.mu.Unlock()
	t.p.markStart(t)
}

// end says the request is over: its body is done, or it failed. A failure
// after something reached the host (abandoned) counts as one more start, now:
// net/http has closed the connection by the time its RoundTrip fails, so
// nothing of the request leaves after this. The slot goes back now, or when
// the last dial the turn began is done.
func (t *turn) end(abandoned bool) {
	t.mu.Lock()
	if t.over {
		t.mu.Unlock()
		return
	}
	t.over = true
	wire := t.wire
	give := t.dials == 0 && t.writes == 0 && !t.back
	if give {
		t.back = true
	}
	t.mu.Unlock()
	if abandoned && wire {
		t.p.markStart(t)
	}
	if give {
		t.p.giveBack(t, wire)
	}
}

// renew extends the Schedule lease once it is past half its life, while the
// body is read.
func (t *turn) renew() {
	if t.owner == "" {
		return
	}
	now := clock.Or(t.p.Clock).Now()
	if now.Before(t.renewAt) {
		return
	}
	t.renewAt = now.Add(t.ttl / 2)
	ctx, cancel := t.scheduleCtx()
	// A lost lease (expired) leaves the local slot, which still holds; the
	// next claim elsewhere may start early by the rest of this body.
	_ = t.p.Schedule.Renew(ctx, t.key, t.owner, now, t.ttl)
	cancel()
}

// scheduleCtx bounds a Schedule call that must happen whatever became of the
// request: its values, not its cancellation, and ScheduleTimeout.
func (t *turn) scheduleCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(t.ctx), t.p.scheduleTimeout())
}

// trace returns the hooks by which net/http tells a Pacer used alone what the
// request did (see turn). A dial holds the turn during its TCP connect and
// during its TLS handshake, each bracketed by its own pair of hooks, so that a
// dialer reporting only one of them (a DialTLSContext of one's own reports no
// handshake) never leaves the turn held; between the two, for the
// microseconds net/http takes to begin the handshake, the turn of a request
// that has already ended may be given back, and the handshake's start then
// still moves the host's latest start.
func (t *turn) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		ConnectStart:         func(string, string) { t.dialBegun() },
		ConnectDone:          func(string, string, error) { t.dialEnded() },
		TLSHandshakeStart:    func() { t.dialBegun() },
		TLSHandshakeDone:     func(tls.ConnectionState, error) { t.dialEnded() },
		GotConn:              func(httptrace.GotConnInfo) { t.gotConn() },
		WroteRequest:         func(httptrace.WroteRequestInfo) { t.wrote() },
		GotFirstResponseByte: t.answered,
	}
}

// turnFrom returns the turn of the request whose context is ctx, or nil.
func turnFrom(ctx context.Context) *turn {
	if c := callFrom(ctx); c != nil {
		return c.turn
	}
	return nil
}

// releaseBody ends its turn at EOF, at the first read error, or at Close,
// whichever comes first. It also holds what await shares with its
// goroutine (one allocation for all of it).
type releaseBody struct {
	rc   io.ReadCloser
	turn turn
	// Set by await: the caller's context, the request's own context and its
	// cancel; the answer, handed over by closing done; where the request
	// stands (awaiting, answered, abandoned) and the grace's timer.
	caller context.Context
	inner  context.Context
	stop   context.CancelCauseFunc
	done   chan struct{}
	resp   *http.Response
	err    error
	state  atomic.Int32
	grace  *time.Timer
}

func (b *releaseBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		if b.caller != nil && b.caller.Err() != nil && errors.Is(err, context.Canceled) {
			err = b.caller.Err() // the caller's reason, not the link's
		}
		b.turn.end(false)
	} else {
		b.turn.renew()
	}
	return n, err
}

// Close gives the turn back, and ends the request's own context (after the
// last read: what reads the body may still be decoding what it has).
func (b *releaseBody) Close() error {
	err := b.rc.Close()
	b.turn.end(false)
	if b.stop != nil {
		b.stop(nil)
	}
	return err
}

type minGapKey struct{}

// withMinGap records a per-request minimum interval (a Crawl-delay) for the
// Pacer below; the longest one given wins.
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
