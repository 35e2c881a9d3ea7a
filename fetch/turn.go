package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
)

// turn is one request's turn at its host, granted by a pacer, and the one
// mechanism by which the layers below the pacer tell it what the request did
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
// and wrote only for a connection not ours. A pacer used alone gets them from net/http's trace
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
// closed unused. A pacer used alone learns of a resend only as it happens,
// from net/http's hooks, and counts it as one more start.
type turn struct {
	p   *pacer
	key string
	// Under p.mu: the turn's place in its host's list of open bodies.
	opened             bool
	openAt             time.Time
	openPrev, openNext *turn
	ctx                context.Context // the request's: its values bound the Schedule calls
	req                *http.Request   // the request, as the pacer was given it (for the observer)
	prev               time.Time       // the latest start before this turn's grant
	seq                uint64          // paceState.seq at the grant
	owner              string          // the Schedule lease's owner; "" without one
	ttl                time.Duration
	renewAt            time.Time // when the lease is past half its life

	mu      sync.Mutex
	dials   int         // dials in progress on this turn's behalf
	writes  int         // writes of its request in progress (base transport only)
	wire    bool        // something may have reached the host
	over    bool        // the request has ended
	back    bool        // the slot has been given back
	sent    *tracedConn // the connection the request's bytes went out on (base transport only)
	heard   bool        // net/http's trace said the request was written (a pacer alone)
	wroteAt time.Time   // when the write of the request's bytes began (base transport only)
	firstAt time.Time   // when the answer's first byte came
	headed  bool        // the ledger gate below has the answer's status (see headersIn)
	refusal error       // why the base transport refused the answer, if it did
	saved   int64       // the body length the validators sent were kept from (see setSaved)
}

// setSaved says the validators layer sent validators kept from a body of n
// wire bytes, which a 304 saves reading again.
func (t *turn) setSaved(n int64) {
	t.mu.Lock()
	t.saved = n
	t.mu.Unlock()
}

func (t *turn) savedBytes() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.saved
}

// headersIn says the ledger gate below the pacer has the answer's status and
// headers, and will show them to its ledger whatever becomes of the body.
func (t *turn) headersIn() {
	t.mu.Lock()
	t.headed = true
	t.mu.Unlock()
}

// observed reports whether headersIn was said.
func (t *turn) observed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.headed
}

// answered says the answer's first byte has come: the base transport's
// connection reports it at its first read after the request's write, and,
// for a pacer alone, net/http's GotFirstResponseByte through the turn's
// own trace.
func (t *turn) answered() {
	now := clock.Or(t.p.Clock).Now()
	t.mu.Lock()
	if t.firstAt.IsZero() {
		t.firstAt = now
	}
	t.mu.Unlock()
}

// refuse records that the base transport refused the turn's answer for err
// (see tracedConn.Read).
func (t *turn) refuse(err error) {
	t.mu.Lock()
	if t.refusal == nil {
		t.refusal = err
	}
	t.mu.Unlock()
}

// refused returns the error the turn's answer was refused for, or nil.
func (t *turn) refused() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refusal
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

// written reports whether the turn's request may be on the wire, as the base
// transport or net/http's trace reports it: written, or a write of it under
// way (its bytes may be out, and answered, before the write returns and its
// start has been reported to the Schedule, which on a loaded shared store
// takes a while).
func (t *turn) written() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent != nil || t.heard || t.writes > 0
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
	now := clock.Or(t.p.Clock).Now() // the write's start: before the answer, whose first byte may be read before the write returns
	t.mu.Lock()
	switch {
	case t.sent != nil && t.sent != c:
		t.mu.Unlock()
		return ErrNotResent
	case t.over:
		t.mu.Unlock()
		return errTurnOver
	}
	t.writes++
	t.wire = true
	first := t.wroteAt.IsZero()
	if first {
		t.wroteAt = now
	}
	t.mu.Unlock()
	if first && t.p.observe != nil && t.req != nil {
		// Before the bytes go, so before any event of the answer.
		e := requestEvent(t.ctx, EventSent, t.req)
		e.At = now
		t.p.observe(e)
	}
	return nil
}

// endWrite records the write begun with beginWrite: sent says bytes went out
// on c. The write is a start, recorded now, once the bytes are in the kernel;
// then the turn is released if its request has ended meanwhile.
func (t *turn) endWrite(c *tracedConn, sent bool) {
	t.p.markStart(t)
	t.mu.Lock()
	if sent && t.sent == nil {
		t.sent = c
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
// nothing of the request leaves after this. So does the end of a request
// that got a connection and whose write was not reported. The slot goes back now, or when
// the last dial the turn began is done.
func (t *turn) end(abandoned bool) {
	t.mu.Lock()
	if t.over {
		t.mu.Unlock()
		return
	}
	t.over = true
	wire := t.wire
	// A request that got a connection and ends with its write unreported
	// has its bytes out by now: now is its start, lest the next turn count
	// from the grant, earlier than the bytes. (net/http calls WroteRequest
	// after its flush, from its writer goroutine, and the answer may be
	// read, and the request end, first; a connection not ours reports no
	// write at all.)
	unheard := !t.heard && t.wroteAt.IsZero()
	give := t.dials == 0 && t.writes == 0 && !t.back
	if give {
		t.back = true
	}
	t.mu.Unlock()
	if wire && (abandoned || unheard) {
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

// trace returns the hooks by which net/http tells a pacer used alone what the
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
