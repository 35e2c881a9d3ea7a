package fetch

import (
	"errors"
	"strings"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/robots"
)

// Defaults for the zero fields of a [Policy].
const (
	DefaultVersion      = "1"
	DefaultInterval     = time.Second
	DefaultInFlight     = 1
	DefaultMaxRedirects = 5
	DefaultTimeout      = 60 * time.Second
	DefaultFirstByte    = 20 * time.Second
	DefaultMaxWire      = 16 << 20 // 16 MiB on the wire
	DefaultMaxDecoded   = 32 << 20 // 32 MiB after removing content-codings
	DefaultRobotsTTL    = 24 * time.Hour
	DefaultRobotsRetry  = 15 * time.Minute
	// DefaultAccept asks for feeds, pages and API documents, in that order.
	DefaultAccept = "application/rss+xml, application/atom+xml, application/feed+json, application/xml;q=0.9, application/json;q=0.9, text/html;q=0.8, */*;q=0.5"
	// ImageAccept asks for the four image types the strict news crawler accepts (S7).
	ImageAccept = "image/jpeg, image/png, image/webp, image/gif"
)

// Policy is everything that decides how a [Client] behaves towards publishers. It is
// plain data: copy a preset ([StrictNews], [Digest], [Vault]), change fields, and hand
// it to [New], which copies it; changing a Policy after New has no effect.
//
// Each zero field has the meaning written beside it. The zero Policy is not usable on
// its own: New requires Name and InfoURL, because an anonymous crawler is not polite.
type Policy struct {
	// Name is the product token, the first word of the User-Agent and the name
	// robots.txt groups address (S1), for example "ARCEL-DailyDose-Bot". Required.
	Name string
	// Version follows the product token. Empty: DefaultVersion.
	Version string
	// InfoURL is the page that explains the crawler to publishers. Required.
	InfoURL string
	// Contact (an e-mail address, or a URL) is appended after the info page when
	// set: "Name/1 (+https://info; bot@example.org)" (S1, D3).
	Contact string

	// Interval is the least start-to-start interval between two requests to one
	// host (or site, see PerSite). Zero: DefaultInterval. A robots.txt Crawl-delay
	// or a ledger's demand lengthens it, never shortens it (V7).
	Interval time.Duration
	// IntervalMax, when larger than Interval, makes each interval a uniform
	// random draw in [Interval, IntervalMax] (D2's 2–5 s band). Zero: fixed.
	IntervalMax time.Duration
	// InFlight is the most requests in flight to one host at a time. Zero:
	// DefaultInFlight (one, D2).
	InFlight int
	// PerSite keys pacing and the ledger by registrable domain (eTLD+1) instead
	// of by host, so a.example.com and b.example.com share one budget.
	PerSite bool

	// Robots is the robots.txt policy. Its zero value follows RFC 9309 with
	// DefaultRobotsTTL and DefaultRobotsRetry.
	Robots RobotsPolicy
	// Backoff is the refusal ledger's policy. Its zero value is backoff's
	// strict news crawler preset, the most polite.
	Backoff backoff.Policy

	// AllowHTTP permits plain http URLs and redirects. Zero (false): https only (V10).
	AllowHTTP bool
	// Admitted lists the hosts a source may be read from, and redirected to
	// (V10): exact names, or "*.example.com" for example.com and every name
	// below it. Empty: any host (the robots, ledger and address checks still
	// apply). A [Source] given to [Client.Get] replaces it for that call.
	Admitted []string
	// Params lists the query parameters a source declares necessary: they are
	// never stripped, and a redirect may add them. A Source replaces it.
	Params []string
	// Tracking lists the query parameters stripped from every URL before it is
	// requested, each a name or a "prefix*", compared without regard to case.
	// Nil: [DefaultTracking]. An empty non-nil slice strips nothing.
	Tracking []string

	// MaxRedirects is the most redirects followed for one Get. Zero:
	// DefaultMaxRedirects; negative: none at all.
	MaxRedirects int
	// ImageMaxRedirects, when non-zero, replaces MaxRedirects for Gets of
	// [KindImage] (three for the strict news crawler, S7).
	ImageMaxRedirects int

	// Timeout bounds one Get from the first wait to the last byte, redirects
	// included. Zero: DefaultTimeout.
	Timeout time.Duration
	// FirstByte bounds the wait for a response's headers once the request is
	// written. Zero: DefaultFirstByte.
	FirstByte time.Duration
	// MaxWire caps the bytes read from the wire for one body. Zero: DefaultMaxWire.
	MaxWire int64
	// MaxDecoded caps the body after its content-codings are removed. Zero:
	// DefaultMaxDecoded.
	MaxDecoded int64

	// Accept is the Accept header. Empty: DefaultAccept.
	Accept string
	// Credential, when its Header is set, is sent to the hosts it names and to
	// no other (V9, V9b). A Source's Credential replaces it.
	Credential Credential
	// NoConditional turns conditional GET off: no If-None-Match or
	// If-Modified-Since is ever sent (the vault connector sends exactly four
	// headers, V9). Zero: conditional GET on (D4).
	NoConditional bool
}

// RobotsPolicy says how robots.txt is read and cached.
type RobotsPolicy struct {
	// Status maps a robots.txt answer to allow all, disallow all or parse. Zero:
	// robots.RFC9309.
	Status robots.StatusPolicy
	// TTL is how long a robots.txt copy is used. Zero: DefaultRobotsTTL.
	TTL time.Duration
	// Retry is the least wait before fetching a robots.txt that failed again.
	// Zero: DefaultRobotsRetry.
	Retry time.Duration
	// OnFailure says what an unreachable robots.txt (5xx or a network
	// failure) does after a good copy was read: robots.UseLastGood keeps
	// obeying that copy, as RFC 9309 §2.4 allows, retrying every Retry. Zero
	// (robots.FailDisallowAll): the site is disallowed until a fetch succeeds.
	OnFailure robots.FailureMode
}

// Credential is one request header carrying a secret, sent only to Hosts. Its value
// is never logged, and never sent after a redirect to a host outside Hosts (V9b).
type Credential struct {
	Header string   // the header's name, e.g. "Authorization"; empty: no credential
	Value  string   // the header's value; never logged
	Hosts  []string // where it may go, as in Policy.Admitted; empty: nowhere
}

// String hides the value, so a Credential can be printed or logged safely.
func (c Credential) String() string {
	if c.Header == "" {
		return "no credential"
	}
	return c.Header + ": [redacted] for " + strings.Join(c.Hosts, ",")
}

// UserAgent returns the User-Agent the policy sends: "Name/Version (+InfoURL)", or
// "Name/Version (+InfoURL; Contact)" once a contact is configured (S1, D3).
func (p *Policy) UserAgent() string {
	v := p.Version
	if v == "" {
		v = DefaultVersion
	}
	ua := p.Name + "/" + v + " (+" + p.InfoURL
	if p.Contact != "" {
		ua += "; " + p.Contact
	}
	return ua + ")"
}

// ErrNoIdentity is returned by [New] for a Policy without a Name or an InfoURL.
var ErrNoIdentity = errors.New("fetch: policy needs a product name and an info page")

func (p *Policy) validate() error {
	if p.Name == "" || p.InfoURL == "" || strings.ContainsAny(p.Name, " /()\r\n") ||
		strings.ContainsAny(p.InfoURL+p.Contact+p.Version, "\r\n()") {
		return ErrNoIdentity
	}
	if p.Credential.Header != "" && strings.ContainsAny(p.Credential.Header+p.Credential.Value, "\r\n") {
		return errors.New("fetch: invalid credential header")
	}
	return nil
}

// withDefaults returns a copy of p with every zero field replaced by its default.
func (p Policy) withDefaults() Policy {
	if p.Version == "" {
		p.Version = DefaultVersion
	}
	if p.Interval <= 0 {
		p.Interval = DefaultInterval
	}
	if p.IntervalMax < p.Interval {
		p.IntervalMax = p.Interval
	}
	if p.InFlight <= 0 {
		p.InFlight = DefaultInFlight
	}
	if p.Robots.TTL <= 0 {
		p.Robots.TTL = DefaultRobotsTTL
	}
	if p.Robots.Retry <= 0 {
		p.Robots.Retry = DefaultRobotsRetry
	}
	if p.Tracking == nil {
		p.Tracking = DefaultTracking()
	}
	if p.MaxRedirects == 0 {
		p.MaxRedirects = DefaultMaxRedirects
	}
	if p.Timeout <= 0 {
		p.Timeout = DefaultTimeout
	}
	if p.FirstByte <= 0 {
		p.FirstByte = DefaultFirstByte
	}
	if p.MaxWire <= 0 {
		p.MaxWire = DefaultMaxWire
	}
	if p.MaxDecoded <= 0 {
		p.MaxDecoded = DefaultMaxDecoded
	}
	if p.Accept == "" {
		p.Accept = DefaultAccept
	}
	p.Admitted = normalizeList(p.Admitted)
	p.Credential.Hosts = normalizeList(p.Credential.Hosts)
	return p
}

// StrictNews returns the strict news crawler's policy (spec 000): identity
// "ARCEL-DailyDose-Bot/<version> (+<info page>)", plus "; <contact>" once set (S1) —
// the document names no address, so set InfoURL to your crawler page; at most one
// request per second per site (S2); robots.txt per RFC 9309 with 401, 403, 429 and
// an unreachable file disallowing the whole site, cached for one hour (S3);
// refusals 401, 403, 429 and challenge pages backing off 5 min doubling to 6 h,
// suspended after 5 in a row and re-checked daily (S4); images with at most three
// redirects (S7); https only. Each call returns a fresh value.
func StrictNews() Policy {
	return Policy{
		Name:              "ARCEL-DailyDose-Bot",
		Version:           "1",
		Interval:          time.Second,
		InFlight:          1,
		PerSite:           true,
		Robots:            RobotsPolicy{Status: robots.Strict, TTL: time.Hour, Retry: DefaultRobotsRetry},
		Backoff:           backoff.StrictNews(),
		MaxRedirects:      DefaultMaxRedirects,
		ImageMaxRedirects: 3,
		Accept:            DefaultAccept,
	}
}

// Digest returns the digest engine's policy (spec 001): identity
// "NewsElsBot/1.0 (+https://news.elsastry.com/bot; bot@news.elsastry.com)" (D3);
// one request every 2 to 5 s per host, one connection per host (D2); robots.txt per
// RFC 9309, cached 24 h (D1); 429 and 503 cooling the host down 30–60 min with
// jitter, never retrying a 429 within 15 min (D5); conditional GET (D4). Each call
// returns a fresh value.
func Digest() Policy {
	return Policy{
		Name:         "NewsElsBot",
		Version:      "1.0",
		InfoURL:      "https://news.elsastry.com/bot",
		Contact:      "bot@news.elsastry.com",
		Interval:     2 * time.Second,
		IntervalMax:  5 * time.Second,
		InFlight:     1,
		Robots:       RobotsPolicy{Status: robots.RFC9309, TTL: 24 * time.Hour, Retry: DefaultRobotsRetry},
		Backoff:      backoff.Digest(),
		MaxRedirects: DefaultMaxRedirects,
		Accept:       DefaultAccept,
	}
}

// Vault returns the vault connector's policy (spec 003): identity
// "EigerVaultTrialConnector/1 (+https://eigervault.ch; contact@eigervault.ch)";
// exactly four headers and no conditional GET (V9); at most one request per second
// per host, or the Crawl-delay (V7); robots.txt 4xx treated as absent, 5xx or
// unreachable disallowing everything and retried after 15 min, cached 24 h (V11);
// every non-200 recorded without a back-off of the ledger's own, though a refusal's
// Retry-After is honoured exactly (V12, never rude); https only,
// admitted hosts and declared parameters per source, a redirect limit (V10). Each
// call returns a fresh value.
func Vault() Policy {
	return Policy{
		Name:          "EigerVaultTrialConnector",
		Version:       "1",
		InfoURL:       "https://eigervault.ch",
		Contact:       "contact@eigervault.ch",
		Interval:      time.Second,
		InFlight:      1,
		Robots:        RobotsPolicy{Status: robots.RFC9309, TTL: 24 * time.Hour, Retry: 15 * time.Minute},
		Backoff:       backoff.Vault(),
		MaxRedirects:  DefaultMaxRedirects,
		Accept:        DefaultAccept,
		NoConditional: true,
	}
}
