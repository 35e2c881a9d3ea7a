package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/robots"
)

// robotsChecker is what robotsGate consults; *robots.Cache satisfies it.
type robotsChecker interface {
	// Allow returns nil when u may be fetched, else an error matching
	// robots.ErrDisallowed, or the context's error, or one matching
	// robots.ErrNotSent when robots.txt could not be asked for.
	Allow(ctx context.Context, u *url.URL) error
	// CrawlDelay returns the Crawl-delay for us of u's site (its scheme, host
	// and port), if its robots.txt sets one.
	CrawlDelay(ctx context.Context, u *url.URL) (time.Duration, bool)
}

// robotsGate is the layer that asks robots.txt before every request:
// a refused URL gets a *[RefusedError] with Reason Robots and nothing is sent; an
// allowed one goes on with the host's Crawl-delay handed to the pacer below,
// which lengthens the interval. The robots.txt fetch itself goes through the
// chain the robotsChecker was given, never through this gate. When that fetch
// was not sent (robots.ErrNotSent), the request fails with that error and is
// not sent either: the *RefusedError of the layer that refused robots.txt (a
// cool-down, say), else the failure itself (the shared Schedule's error, a
// deadline met waiting for the host's turn), never a robots refusal, since
// robots.txt said nothing.
//
// What it reads from a request: its URL. What it adds: the host's Crawl-delay,
// as a value in the request's context that only a pacer below reads; the
// request is otherwise passed on as it came.
//
// Robots is required: a robotsGate without one refuses every request. Set the
// fields before the first RoundTrip; a robotsGate is safe for concurrent use.
type robotsGate struct {
	Next   http.RoundTripper // nil: http.DefaultTransport
	Robots robotsChecker     // required
}

// errNoRobots is returned by a robotsGate without Robots.
var errNoRobots = errors.New("fetch: robotsGate has no robotsChecker")

// RoundTrip checks req.URL against robots.txt, then passes req on.
func (g *robotsGate) RoundTrip(req *http.Request) (*http.Response, error) {
	if g.Robots == nil {
		closeBody(req)
		return nil, errNoRobots
	}
	ctx := req.Context()
	host, herr := hostKey(ctx, req.URL)
	if herr != nil {
		closeBody(req)
		return nil, herr
	}
	if err := g.Robots.Allow(ctx, req.URL); err != nil {
		closeBody(req)
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, waitError(host, waitRobots, err)
		}
		return nil, robotsFailure(host, req.URL, err)
	}
	if d, ok := g.Robots.CrawlDelay(ctx, req.URL); ok && d > 0 {
		req = req.WithContext(withMinGap(ctx, d))
	}
	return next(g.Next).RoundTrip(req)
}

// robotsFailure is the error of a request to u, on host, that a
// robotsChecker's Allow did not let through with err: a refusal, or the
// failure of a robots.txt request that was never sent (see robotsGate).
func robotsFailure(host string, u *url.URL, err error) error {
	var ours *RefusedError
	if errors.Is(err, robots.ErrNotSent) && !errors.As(err, &ours) {
		return &robotsNotSentError{host: host, err: err}
	}
	return robotsRefusal(host, u, err)
}

// robotsNotSentError is the failure of a request whose robots.txt request
// was not sent for a reason of ours other than a refusal. It matches
// robots.ErrNotSent and the cause.
type robotsNotSentError struct {
	host string
	err  error // the robots cache's, wrapping the chain's notSentError
}

func (e *robotsNotSentError) Error() string {
	cause := causeText(e.err)
	var ns *notSentError
	if errors.As(e.err, &ns) {
		cause = causeText(ns.err)
		if errors.Is(ns.err, context.Canceled) {
			// The robots.txt fetch runs on a context of its own, which
			// only its time-out cancels.
			cause = "the robots.txt time-out ran out while it waited for the host's turn"
		}
	}
	return "fetch: robots.txt of " + e.host + " not requested, so nothing was sent: " + cause
}

func (e *robotsNotSentError) Unwrap() error { return e.err }

// robotsRefusal is the refusal of u, on host, for err, the refusal of a
// robotsChecker's Allow.
func robotsRefusal(host string, u *url.URL, err error) *RefusedError {
	var ours *RefusedError
	if errors.As(err, &ours) && ours.Reason != Robots {
		// robots.txt could not be fetched because we refused to ask for it
		// (the host cools down, its address is not public): that is the
		// refusal to report, of the URL asked for.
		r := *ours
		r.URL = u.Redacted()
		return &r
	}
	re := &RefusedError{Host: host, URL: u.Redacted(), Reason: Robots, Err: err}
	switch {
	case errors.Is(err, robots.ErrNotHTTPS):
		re.Reason = NotHTTPS
	default:
		var rr *robots.DisallowedError
		if errors.As(err, &rr) {
			re.Until = rr.RetryAt // the answer stands until robots.txt is read again
		}
	}
	return re
}

// refusalLedger is what ledgerGate consults and teaches; *backoff.Ledger satisfies it.
type refusalLedger interface {
	Check(ctx context.Context, host string, kind backoff.Kind, now time.Time) backoff.Decision
	// Observe must record a refusal even when ctx is cancelled meanwhile,
	// as *backoff.Ledger does: the caller may give up as the refusal
	// arrives, and the host must still get its cool-down.
	Observe(ctx context.Context, host string, o backoff.Outcome, now time.Time) (backoff.Event, error)
}

// ledgerGate is the layer that keeps a host's refusals: a request to
// a host that is cooling down, or suspended for this kind, gets a *[RefusedError]
// (Reason Cooldown or Suspended, with Until) and nothing is sent; every response is
// shown to the ledger — status, Retry-After and, for a denial status or a page
// (HTML, text, no media type), the first backoff.ChallengePeek bytes of the body,
// which the caller still reads in full — before it is returned.
// A response is never turned into an error: a 429 comes back as a 429.
//
// What it reads from a request: its URL's host (the ledger's key) and path
// ("/robots.txt" is of KindRobots), and the kind a [Client]'s Get was given
// (alone, every other request is of KindArticle). What it adds: nothing to the
// request; the response's body is the same bytes, read through a peek buffer.
//
// A Client puts it below its pacer: the check then comes at the request's
// turn, after any refusal that arrived while it waited, and the next request
// to the host is not granted before the ledger has seen this one's answer (the
// pacer's slot is held until the body is done, which is after the peek).
//
// Ledger is required: a ledgerGate without one refuses every request. Set the
// fields before the first RoundTrip; a ledgerGate is safe for concurrent use.
type ledgerGate struct {
	Next   http.RoundTripper // nil: http.DefaultTransport
	Ledger refusalLedger     // required
	Clock  clock.Clock       // nil: real time

	pool sync.Pool // peek buffers
}

var errNoLedger = errors.New("fetch: ledgerGate has no Ledger")

// kindOf returns the kind of req: robots for "/robots.txt", else the Get's kind.
func kindOf(req *http.Request) Kind {
	if req.URL.Path == "/robots.txt" {
		return KindRobots
	}
	if c := callFrom(req.Context()); c != nil {
		return c.kind
	}
	return KindArticle
}

// RoundTrip checks the ledger, passes req on, and lets the ledger observe the
// response.
func (g *ledgerGate) RoundTrip(req *http.Request) (*http.Response, error) {
	if g.Ledger == nil {
		closeBody(req)
		return nil, errNoLedger
	}
	ctx := req.Context()
	clk := clock.Or(g.Clock)
	host, err := hostKey(ctx, req.URL)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	kind := kindOf(req)
	d := g.Ledger.Check(ctx, host, kind, clk.Now())
	if !d.Allowed {
		closeBody(req)
		re := &RefusedError{Host: host, URL: req.URL.Redacted(), Reason: Cooldown, Until: d.Until, Err: d.Err()}
		if d.Reason == backoff.Suspended {
			re.Reason = Suspended
		}
		return nil, re
	}
	resp, err := next(g.Next).RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if t := turnFrom(ctx); t != nil {
		t.headersIn() // the pacer above may stop the request now: the status is seen
	}
	var prefix []byte
	if mayBeChallenge(resp) && req.Method != http.MethodHead {
		var pb *peekedBody
		if c := callFrom(ctx); c != nil {
			pb = c.firstPeek()
		}
		prefix, resp.Body = peek(&g.pool, resp.Body, backoff.ChallengePeek, pb)
	}
	o := backoff.NewOutcome(kind, resp.StatusCode, resp.Header, prefix)
	o.NoRecord = !d.Recorded // a success at a host with no record: nothing to read back
	// The Ledger records a refusal even if the caller gives up at this very
	// moment (see the Ledger interface).
	_, _ = g.Ledger.Observe(ctx, host, o, clk.Now())
	return resp, nil
}

// mayBeChallenge reports whether a response's body is worth showing to the
// challenge detector: a denial status, or a page (HTML, text, or no media type at
// all). Feeds, JSON, images and 304s are never challenge interstitials, whose
// header markers the ledger still sees.
func mayBeChallenge(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusNotModified:
		return false
	case http.StatusForbidden, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	}
	ct := strings.TrimSpace(resp.Header.Get("Content-Type"))
	return ct == "" || hasPrefixFold(ct, "text/") || hasPrefixFold(ct, "application/xhtml+xml") ||
		!strings.Contains(ct, "/") // no usable media type
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// peek reads up to n bytes of body and returns them with a body that still yields
// every byte, pb if it is not nil. A read error is kept for the caller to meet
// after the prefix.
func peek(pool *sync.Pool, body io.ReadCloser, n int, pb *peekedBody) ([]byte, io.ReadCloser) {
	bp, _ := pool.Get().(*[]byte)
	if bp == nil || cap(*bp) < n {
		b := make([]byte, n)
		bp = &b
	}
	buf := (*bp)[:n]
	got := 0
	var err error
	for got < n && err == nil {
		var k int
		k, err = body.Read(buf[got:])
		got += k
	}
	if pb == nil {
		pb = new(peekedBody)
	}
	*pb = peekedBody{buf: buf[:got], rc: body, pool: pool, bp: bp}
	switch {
	case err == io.EOF:
		pb.eof = true
	case err != nil:
		pb.err = err
	}
	return buf[:got], pb
}

// peekedBody yields the peeked prefix, then the rest of the body. The prefix's
// buffer goes back to the pool once it has been read out, or at Close.
type peekedBody struct {
	buf  []byte
	off  int
	rc   io.ReadCloser
	err  error
	eof  bool
	pool *sync.Pool
	bp   *[]byte
}

func (b *peekedBody) Read(p []byte) (int, error) {
	if b.off < len(b.buf) {
		n := copy(p, b.buf[b.off:])
		b.off += n
		if b.off == len(b.buf) {
			b.recycle()
		}
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	if b.eof {
		return 0, io.EOF
	}
	return b.rc.Read(p)
}

func (b *peekedBody) recycle() {
	if b.bp != nil {
		b.buf, b.off = nil, 0
		b.pool.Put(b.bp)
		b.bp = nil
	}
}

func (b *peekedBody) Close() error {
	b.recycle()
	return b.rc.Close()
}
