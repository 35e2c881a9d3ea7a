package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/clock"
	iclock "github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/internal/decode"
	"github.com/politefetch/politefetch/internal/redirect"
	"github.com/politefetch/politefetch/internal/tracking"
	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/robots"
)

// Client is the politeness chain assembled from a [Policy]: URL policy, redirect
// policy, then for every hop the layers (in the order the package doc states)
// over an SSRF-checking base transport, and a bounded, decoded body with its
// proof of fetch.
//
// Build one with [New]. A Client is safe for concurrent use by any number of
// goroutines, and politeness holds across all of them. Its goroutines are the
// waits of requests in flight (and of requests given up after they were
// written, for their answer grace); Close ends them and its idle connections.
type Client struct {
	policy      Policy
	clock       clock.Clock
	clockOpt    clock.Clock // the clock given to New, nil for real time
	logger      *slog.Logger
	base        *http.Transport
	pacer       *pacer
	ledger      *backoff.Ledger
	ledgerStore backoff.Store // the ledger's, read by Explain
	robots      *robots.Cache
	validators  *conditional
	chain       http.RoundTripper // for Get and the Doers: with validators
	plain       http.RoundTripper // for Transport and HTTPClient: no validators of the chain's own
	plainHC     *http.Client      // over plain
	src         *Source           // the policy's source, shared read-only by every Get without its own
	observe     func(Event)       // WithObserver's; nil: none
}

// Option sets one of the Client's collaborators at [New].
type Option func(*options)

type options struct {
	clock       clock.Clock
	network     Network
	logger      *slog.Logger
	store       ValidatorStore
	robotsStore robots.Store
	ledgerStore backoff.Store
	onEvent     func(backoff.Event)
	schedule    Schedule
	observe     func(Event)
	maxIdle     int // tests: the base transport's MaxIdleConns (0: its default)
}

// WithClock sets the one clock of the chain: the pacer's, the ledger's, the
// robots cache's, and every instant a proof records. Any [clock.Clock] will
// do (tests use a [clock.Manual]). Default: real time.
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// WithLogger sets the logger for requests, refusals and ledger events; the
// credential never appears in it. Default: silent.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithLedgerEvents sets a callback for every ledger event (metrics).
func WithLedgerEvents(f func(backoff.Event)) Option { return func(o *options) { o.onEvent = f } }

// New builds a Client from p (copied) and opts. It fails only for a policy that
// does not name its crawler (an *[IdentityError], matching ErrNoIdentity: a
// preset has no identity until you give it one) or with an invalid credential
// header (ErrInvalidCredential).
func New(p Policy, opts ...Option) (*Client, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	p = p.withDefaults()
	var o options
	for _, f := range opts {
		f(&o)
	}
	logger := o.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{policy: p, clock: iclock.Or(o.clock), clockOpt: o.clock, logger: logger}
	c.src = &Source{Admitted: p.Admitted, Params: p.Params, Credential: p.Credential}
	c.base = newBase(baseConfig{
		resolver: o.network.Resolver, dial: o.network.Dial, roots: o.network.RootCAs, allow: o.network.Allow, dnsTTL: o.network.DNSTTL,
		inFlight: p.InFlight, firstByte: p.FirstByte, allowHTTP: p.AllowHTTP, clock: o.clock,
		idle: idleConnTimeout(p), maxIdle: o.maxIdle,
	})
	bottom := &hopRecorder{next: c.base, clock: o.clock}
	c.ledgerStore = o.ledgerStore
	if c.ledgerStore == nil {
		c.ledgerStore = &backoff.MemoryStore{}
	}
	c.ledger = &backoff.Ledger{Policy: p.Backoff, Store: c.ledgerStore, PerSite: p.PerSite, Logger: o.logger, OnEvent: o.onEvent}
	c.pacer = &pacer{Interval: p.Interval, IntervalMax: p.IntervalMax, InFlight: p.InFlight, PerSite: p.PerSite, Clock: o.clock, Schedule: o.schedule, observe: o.observe}
	c.observe = o.observe
	c.pacer.life.closing = make(chan struct{})
	ua := p.UserAgent()

	// robots.txt requests: pacer, ledger gate, identity, base — never validators,
	// never the robots gate.
	robotsRT := &robotsCall{next: c.pacerOver(&ledgerGate{Ledger: c.ledger, Clock: o.clock,
		Next: &identityLayer{UserAgent: ua, Accept: "text/plain, */*;q=0.5", Next: bottom}})}
	c.robots = &robots.Cache{
		Transport: robotsRT,
		UserAgent: ua,
		AllowHTTP: p.AllowHTTP,
		Policy:    p.Robots,
		Store:     o.robotsStore,
		Clock:     o.clock,
		Logger:    o.logger,
	}

	var below http.RoundTripper = bottom
	if !p.NoConditional {
		c.validators = &conditional{Store: o.store, Next: bottom}
		below = c.validators
	}
	c.chain = c.stack(ua, below)
	c.plain = c.stack(ua, bottom)
	// Get and the Doers follow redirects themselves (follow) and bound each
	// call with its own context deadline; the client HTTPClient hands out
	// carries the same bound as http.Client.Timeout.
	c.plainHC = &http.Client{Transport: c.plain, CheckRedirect: c.checkRedirect}
	return c, nil
}

// stack returns the layers of a request over below: admission, robots gate,
// pacer, ledger gate and identity.
func (c *Client) stack(ua string, below http.RoundTripper) http.RoundTripper {
	core := c.pacerOver(&ledgerGate{Ledger: c.ledger, Clock: c.clockOpt,
		Next: &identityLayer{UserAgent: ua, Accept: c.policy.Accept, Credential: c.policy.Credential, noCred: c.policy.NoCredential, Next: below}})
	return &admission{c: c, next: &robotsGate{Robots: c.robots, Next: core}}
}

// pacerOver returns a pacer layer sharing the Client's pacing state over next.
func (c *Client) pacerOver(next http.RoundTripper) http.RoundTripper {
	return &sharedPacer{p: c.pacer, next: next}
}

// sharedPacer runs one pacer's pacing over another next layer, so the robots.txt
// path and the main path share one budget per host.
type sharedPacer struct {
	p    *pacer
	next http.RoundTripper
}

func (s *sharedPacer) RoundTrip(req *http.Request) (*http.Response, error) {
	return s.p.roundTrip(s.next, req)
}

// robotsCall marks a request as a robots.txt fetch of its own, so the layers
// below neither take the Get's kind, Accept or Referer nor record its hops.
// It tells the robots cache which failures are ours: a request that never
// left the process fails with an error matching robots.ErrNotSent, which the
// cache does not record as the host's robots.txt outcome (see notSent).
type robotsCall struct{ next http.RoundTripper }

func (r *robotsCall) RoundTrip(req *http.Request) (*http.Response, error) {
	call := &callInfo{kind: KindRobots}
	resp, err := r.next.RoundTrip(req.WithContext(withCall(req.Context(), call)))
	if err != nil && notSent(call, err) {
		return nil, &notSentError{err: err}
	}
	return resp, err
}

// notSent reports whether a request that failed with err never left the
// process: a layer of ours refused it (a *RefusedError: cool-down,
// suspension, blocked address; nothing was sent), or the pacer granted it no
// turn (its wait ended, the Schedule failed), or its turn saw nothing reach
// the host (no dial begun, no connection handed over, nothing written). A
// failure after any of those is the network's or the server's.
func notSent(call *callInfo, err error) bool {
	var re *RefusedError
	if errors.As(err, &re) {
		return true
	}
	t := call.turn // set by the pacer on this goroutine, before RoundTrip returned
	if t == nil {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.wire
}

// notSentError is a robots.txt request's failure that is ours: its text is
// the failure's, and it matches robots.ErrNotSent as well.
type notSentError struct{ err error }

func (e *notSentError) Error() string   { return e.err.Error() }
func (e *notSentError) Unwrap() []error { return []error{robots.ErrNotSent, e.err} }

// admission is the top of both chains: https only (or http where the policy
// allows it) and admitted hosts. A request a caller built (one without a
// Get's or a Doer's call) is checked first against the rules documented on
// HTTPClient.
type admission struct {
	c    *Client
	next http.RoundTripper
}

func (a *admission) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	call := callFrom(ctx)
	if call == nil {
		accept, err := checkCallerRequest(req)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		call = &callInfo{accept: accept, source: a.c.src}
		req = req.WithContext(withCall(ctx, call))
		if a.c.policy.NoConditional && hasConditional(req.Header) {
			req.Header = req.Header.Clone()
			req.Header.Del("If-None-Match")
			req.Header.Del("If-Modified-Since")
		}
	}
	if err := a.c.admit(req.Context(), req.URL, a.c.source(call)); err != nil {
		closeBody(req)
		a.c.refused(call.kind, err)
		return nil, err
	}
	resp, err := a.next.RoundTrip(req)
	if err != nil {
		a.c.refused(call.kind, err)
		return nil, transportFailure(err)
	}
	return resp, nil
}

// refused shows the observer the refusal err of a request of kind, if err is
// a refusal of ours.
func (c *Client) refused(kind Kind, err error) {
	if c.observe == nil {
		return
	}
	if e, ok := refusedEvent(kind, err); ok {
		e.At = c.clock.Now()
		c.observe(e)
	}
}

func (c *Client) admit(ctx context.Context, u *url.URL, src *Source) error {
	host, err := hostKey(ctx, u)
	if err != nil {
		return invalidHost(u, err)
	}
	if !strings.EqualFold(u.Scheme, "https") && !(c.policy.AllowHTTP && strings.EqualFold(u.Scheme, "http")) {
		return &RefusedError{Host: host, URL: u.Redacted(), Reason: NotHTTPS}
	}
	if len(src.Admitted) > 0 && !hostIn(host, src.Admitted) {
		return &RefusedError{Host: host, URL: u.Redacted(), Reason: HostNotAdmitted}
	}
	return nil
}

// source returns the Source in force for a call: the call's, else the policy's.
func (c *Client) source(call *callInfo) *Source {
	if call != nil && call.source != nil {
		return call.source
	}
	return c.src
}

// Transport returns the chain as an [http.RoundTripper], for a caller's own
// [http.Client]: the layers of the package doc but the validators, over the
// base transport, refusing non-https URLs and hosts the policy does not admit, with the
// caller's requests checked as [Client.HTTPClient] says. It does not follow
// redirects by itself, strip tracking parameters or make requests
// conditional: use [Client.HTTPClient], [Client.Doer] or [Client.Get].
func (c *Client) Transport() http.RoundTripper { return c.plain }

// HTTPClient returns an [http.Client] over the chain with the redirect policy,
// the policy's Timeout and no cookie jar. Each call returns a new *http.Client
// sharing the Client's state. Its reads count as articles in the ledger: read
// feeds, sitemaps and API lists through [Client.Doer].
//
// It behaves as ordinary http.Client code expects, within what the chain
// allows:
//   - only GET and HEAD without a body are sent; any other request returns a
//     *[RequestError] (ErrUnsupportedMethod, ErrRequestBody) and nothing is
//     sent;
//   - the chain never makes a request conditional by itself: a caller who sent
//     no If-None-Match or If-Modified-Since never gets a 304, and one who sent
//     them gets the server's answer (under a policy with NoConditional they
//     are dropped, and the answer is never a 304);
//   - the caller's Accept replaces the policy's; User-Agent (the policy's
//     identity is sent instead), Accept-Encoding, Referer, Connection,
//     Keep-Alive, Cache-Control, Pragma and the tracing headers X-Request-Id,
//     X-Correlation-Id, Traceparent, Tracestate and Baggage are dropped;
//   - any other header (Authorization, Cookie, Range, If-Match, an API key…)
//     would change what the request means, so the request is refused with a
//     *[RequestError] (ErrUnsupportedHeader) naming it: a credential goes in
//     [Policy.Credential] or a [Source];
//   - the caller must read every response body to its end or close it, as
//     http.Client requires anyway: until then it holds its host's turn, and
//     the host's next request waits (its error, and [Client.Explain], say
//     that a response body from the host is still open, and since when);
//   - the body is the server's, with its content-codings as sent (the chain
//     asks for identity, so a polite server sends none), and a refusal the
//     chain makes is a *[RefusedError] wrapped in the *url.Error that
//     http.Client returns.
func (c *Client) HTTPClient() *http.Client {
	hc := *c.plainHC
	hc.Timeout = c.policy.Timeout
	return &hc
}

// Close ends what the Client still does in the background and closes its
// idle connections. The requests a caller gave up on after they were written
// (awaited for their answer grace, see the package doc) are hung up on, and
// the bodies still open are ended; Close waits for the goroutines that
// awaited them, a few seconds at most. The Client must not be used
// afterwards.
func (c *Client) Close() error {
	c.pacer.close()
	c.base.CloseIdleConnections()
	return nil
}

// Get reads rawURL politely: tracking parameters stripped, redirects followed
// within the policy, each hop through the gates and the pacer, the body read within
// the caps and decoded. A refusal we make returns a *[RefusedError] and a nil
// Result. A response returns a Result whatever its status; if its body could not
// be read in full within bounds, Get returns the Result (Body nil, Depositable
// saying why) together with that same error. Other errors (DNS, TLS, time-outs)
// return a nil Result.
//
// Get reads and closes every body itself. A response body that another
// reader of the Client holds open (through [Client.HTTPClient] or
// [Client.Transport]) holds its host's turn until it is read to its end or
// closed: a Get to that host waits for it, and if its deadline comes first
// its error (matching ErrPacingDeadline) says that a response body from the
// host is still open, and since when; so does [Client.Explain]
// (Explanation.BodyOpenSince).
func (c *Client) Get(ctx context.Context, rawURL string, opts ...GetOptions) (*Result, error) {
	start := time.Now()
	call := c.newCall(KindArticle, opts)
	call.result = new(resultRecord)
	call.recorder.room = call.result.hop0[:0:1]
	u, err := url.Parse(rawURL)
	if err != nil {
		err := unparsedRefusal(rawURL, err)
		c.refused(call.kind, err)
		return nil, err
	}
	ctx = withCall(ctx, call)
	req, cancel, err := c.request(ctx, call, u, http.MethodGet)
	if err != nil {
		return nil, err
	}
	defer cancel()
	resp, err := c.follow(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	res := newResult(call, resp)
	if res.NotModified {
		drain(resp.Body)
	} else if body, err := c.readBody(req.Context(), resp); err != nil {
		res.bodyErr = err
	} else {
		res.Body, res.Wire, res.Decoded, res.CodingsRemoved = body.Envelope, body.Wire, body.Decoded, body.Removed
	}
	readAt := c.clock.Now().UTC()
	res.Hops, res.Timings, res.Sent = call.rec.take()
	res.Timings.Total = time.Since(start)
	if res.bodyErr == nil && !res.NotModified {
		res.Proof = &call.result.proof
		*res.Proof = proofOf(res, readAt)
	}
	c.logger.LogAttrs(req.Context(), slog.LevelDebug, "fetched", slog.String("url", res.FinalURL), slog.Int("status", res.Status),
		slog.Int64("wire", res.Wire), slog.Duration("total", res.Timings.Total))
	if res.bodyErr != nil {
		return res, res.bodyErr
	}
	return res, nil
}

// newCall returns the call of one Get or Doer read: its kind, its options, the
// Accept of its kind and the Source in force.
func (c *Client) newCall(kind Kind, opts []GetOptions) *callInfo {
	call := &callInfo{kind: kind}
	call.rec = &call.recorder
	if len(opts) > 0 {
		o := GetOptions{Kind: kind}
		for i := range opts {
			o = o.merge(&opts[i])
		}
		call.kind, call.referer, call.maxBody = o.Kind, o.Referer, o.MaxBody
		call.unconditional, call.deferred = o.Unconditional, o.DeferValidators
		if o.Source != nil {
			call.source = keyedSource(o.Source)
		}
	}
	if call.kind == KindImage && call.accept == "" {
		call.accept = ImageAccept
	}
	call.source = c.source(call)
	return call
}

// request admits u for call, strips its tracking parameters, puts its host in
// its one key form and returns the request for it, bounded by the policy's
// Timeout unless ctx ends sooner. u is modified; cancel must be called once
// the response has been read.
func (c *Client) request(ctx context.Context, call *callInfo, u *url.URL, method string) (req *http.Request, cancel context.CancelFunc, err error) {
	if err := c.admit(ctx, u, call.source); err != nil {
		c.refused(call.kind, err)
		return nil, nil, err
	}
	_ = c.requestURL(ctx, call, u) // admit has checked the host
	cancel = noCancel
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > c.policy.Timeout {
		// The policy's bound, unless the caller's deadline comes first (then
		// it already bounds the read, and a second timer would cost for nothing).
		ctx, cancel = context.WithTimeout(ctx, c.policy.Timeout)
	}
	// The request is built on the URL already parsed and cleaned (what
	// http.NewRequestWithContext would make of its string, without parsing it
	// again; Host is left empty, so the URL's host goes on the wire).
	req = (&http.Request{
		Method: method, URL: u, // Header nil: the identity layer makes every request's header
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}).WithContext(ctx)
	call.url, call.urlString = u, u.String() // the first hop's URL, as a string once
	return req, cancel, nil
}

// requestURL puts u in the form a request of call is sent with: its
// tracking parameters stripped, its host in its one key form. u is modified;
// the error is the host's, which has no key form.
func (c *Client) requestURL(ctx context.Context, call *callInfo, u *url.URL) error {
	tracking.Strip(u, c.policy.Tracking, call.source.Params)
	k, err := hostKey(ctx, u)
	if err != nil {
		return err
	}
	u.Host = k // one host, one key: the wire carries the normalised name
	call.keyHost, call.key = k, k
	return nil
}

func noCancel() {}

// follow sends req through the chain and follows its redirects as an
// http.Client would for a GET or a HEAD without a body (301, 302, 303, 307
// and 308 with a Location; the same method; the first request's header),
// each hop admitted by checkRedirect first. It is an http.Client's loop
// without what the chain never uses (bodies, cookies, its own time-out),
// and returns the chain's error as is (no *url.Error around it: the error
// names the URL itself).
func (c *Client) follow(req *http.Request) (*http.Response, error) {
	first := req
	var via []*http.Request
	for {
		resp, err := c.chain.RoundTrip(req)
		if err != nil {
			c.logger.LogAttrs(req.Context(), slog.LevelInfo, "fetch refused or failed", slog.String("url", req.URL.Redacted()), slog.String("err", err.Error()))
			return nil, err
		}
		loc := resp.Header.Get("Location")
		if !redirect.Is(resp.StatusCode) || loc == "" {
			return resp, nil
		}
		u, err := req.URL.Parse(loc)
		if err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("fetch: failed to parse Location header %q: %v", loc, err)
		}
		via = append(via, req)
		next := (&http.Request{
			Method: first.Method, URL: u, Header: first.Header.Clone(), Response: resp,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		}).WithContext(first.Context())
		if next.Header == nil {
			next.Header = make(http.Header)
		}
		err = c.checkRedirect(next, via)
		drain(resp.Body) // a little, so that the connection may be reused
		resp.Body.Close()
		if err != nil {
			c.logger.LogAttrs(req.Context(), slog.LevelInfo, "fetch refused or failed", slog.String("url", u.Redacted()), slog.String("err", err.Error()))
			return nil, err
		}
		req = next
	}
}

// readBody reads resp's body in full within the policy's caps and removes its
// content-codings; the error matches this package's body sentinels, and
// ctx's error when ctx (the call's: the caller's and the policy's bound)
// ended the read.
func (c *Client) readBody(ctx context.Context, resp *http.Response) (*decode.Body, error) {
	body, err := decode.ReadContext(ctx, resp.Body, resp.ContentLength, resp.Header.Values("Content-Encoding"),
		c.bodyLimits(resp))
	if err != nil {
		return nil, bodyError(err)
	}
	return body, nil
}

// newResult returns the Result of resp, the answer to call, before its body
// is read.
func newResult(call *callInfo, resp *http.Response) *Result {
	var res *Result
	if call.result != nil {
		res = &call.result.res
	} else {
		res = new(Result)
	}
	*res = Result{
		URL:         call.urlString,
		FinalURL:    call.urlString,
		Status:      resp.StatusCode,
		Header:      resp.Header,
		NotModified: resp.StatusCode == http.StatusNotModified,
	}
	if resp.Request.URL != call.url { // redirected
		res.FinalURL = resp.Request.URL.String()
	}
	res.MediaType, _ = decode.MediaType(resp.Header)
	return res
}

// proofOf returns the proof of fetch of a complete res read at readAt.
func proofOf(res *Result, readAt time.Time) provenance.Proof {
	removed := res.CodingsRemoved
	if removed == nil {
		removed = []string{}
	}
	return provenance.Proof{
		Schema:         provenance.Schema,
		RequestedURL:   res.URL,
		FinalURL:       res.FinalURL,
		ReadAt:         readAt,
		Hops:           res.Hops,
		Digest:         digestOf(res.Body),
		Length:         int64(len(res.Body)),
		CodingsRemoved: removed,
		SDKVersion:     provenance.SDKVersion,
	}
}

// bodyError maps the decoder's error to this package's sentinels, keeping the cause.
func bodyError(err error) error {
	var s error
	switch {
	case errors.Is(err, decode.ErrWireTooLarge):
		s = ErrWireTooLarge
	case errors.Is(err, decode.ErrDecodedTooLarge):
		s = ErrDecodedTooLarge
	case errors.Is(err, decode.ErrUnknownCoding):
		s = ErrUnknownCoding
	case errors.Is(err, decode.ErrCorrupt):
		s = ErrCorrupt
	case errors.Is(err, decode.ErrTooManyCodings):
		s = ErrTooManyCodings
	case errors.As(err, new(*decode.StoppedError)):
		// The Get's deadline (or its caller's cancellation) came while the
		// body was being decoded: the error matches the context's.
		return &namedError{sentinel: errNotInTime, err: err}
	default:
		s = ErrTruncated
	}
	return &namedError{sentinel: s, err: err}
}

// digestOf is provenance.DigestOf ("sha256:" and the hex digest) in one
// allocation.
func digestOf(envelope []byte) string {
	sum := sha256.Sum256(envelope)
	var buf [len(provenance.DigestPrefix) + 2*sha256.Size]byte
	n := copy(buf[:], provenance.DigestPrefix)
	hex.Encode(buf[n:], sum[:])
	return string(buf[:])
}
