package fetch

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/internal/decode"
	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/robots"
)

// Client is the politeness chain assembled from a [Policy]: URL policy, redirect
// policy, then for every hop the robots gate, the ledger gate, the pacer, the
// identity layer and the validators over an SSRF-checking base transport, and a
// bounded, decoded body with its proof of fetch.
//
// Build one with [New]. A Client is safe for concurrent use by any number of
// goroutines, and politeness holds across all of them (P1). Close releases its idle
// connections; the Client owns no other goroutine.
type Client struct {
	policy     Policy
	clock      clock.Clock
	logger     *slog.Logger
	base       *http.Transport
	pacer      *Pacer
	ledger     *backoff.Ledger
	robots     *robots.Cache
	validators *Validators
	chain      http.RoundTripper
	hc         *http.Client
	src        *Source // the policy's source, shared read-only by every Get without its own
}

// Option sets one of the Client's collaborators at [New].
type Option func(*options)

type options struct {
	clock       clock.Clock
	resolver    Resolver
	dial        DialFunc
	roots       *x509.CertPool
	allow       []netip.Prefix
	logger      *slog.Logger
	store       Store
	robotsStore robots.Store
	ledgerStore backoff.Store
	onEvent     func(backoff.Event)
	dnsTTL      time.Duration
	schedule    Schedule
}

// WithClock sets the clock of the pacer, the ledger and the robots cache (tests
// use a manual clock). Default: real time.
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// WithResolver sets the DNS resolver under the Client's DNS cache (D8). Default:
// the system resolver.
func WithResolver(r Resolver) Option { return func(o *options) { o.resolver = r } }

// WithDNSTTL sets how long DNS answers are cached. Default: five minutes.
func WithDNSTTL(d time.Duration) Option { return func(o *options) { o.dnsTTL = d } }

// WithDial sets the function that connects to an "ip:port" once the address has
// been checked; the address is checked again on the connection made. Default: a
// net.Dialer.
func WithDial(d DialFunc) Option { return func(o *options) { o.dial = d } }

// WithRootCAs sets the roots TLS chains are verified against. Default: the
// system's.
func WithRootCAs(p *x509.CertPool) Option { return func(o *options) { o.roots = p } }

// WithAllowPrefixes admits addresses that are not public (tests: 127.0.0.0/8;
// private deployments). Default: public unicast addresses only (V10).
func WithAllowPrefixes(p ...netip.Prefix) Option {
	return func(o *options) { o.allow = append(o.allow, p...) }
}

// WithLogger sets the logger for requests, refusals and ledger events; the
// credential never appears in it. Default: silent.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithValidatorStore sets where conditional-GET validators are kept. Default: a
// MemoryStore.
func WithValidatorStore(s Store) Option { return func(o *options) { o.store = s } }

// WithRobotsStore sets where robots.txt entries are kept. Default: robots'
// in-memory store.
func WithRobotsStore(s robots.Store) Option { return func(o *options) { o.robotsStore = s } }

// WithLedgerStore sets where the refusal ledger is kept. Default: backoff's
// in-memory store.
func WithLedgerStore(s backoff.Store) Option { return func(o *options) { o.ledgerStore = s } }

// WithSchedule shares pacing with other processes through s (P1): every start is
// claimed in it, and the moment the request really left is reported to it.
// Default: pacing holds within this Client.
func WithSchedule(s Schedule) Option { return func(o *options) { o.schedule = s } }

// WithLedgerEvents sets a callback for every ledger event (metrics).
func WithLedgerEvents(f func(backoff.Event)) Option { return func(o *options) { o.onEvent = f } }

// New builds a Client from p (copied) and opts. It fails only for a policy without
// an identity (ErrNoIdentity) or with an invalid credential header.
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
	c := &Client{policy: p, clock: clock.Or(o.clock), logger: logger}
	c.src = &Source{Admitted: p.Admitted, Params: p.Params, Credential: p.Credential}
	c.base = newBase(baseConfig{
		resolver: o.resolver, dial: o.dial, roots: o.roots, allow: o.allow, dnsTTL: o.dnsTTL,
		inFlight: p.InFlight, firstByte: p.FirstByte, allowHTTP: p.AllowHTTP,
	})
	bottom := &hopRecorder{next: c.base}
	c.ledger = &backoff.Ledger{Policy: p.Backoff, Store: o.ledgerStore, PerSite: p.PerSite, Logger: o.logger, OnEvent: o.onEvent}
	c.pacer = &Pacer{Interval: p.Interval, IntervalMax: p.IntervalMax, InFlight: p.InFlight, PerSite: p.PerSite, Clock: o.clock, Schedule: o.schedule}
	ua := p.UserAgent()

	// robots.txt requests: ledger gate, pacer, identity, base — never validators,
	// never the robots gate.
	robotsRT := &robotsCall{next: &LedgerGate{Ledger: c.ledger, Clock: o.clock,
		Next: c.pacerOver(&LedgerGate{Ledger: c.ledger, Clock: o.clock, CheckOnly: true,
			Next: &Identity{UserAgent: ua, Accept: "text/plain, */*;q=0.5", Next: bottom}})}}
	c.robots = &robots.Cache{
		Transport: robotsRT,
		UserAgent: ua,
		Policy:    robots.Policy{Status: p.Robots.Status, TTL: p.Robots.TTL, RetryInterval: p.Robots.Retry, OnFailure: p.Robots.OnFailure},
		Store:     o.robotsStore,
		Clock:     o.clock,
		Logger:    o.logger,
	}

	var below http.RoundTripper = bottom
	if !p.NoConditional {
		c.validators = &Validators{Store: o.store, Next: bottom}
		below = c.validators
	}
	core := &LedgerGate{Ledger: c.ledger, Clock: o.clock,
		Next: c.pacerOver(&LedgerGate{Ledger: c.ledger, Clock: o.clock, CheckOnly: true,
			Next: &Identity{UserAgent: ua, Accept: p.Accept, Credential: p.Credential, Next: below}})}
	c.chain = &admission{c: c, next: &RobotsGate{Robots: c.robots, Next: core}}
	// Get bounds each call with its own context deadline; the client handed out by
	// HTTPClient carries the same bound as http.Client.Timeout.
	c.hc = &http.Client{Transport: c.chain, CheckRedirect: c.checkRedirect}
	return c, nil
}

// pacerOver returns a Pacer layer sharing the Client's pacing state over next.
func (c *Client) pacerOver(next http.RoundTripper) http.RoundTripper {
	return &sharedPacer{p: c.pacer, next: next}
}

// sharedPacer runs one Pacer's pacing over another next layer, so the robots.txt
// path and the main path share one budget per host.
type sharedPacer struct {
	p    *Pacer
	next http.RoundTripper
}

func (s *sharedPacer) RoundTrip(req *http.Request) (*http.Response, error) {
	return s.p.roundTrip(s.next, req)
}

// robotsCall marks a request as a robots.txt fetch of its own, so the layers
// below neither take the Get's kind, Accept or Referer nor record its hops.
type robotsCall struct{ next http.RoundTripper }

func (r *robotsCall) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := withCall(req.Context(), &callInfo{kind: KindRobots})
	return r.next.RoundTrip(req.WithContext(ctx))
}

// admission is the top of Transport(): https only and admitted hosts, for callers
// that use the chain under their own http.Client.
type admission struct {
	c    *Client
	next http.RoundTripper
}

func (a *admission) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := a.c.admit(req.Context(), req.URL, a.c.source(callFrom(req.Context()))); err != nil {
		closeBody(req)
		return nil, err
	}
	return a.next.RoundTrip(req)
}

func (c *Client) admit(ctx context.Context, u *url.URL, src *Source) error {
	host, err := hostKey(ctx, u)
	if err != nil {
		return err
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
// [http.Client]: robots gate, ledger gate, pacer, identity, validators and base
// transport, refusing non-https URLs and hosts the policy does not admit. It does
// not follow redirects or strip tracking parameters: use [Client.HTTPClient] or
// [Client.Get] for those.
func (c *Client) Transport() http.RoundTripper { return c.chain }

// HTTPClient returns an [http.Client] over the chain with the redirect policy, the
// policy's timeout and no cookie jar. Each call returns a new *http.Client sharing
// the Client's state.
func (c *Client) HTTPClient() *http.Client {
	hc := *c.hc
	hc.Timeout = c.policy.Timeout
	return &hc
}

// Close closes the idle connections. The Client must not be used afterwards.
func (c *Client) Close() error {
	c.base.CloseIdleConnections()
	return nil
}

// Pacer returns the Client's pacer (for its state, e.g. Hosts).
func (c *Client) Pacer() *Pacer { return c.pacer }

// Ledger returns the Client's refusal ledger.
func (c *Client) Ledger() *backoff.Ledger { return c.ledger }

// Robots returns the Client's robots.txt cache.
func (c *Client) Robots() *robots.Cache { return c.robots }

// GetOption sets one Get's particulars.
type GetOption func(*callInfo)

// AsKind says what the Get is for (default KindArticle).
func AsKind(k Kind) GetOption { return func(c *callInfo) { c.kind = k } }

// WithReferer sends page as the Referer (an image's article page, S7). It is sent
// on every hop of this Get, and by nothing else.
func WithReferer(page string) GetOption { return func(c *callInfo) { c.referer = page } }

// WithAccept replaces the policy's Accept header for this Get.
func WithAccept(accept string) GetOption { return func(c *callInfo) { c.accept = accept } }

// WithSource applies a source's admitted hosts, declared parameters and
// credential to this Get instead of the policy's.
func WithSource(s Source) GetOption {
	return func(c *callInfo) {
		s.Admitted = normalizeList(s.Admitted)
		s.Credential.Hosts = normalizeList(s.Credential.Hosts)
		c.source = &s
	}
}

// Get reads rawURL politely: tracking parameters stripped, redirects followed
// within the policy, each hop through the gates and the pacer, the body read within
// the caps and decoded. A refusal we make returns a *[RefusedError] and a nil
// Result. A response returns a Result whatever its status; if its body could not
// be read in full within bounds, Get returns the Result (Body nil, Depositable
// saying why) together with that same error. Other errors (DNS, TLS, time-outs)
// return a nil Result.
func (c *Client) Get(ctx context.Context, rawURL string, opts ...GetOption) (*Result, error) {
	call := &callInfo{}
	call.rec = &call.recorder
	for _, f := range opts {
		f(call)
	}
	if call.kind == KindImage && call.accept == "" {
		call.accept = ImageAccept
	}
	src := c.source(call)
	call.source = src
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	ctx = withCall(ctx, call)
	if err := c.admit(ctx, u, src); err != nil {
		return nil, err
	}
	cleanInPlace(u, c.policy.Tracking, src.Params) // u is ours: parsed above
	if k, err := hostKey(ctx, u); err == nil {
		u.Host = k // one host, one key: the wire carries the normalised name
		call.keyHost, call.key = k, k
	}
	start := time.Now()
	if dl, ok := ctx.Deadline(); !ok || dl.After(start.Add(c.policy.Timeout)) {
		// The policy's bound, unless the caller's deadline comes first (then
		// it already bounds the Get, and a second timer would cost for nothing).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.policy.Timeout)
		defer cancel()
	}
	// The request is built on the URL already parsed and cleaned (what
	// http.NewRequestWithContext would make of its string, without parsing it
	// again; Host is left empty, so the URL's host goes on the wire).
	req := (&http.Request{
		Method: http.MethodGet, URL: u, Header: make(http.Header),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}).WithContext(ctx)
	us := u.String()
	call.url, call.urlString = u, us // the first hop's URL, as a string once
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		c.logger.LogAttrs(ctx, slog.LevelInfo, "fetch refused or failed", slog.String("url", u.Redacted()), slog.String("err", err.Error()))
		return nil, err
	}
	defer resp.Body.Close()
	res := &Result{
		URL:         us,
		FinalURL:    us,
		Status:      resp.StatusCode,
		Header:      resp.Header,
		NotModified: resp.StatusCode == http.StatusNotModified,
	}
	if resp.Request.URL != u { // redirected
		res.FinalURL = resp.Request.URL.String()
	}
	res.MediaType, _ = decode.MediaType(resp.Header)
	if !res.NotModified {
		body, derr := decode.Read(resp.Body, resp.ContentLength, resp.Header.Values("Content-Encoding"),
			decode.Limits{MaxWire: c.policy.MaxWire, MaxDecoded: c.policy.MaxDecoded})
		if derr != nil {
			res.bodyErr = bodyError(derr)
		} else {
			res.Body, res.Wire, res.Decoded, res.CodingsRemoved = body.Envelope, body.Wire, body.Decoded, body.Removed
		}
	} else {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	}
	readAt := c.clock.Now().UTC()
	res.Hops, res.Timings = call.rec.take()
	res.Timings.Total = time.Since(start)
	if res.bodyErr == nil && !res.NotModified {
		removed := res.CodingsRemoved
		if removed == nil {
			removed = []string{}
		}
		res.Proof = &provenance.Proof{
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
	c.logger.LogAttrs(ctx, slog.LevelDebug, "fetched", slog.String("url", res.FinalURL), slog.Int("status", res.Status),
		slog.Int64("wire", res.Wire), slog.Duration("total", res.Timings.Total))
	if res.bodyErr != nil {
		return res, res.bodyErr
	}
	return res, nil
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
	default:
		s = ErrTruncated
	}
	return fmt.Errorf("%w: %w", s, err)
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
