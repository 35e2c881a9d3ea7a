package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/internal/decode"
	"github.com/politefetch/politefetch/internal/hostkey"
	"github.com/politefetch/politefetch/internal/redirect"
)

// Defaults for a [Policy] and a [Cache].
const (
	// DefaultTTL is how long a fetched robots.txt stands when Policy.TTL is
	// zero: the 24 hours RFC 9309 §2.4 allows at most.
	DefaultTTL = 24 * time.Hour
	// DefaultRetryInterval is the wait before robots.txt is fetched again
	// after a fetch that disallowed the site, when Policy.RetryInterval is
	// zero.
	DefaultRetryInterval = 15 * time.Minute
	// MinTTL is the shortest time a fetched robots.txt stands, whatever its
	// Cache-Control says, so a max-age=0 cannot double a host's requests.
	MinTTL = time.Minute
	// DefaultTimeout bounds one robots.txt fetch, redirects and body
	// included, when Cache.Timeout is zero.
	DefaultTimeout = 30 * time.Second
	// MaxRedirects is how many redirects a robots.txt fetch follows (RFC
	// 9309 §2.3.1.2: at least five); one more is [ErrTooManyRedirects].
	MaxRedirects = 5
	// DefaultStoreRecheck is how long a Cache answers from a record it read
	// from a Store other than the default one before it reads the Store
	// again, when Cache.StoreRecheck is zero.
	DefaultStoreRecheck = 10 * time.Second
)

// FailureMode says what a failed fetch does when a good copy of robots.txt
// is cached.
type FailureMode uint8

const (
	// FailDisallowAll disallows the site after a failed fetch, whatever was
	// cached before (the seed policies' choice).
	FailDisallowAll FailureMode = iota
	// UseLastGood keeps obeying the last good copy while robots.txt is
	// unreachable (5xx or a network failure), as RFC 9309 §2.4 allows,
	// retrying every RetryInterval.
	UseLastGood
)

// Policy is how a [Cache] treats robots.txt fetches. The zero value is RFC
// 9309 with a 24-hour TTL, a 15-minute retry interval and FailDisallowAll.
type Policy struct {
	// Status maps a fetch's status or failure to an Outcome.
	Status StatusPolicy
	// TTL is how long a fetched robots.txt (or an "allow all" answer)
	// stands; a shorter Cache-Control max-age wins, down to MinTTL. 0 means
	// DefaultTTL.
	TTL time.Duration
	// RetryInterval is how long an outcome of DisallowAll stands before
	// robots.txt is fetched again. 0 means DefaultRetryInterval.
	RetryInterval time.Duration
	// OnFailure chooses between disallowing and the last good copy when a
	// fetch fails after a good one.
	OnFailure FailureMode
}

// StrictNews is the strict news crawler's policy: RFC 9309 plus 401,
// 403, 429, 5xx and unreachable → disallow the site; cached 1 hour.
func StrictNews() Policy {
	return Policy{Status: Strict, TTL: time.Hour, RetryInterval: DefaultRetryInterval}
}

// Digest is the digest engine's policy: RFC 9309 status
// rules, cached 24 hours.
func Digest() Policy {
	return Policy{Status: RFC9309, TTL: 24 * time.Hour, RetryInterval: DefaultRetryInterval}
}

// Vault is the vault connector's policy: 4xx → allow all, 5xx
// or unreachable → read nothing and retry robots.txt after 15 minutes;
// cached at most 24 hours.
func Vault() Policy {
	return Policy{Status: RFC9309, TTL: 24 * time.Hour, RetryInterval: 15 * time.Minute}
}

func (p Policy) ttl() time.Duration {
	if p.TTL > 0 {
		return p.TTL
	}
	return DefaultTTL
}

func (p Policy) retry() time.Duration {
	if p.RetryInterval > 0 {
		return p.RetryInterval
	}
	return DefaultRetryInterval
}

// Cache answers whether a URL may be fetched, fetching and caching each
// host's robots.txt first. Set the fields before first use and do not
// change them afterwards; Transport is required. A Cache is safe for
// concurrent use and owns no goroutine beyond a fetch in progress; it has
// nothing to close.
type Cache struct {
	// Transport carries the robots.txt requests: the fetch chain below the
	// robots gate (back-off ledger, pacer, identity headers, base transport),
	// so they are paced and identified like any other request. It must not
	// follow redirects: the Cache follows at most MaxRedirects itself.
	Transport http.RoundTripper
	// UserAgent selects the group of rules: a product token ("FooBot") or a
	// full User-Agent string. It is also sent as the User-Agent header of
	// robots.txt requests when not empty (the identity layer may replace it).
	UserAgent string
	// Policy is how fetch outcomes, TTLs and failures are treated; the zero
	// value is RFC 9309 with DefaultTTL and DefaultRetryInterval.
	Policy Policy
	// Store holds the per-host state; nil means a MemoryStore bounded by
	// MaxHosts and DefaultMaxBytes, using Clock. A Get that fails refuses
	// the request that needed the record (a *StoreError): the Cache never
	// takes a failing Store for a host it knows nothing of, and fetches
	// nothing then.
	Store Store
	// Clock tells the time and runs the fetch timeout; nil means real time.
	Clock Clock
	// AllowHTTP lets the Cache answer for http URLs too, reading their
	// robots.txt over http (RFC 9309 §2.3: the file applies to the scheme,
	// host and port it was read from). Zero (false): https only; an http URL
	// gets [ErrNotHTTPS] and nothing is fetched. Whether plain http may be
	// read at all is the caller's policy (fetch.Policy.AllowHTTP).
	AllowHTTP bool
	// MaxHosts bounds the default Store, or the Cache's parsed view of the
	// records of another Store; 0 means DefaultMaxHosts.
	MaxHosts int
	// StoreRecheck bounds how long the Cache answers from its view of a
	// record read from a Store other than the default one (a networked
	// store, where each Get is a round trip) before it reads the Store
	// again; 0 means DefaultStoreRecheck, negative means every request reads
	// it. A view is never used past its record's Expires, when robots.txt
	// is due again: a record another process stores then (its refresh) is
	// read at once. StoreRecheck is the staleness bound only for a record
	// rewritten before its Expires, which no Cache does.
	StoreRecheck time.Duration
	// Timeout bounds one robots.txt fetch; 0 means DefaultTimeout. A fetch
	// that runs over it (a slow body, say) is a network failure.
	Timeout time.Duration
	// Logger receives one record per robots.txt fetch; nil is silent.
	Logger *slog.Logger

	once  sync.Once
	store Store
	mem   *MemoryStore // store, when it is the default one (same Clock)
	sf    singleflight.Group

	// views keeps the parsed rules and fetch errors of records read back
	// from a Store other than the default one (which keeps them itself), so
	// a body is parsed once per fetch, not once per request. It is bounded
	// as the default store would be.
	views *MemoryStore
}

// entry is a Record with the Cache's in-memory view of it.
type entry struct {
	Record
	// rules is Body parsed, when Outcome is ParseBody; nil until parsed.
	rules *Rules
	// err is the fetch failure as it happened in this process; nil for a
	// record read back from a Store, which keeps only its text.
	err error
	// recheck is when a view of a record of another Store must be checked
	// against the Store again (Unix nanoseconds on the Cache's clock); 0 in
	// the default store.
	recheck int64
}

// view completes a record read from a Store with the Cache's view of it:
// the rules parsed once per fetch, and the fetch error when this process
// made it. A view is reused while the record it was made from stands (same
// fetch instant, outcome, body length and failure).
func (c *Cache) view(host string, r Record, now time.Time) entry {
	v, ok := c.views.get(host, now)
	if ok && v.FetchedAt.Equal(r.FetchedAt) && v.Outcome == r.Outcome && len(v.Body) == len(r.Body) && v.Failure == r.Failure {
		v.Record = r
	} else {
		v = entry{Record: r}
		if r.Outcome == ParseBody {
			v.rules = Parse(r.Body)
		}
	}
	v.recheck = c.recheckAt(now)
	c.views.put(host, v)
	return v
}

// recheckAt is when a view made at now is to be checked against the Store.
func (c *Cache) recheckAt(now time.Time) int64 {
	d := c.StoreRecheck
	if d == 0 {
		d = DefaultStoreRecheck
	}
	if d < 0 {
		return 0
	}
	return now.Add(d).UnixNano()
}

func (c *Cache) init() {
	c.once.Do(func() {
		c.store = c.Store
		if c.store == nil {
			c.mem = &MemoryStore{MaxEntries: c.MaxHosts, Clock: c.Clock}
			c.store = c.mem
			return
		}
		c.views = &MemoryStore{MaxEntries: c.MaxHosts, Clock: c.Clock}
	})
}

// Allow returns nil when u may be fetched, or a *[DisallowedError] matching
// [ErrDisallowed] that says which rule or which fetch outcome forbids it.
// The robots.txt of u's scheme, host and port is fetched first when it is
// not cached or expired; "/robots.txt" itself is always allowed without a
// fetch. Allow returns ctx's error if ctx ends while it waits for a fetch
// (the fetch goes on, for the other callers), [ErrNotHTTPS] for a
// scheme the Cache does not read (anything but https, or but https and
// http with AllowHTTP), and an error matching [ErrNotSent] when the
// Transport could not send the robots.txt request (nothing is recorded; the
// next call asks again) or when the Store could not be read (a
// *[StoreError]: nothing is fetched).
func (c *Cache) Allow(ctx context.Context, u *url.URL) error {
	host, err := c.key(u)
	if err != nil {
		return err
	}
	if isRobotsPath(u.EscapedPath()) {
		return nil
	}
	e, err := c.lookup(ctx, host)
	if err != nil {
		return err
	}
	switch e.Outcome {
	case ParseBody:
		rules := e.rules
		target := u.RequestURI()
		if rules.Allowed(c.UserAgent, target) {
			return nil
		}
		d := rules.Explain(c.UserAgent, target)
		return &DisallowedError{Host: host, URL: u.Redacted(), Outcome: ParseBody, Status: e.Status,
			Group: d.Group, Rule: d.Rule, Line: d.Line, RetryAt: e.Expires}
	case AllowAll:
		return nil
	}
	return &DisallowedError{Host: host, URL: u.Redacted(), Outcome: DisallowAll, Status: e.Status,
		RetryAt: e.Expires, Err: e.fetchErr()}
}

// Explain answers as [Cache.Allow] does, with its reasons: the group that
// applied (and its User-agent line), the deciding rule and its line, and
// the record behind the answer (its outcome, status, failure, when it was
// fetched and until when it stands). It fetches robots.txt first when it
// is not cached or has expired, as Allow would. Its error is Allow's for a
// URL it cannot answer for (a scheme it does not read, an invalid host,
// ctx ended, robots.txt not requested: [ErrNotSent]); a refusal is an
// answer (Allowed false), not an error.
func (c *Cache) Explain(ctx context.Context, u *url.URL) (Decision, error) {
	host, err := c.key(u)
	if err != nil {
		return Decision{}, err
	}
	if isRobotsPath(u.EscapedPath()) {
		return Decision{Allowed: true, Path: u.RequestURI(), Site: host}, nil
	}
	e, err := c.lookup(ctx, host)
	if err != nil {
		return Decision{}, err
	}
	var d Decision
	switch e.Outcome {
	case ParseBody:
		d = e.rules.Explain(c.UserAgent, u.RequestURI())
	default:
		d = Decision{Allowed: e.Outcome == AllowAll, Path: normPath(u.RequestURI())}
	}
	d.Site, d.Outcome, d.Status, d.Failure = host, e.Outcome, e.Status, e.Failure
	d.FetchedAt, d.Expires, d.Stale = e.FetchedAt, e.Expires, e.Stale
	return d, nil
}

// key returns the Store key of u's robots.txt: the host key for https, the
// same prefixed with "http://" for plain http (a different file, RFC 9309
// §2.3), or the error Allow returns for a URL the Cache does not read.
func (c *Cache) key(u *url.URL) (string, error) {
	if u == nil {
		return "", errors.New("robots: nil URL")
	}
	switch {
	case u.Scheme == "https" || strings.EqualFold(u.Scheme, "https"):
		host, err := hostkey.Normalize(u.Host)
		if err != nil {
			return "", fmt.Errorf("robots: %s: %w", u.Redacted(), err)
		}
		return host, nil
	case c.AllowHTTP && strings.EqualFold(u.Scheme, "http"):
		host, err := hostkey.NormalizeScheme("http", u.Host)
		if err != nil {
			return "", fmt.Errorf("robots: %s: %w", u.Redacted(), err)
		}
		return httpPrefix + host, nil
	}
	return "", fmt.Errorf("%w: %s", ErrNotHTTPS, u.Redacted())
}

// httpPrefix marks the Store key of a plain-http site.
const httpPrefix = "http://"

// robotsURL returns the robots.txt URL of a Store key.
func robotsURL(key string) string {
	if strings.HasPrefix(key, httpPrefix) {
		return key + "/robots.txt"
	}
	return "https://" + key + "/robots.txt"
}

func (e *entry) fetchErr() error {
	if e.err != nil {
		return e.err
	}
	if e.Failure != "" {
		return &FetchError{Text: e.Failure}
	}
	return nil
}

// CrawlDelay returns the Crawl-delay that the robots.txt of u's scheme,
// host and port sets for UserAgent, fetching it first if needed. It returns
// false when there is none, the file is absent, the fetch failed or the
// Cache does not read u's scheme.
func (c *Cache) CrawlDelay(ctx context.Context, u *url.URL) (time.Duration, bool) {
	key, err := c.key(u)
	if err != nil {
		return 0, false
	}
	e, err := c.lookup(ctx, key)
	if err != nil || e.Outcome != ParseBody {
		return 0, false
	}
	return e.rules.CrawlDelay(c.UserAgent)
}

// Sitemaps returns the Sitemap URLs of the host's robots.txt, fetching it
// first if needed: none when it is absent, a *[DisallowedError] when its
// outcome disallows the site, an error matching [ErrNotSent] when the
// request for it was not sent.
func (c *Cache) Sitemaps(ctx context.Context, host string) ([]string, error) {
	h, err := normalize(host)
	if err != nil {
		return nil, err
	}
	e, err := c.lookup(ctx, h)
	if err != nil {
		return nil, err
	}
	switch e.Outcome {
	case ParseBody:
		return e.rules.Sitemaps(), nil
	case AllowAll:
		return nil, nil
	}
	return nil, &DisallowedError{Host: h, URL: "https://" + h + "/", Outcome: DisallowAll, Status: e.Status,
		RetryAt: e.Expires, Err: e.fetchErr()}
}

// Lookup returns the host's current record, fetching robots.txt first when
// it is not cached or has expired. Concurrent lookups of one host share
// one fetch. Fetch failures are records, not errors: the error is ctx's
// (a done ctx starts no fetch), an invalid host's, or one matching
// [ErrNotSent] for a request the Transport did not send (nothing recorded)
// or a Store that could not be read (a *[StoreError], nothing fetched).
func (c *Cache) Lookup(ctx context.Context, host string) (Record, error) {
	key, err := normalize(host)
	if err != nil {
		return Record{}, err
	}
	e, err := c.lookup(ctx, key)
	return e.Record, err
}

// normalize returns host's key (hostkey.Normalize) or Lookup's error.
func normalize(host string) (string, error) {
	key, err := hostkey.Normalize(host)
	if err != nil {
		return "", fmt.Errorf("robots: %w", err)
	}
	return key, nil
}

// lookup is Lookup for a host already normalised: the callers compute the
// key once per call, and a cached host costs no allocation.
func (c *Cache) lookup(ctx context.Context, host string) (entry, error) {
	c.init()
	now := clock.Or(c.Clock).Now()
	e, ok, err := c.get(ctx, host, now)
	if err != nil {
		return entry{}, err
	}
	if ok && now.Before(e.Expires) {
		return e, nil
	}
	if err := ctx.Err(); err != nil {
		return entry{}, err
	}
	ch := c.sf.DoChan(host, func() (any, error) {
		return c.refresh(context.WithoutCancel(ctx), host)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return entry{}, r.Err
		}
		return r.Val.(entry), nil
	case <-ctx.Done():
		return entry{}, ctx.Err()
	}
}

// get returns the stored entry of host, if any. The default store shares
// the Cache's Clock, so it is asked at the same now: one clock reading per
// cached request instead of two. Another Store's error is a *StoreError:
// fail closed, neither the view nor a fetch answers.
func (c *Cache) get(ctx context.Context, host string, now time.Time) (entry, bool, error) {
	if c.mem != nil {
		e, ok := c.mem.get(host, now)
		return e, ok, nil
	}
	// A view checked against the Store less than StoreRecheck ago, of a
	// record that still stands, answers without a round trip.
	if v, ok := c.views.get(host, now); ok && now.UnixNano() < v.recheck && now.Before(v.Expires) {
		return v, true, nil
	}
	r, ok, err := c.store.Get(ctx, host)
	if err != nil {
		return entry{}, false, &StoreError{Host: host, Err: err}
	}
	if !ok {
		return entry{}, false, nil
	}
	return c.view(host, r, now), true, nil
}

// refresh fetches the host's robots.txt and stores the new entry, unless
// another fetch stored a fresh one meanwhile. A request that was not sent
// (its error matches ErrNotSent) stores nothing: refresh returns its error.
func (c *Cache) refresh(ctx context.Context, host string) (entry, error) {
	clk := clock.Or(c.Clock)
	prev, havePrev, err := c.get(ctx, host, clk.Now())
	if err != nil {
		return entry{}, err
	}
	if havePrev && clk.Now().Before(prev.Expires) {
		return prev, nil
	}
	res := c.fetch(ctx, host)
	if res.notSent {
		if c.Logger != nil {
			c.Logger.LogAttrs(ctx, slog.LevelWarn, "robots.txt not requested", slog.String("host", host),
				slog.String("error", res.err.Error()))
		}
		if fr, ok := c.store.(FetchReleaser); ok && c.mem == nil {
			if err := fr.ReleaseFetch(ctx, host); err != nil && c.Logger != nil {
				c.Logger.LogAttrs(ctx, slog.LevelWarn, "robots store fetch release failed", slog.String("host", host),
					slog.String("error", err.Error()))
			}
		}
		return entry{}, res.err
	}
	now := clk.Now()
	out := c.Policy.Status.Decide(res.status, res.err)
	e := entry{Record: Record{Outcome: out, Status: res.status, FetchedAt: now}}
	if res.err != nil {
		e.err, e.Failure = res.err, res.err.Error()
	}
	switch out {
	case ParseBody:
		e.Body, e.rules = res.body, Parse(res.body)
		e.Expires = now.Add(c.ttl(res.header))
	case AllowAll:
		e.Expires = now.Add(c.ttl(res.header))
	default:
		e.Expires = now.Add(c.Policy.retry())
		unreachable := res.err != nil || res.status >= 500 || res.status == 0
		if unreachable && c.Policy.OnFailure == UseLastGood && havePrev && prev.Outcome != DisallowAll {
			fail := e.Failure
			if fail == "" {
				fail = fmt.Sprintf("status %d", res.status)
			}
			e = prev
			e.Stale, e.LastFailure, e.Expires = true, fail, now.Add(c.Policy.retry())
		}
	}
	if c.Logger != nil {
		c.Logger.LogAttrs(ctx, slog.LevelInfo, "robots.txt fetched", slog.String("host", host),
			slog.Int("status", res.status), slog.String("outcome", e.Outcome.String()),
			slog.Bool("stale", e.Stale), slog.String("failure", e.Failure), slog.Time("expires", e.Expires))
	}
	if c.mem != nil {
		c.mem.put(host, e)
		return e, nil
	}
	e.recheck = c.recheckAt(now)
	c.views.put(host, e)
	if err := c.store.Put(ctx, host, e.Record); err != nil && c.Logger != nil {
		c.Logger.LogAttrs(ctx, slog.LevelWarn, "robots store put failed", slog.String("host", host), slog.String("error", err.Error()))
	}
	return e, nil
}

func (c *Cache) ttl(h http.Header) time.Duration {
	ttl := c.Policy.ttl()
	if age, ok := maxAge(h.Get("Cache-Control")); ok && age < ttl {
		ttl = age
	}
	return max(ttl, MinTTL)
}

type fetchResult struct {
	status  int
	body    []byte
	header  http.Header
	err     error
	notSent bool // err matches ErrNotSent: the request never left the process
}

var errFetchTimeout = errors.New("robots: robots.txt fetch timed out")

// fetch requests the robots.txt of a Store key (https://host/robots.txt,
// or http:// for a plain-http key), following at most MaxRedirects
// redirects, within c.Timeout measured by c.Clock. A redirect may lead from
// http to https, never from https to http.
func (c *Cache) fetch(parent context.Context, host string) fetchResult {
	ctx, stop := c.fetchContext(parent)
	defer stop()
	rt := c.Transport
	if rt == nil {
		return fetchResult{err: errors.New("robots: Cache.Transport is nil")}
	}
	f := &robotsFetch{ctx: ctx, target: robotsURL(host), secure: !strings.HasPrefix(host, httpPrefix)}
	for redirects := 0; ; redirects++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.target, nil)
		if err != nil {
			return f.fail(0, err)
		}
		if c.UserAgent != "" {
			req.Header.Set("User-Agent", c.UserAgent)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return f.sendFailed(req, err, redirects)
		}
		st := resp.StatusCode
		if loc := resp.Header.Get("Location"); redirect.Is(st) && loc != "" {
			discard(resp.Body)
			if redirects >= MaxRedirects {
				return fetchResult{status: st, header: resp.Header, err: fmt.Errorf("%w (last %s)", ErrTooManyRedirects, f.target)}
			}
			if err := f.follow(req.URL, loc); err != nil {
				return f.fail(st, err)
			}
			continue
		}
		return f.read(resp)
	}
}

// fetchContext returns the context of one fetch: parent's, cancelled with
// errFetchTimeout as its cause once c.Timeout (DefaultTimeout when unset)
// has passed on c.Clock, and the stop function that ends the timer's wait
// and cancels the context, to be called when the fetch is over.
func (c *Cache) fetchContext(parent context.Context) (context.Context, func()) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	timer := clock.Or(c.Clock).After(timeout)
	go func() {
		select {
		case <-timer:
			cancel(errFetchTimeout)
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}

// robotsFetch is one fetch of a robots.txt under way: its context (see
// fetchContext), the URL being asked, and whether the fetch has been on
// https (after which a redirect to http is refused).
type robotsFetch struct {
	ctx    context.Context
	target string
	secure bool
}

// withTimeout returns err, prefixed with errFetchTimeout when the fetch's
// timeout is what cancelled its context (both stay matchable).
func (f *robotsFetch) withTimeout(err error) error {
	if cause := context.Cause(f.ctx); cause != nil && errors.Is(cause, errFetchTimeout) {
		err = fmt.Errorf("%w (%w)", cause, err)
	}
	return err
}

// fail returns the result of a fetch that failed with err (see withTimeout)
// at the current target, after an answer of status (0: none): a *FetchError.
func (f *robotsFetch) fail(status int, err error) fetchResult {
	return fetchResult{status: status, err: &FetchError{URL: f.target, Err: f.withTimeout(err)}}
}

// sendFailed returns the result of req's RoundTrip failing with err, on
// the fetch's redirects-th redirect. A request the chain did not send
// (ErrNotSent) after a redirect is the host's answer, a *RedirectError in a
// *FetchError; one not sent at the first request is a notSent result;
// anything else is a *FetchError.
func (f *robotsFetch) sendFailed(req *http.Request, err error, redirects int) fetchResult {
	if errors.Is(err, ErrNotSent) && redirects > 0 {
		// The host answered robots.txt with a redirect to a target
		// the chain would not ask (a non-public address, an invalid
		// host): that answer is the host's, and robots.txt is
		// unreachable by it. It is recorded, and asked again after
		// RetryInterval, not at every request.
		return f.fail(0, &RedirectError{Target: req.URL.Redacted(), Cause: err.Error()})
	}
	if errors.Is(err, ErrNotSent) {
		return fetchResult{notSent: true, err: fmt.Errorf("robots: %s not requested: %w", f.target, f.withTimeout(err))}
	}
	return f.fail(0, err)
}

// follow moves the fetch to the redirect's Location loc, resolved against
// base, without its fragment. It returns loc's parse error, or one matching
// ErrInsecureRedirect for a scheme other than https, or http once the fetch
// has been on https; the fetch is then left as it was.
func (f *robotsFetch) follow(base *url.URL, loc string) error {
	next, err := base.Parse(loc)
	if err != nil {
		return err
	}
	switch {
	case next.Scheme == "https":
		f.secure = true
	case next.Scheme == "http" && !f.secure:
	default:
		return fmt.Errorf("%w: %s", ErrInsecureRedirect, next.Redacted())
	}
	next.Fragment = ""
	f.target = next.String()
	return nil
}

// read returns the result of the final answer resp: its status and header
// alone when it is not a 2xx (its body drained), else with the body read
// (see readBody), or a failure (see fail) when the read fails. It closes
// resp.Body.
func (f *robotsFetch) read(resp *http.Response) fetchResult {
	st := resp.StatusCode
	if st < 200 || st > 299 {
		discard(resp.Body)
		return fetchResult{status: st, header: resp.Header}
	}
	body, err := readBody(f.ctx, resp)
	resp.Body.Close()
	if err != nil {
		return f.fail(st, err)
	}
	return fetchResult{status: st, body: body, header: resp.Header}
}

// readBody reads at most MaxBodySize+1 bytes of a robots.txt body, within
// ctx, through the one bounded decoder of politefetch (internal/decode). The
// identity layer asks for "Accept-Encoding: identity": an uncompressed file
// longer than MaxBodySize is cut there (Parse keeps the first MaxBodySize
// bytes, RFC 9309 §2.5). A server that compresses anyway is decoded (gzip,
// deflate, br, zstd) up to the same size; more decoded bytes, a coding the
// decoder does not know, a truncated or corrupt stream are failures (a
// garbled file would parse as no rules at all: failing open).
func readBody(ctx context.Context, resp *http.Response) ([]byte, error) {
	const limit = MaxBodySize + 1
	cl := resp.ContentLength
	if cl > limit {
		cl = -1 // an oversized file is read up to the limit, not refused
	}
	b, err := decode.ReadContext(ctx, io.LimitReader(resp.Body, limit), cl, resp.Header.Values("Content-Encoding"),
		decode.Limits{MaxWire: limit, MaxDecoded: limit})
	switch {
	case err == nil:
		return b.Envelope, nil
	case errors.Is(err, decode.ErrUnknownCoding), errors.Is(err, decode.ErrTooManyCodings):
		return nil, &bodyError{ErrContentEncoding, err, decode.ErrUnknownCoding}
	case errors.Is(err, decode.ErrTruncated):
		return nil, &bodyError{ErrTruncated, err, decode.ErrTruncated}
	}
	return nil, err
}

// bodyError is a body read's failure as the package names it: kind (a
// sentinel of ours) with the details of err, the decoder's failure, whose
// own words for the same thing (said) are left out. It matches both.
type bodyError struct{ kind, err, said error }

func (e *bodyError) Error() string {
	s := e.err.Error()
	if t, ok := strings.CutPrefix(s, e.said.Error()); ok {
		s = strings.TrimLeft(t, ": ")
	} else {
		s = strings.TrimPrefix(s, "decode: ")
	}
	if s == "" {
		return e.kind.Error()
	}
	return e.kind.Error() + ": " + s
}

func (e *bodyError) Unwrap() []error { return []error{e.kind, e.err} }

// discard drains a little of a body so the connection may be reused, then
// closes it.
func discard(b io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(b, 4<<10))
	b.Close()
}
