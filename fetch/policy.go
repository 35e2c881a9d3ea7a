package fetch

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/robots"
)

// Defaults for the zero fields of a [Policy].
const (
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
	// ImageAccept asks for the four image types the strict news crawler accepts.
	ImageAccept = "image/jpeg, image/png, image/webp, image/gif"
)

// Policy is everything that decides how a [Client] behaves towards publishers. It is
// plain data: copy a preset ([StrictNews], [Digest], [Vault]), name your crawler in
// it, change fields, and hand it to [New], which copies it; changing a Policy after
// New has no effect.
//
// Each zero field has the meaning written beside it, except the identity: a preset
// is a policy, never an identity, so neither the zero Policy nor a preset is usable
// until Name, Version and InfoURL (and Contact, when RequireContact is set) say who
// is crawling. New refuses a Policy without them with an *[IdentityError].
type Policy struct {
	// Name is the product token of your crawler, the first word of the
	// User-Agent and the name robots.txt groups address, for example
	// "ExampleNewsBot". Required; no space, "/", "(" or ")".
	Name string
	// Version follows the product token, for example "1.0". Required.
	Version string
	// InfoURL is the page that explains your crawler to publishers. Required.
	InfoURL string
	// Contact (an e-mail address, or a URL) is appended after the info page when
	// set: "Name/1 (+https://info; bot@example.org)".
	Contact string
	// RequireContact makes Contact required: the digest engine and the vault
	// connector give publishers a contact address in every User-Agent.
	RequireContact bool

	// Interval is the least start-to-start interval between two requests to one
	// host (or site, see PerSite). Zero: DefaultInterval. A robots.txt Crawl-delay
	// or a ledger's demand lengthens it, never shortens it.
	Interval time.Duration
	// IntervalMax, when larger than Interval, makes each interval a uniform
	// random draw in [Interval, IntervalMax] (the digest engine's 2–5 s band). Zero: fixed.
	IntervalMax time.Duration
	// InFlight is the most requests in flight to one host at a time. Zero:
	// DefaultInFlight (one).
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

	// AllowHTTP permits plain http URLs and redirects. Zero (false): https only.
	AllowHTTP bool
	// Admitted lists the hosts a source may be read from, and redirected to:
	// exact names, or "*.example.com" for example.com and every name
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
	// [KindImage] (three for the strict news crawler).
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
	// no other. A Source's Credential replaces it.
	Credential Credential
	// NoConditional turns conditional GET off: no If-None-Match or
	// If-Modified-Since is ever sent (the vault connector sends exactly four
	// headers). Zero: conditional GET on.
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
// is never logged, and never sent after a redirect to a host outside Hosts.
type Credential struct {
	Header string   // the header's name, e.g. "Authorization"; empty: no credential
	Value  string   // the header's value; never logged
	Hosts  []string // where it may go, as in Policy.Admitted; empty: nowhere
}

// redacted is what every rendering of a Credential shows instead of its Value.
const redacted = "[redacted]"

// String hides the value, so a Credential can be printed safely, alone or in a
// Policy or a Source (%v, %+v, %s).
func (c Credential) String() string {
	if c.Header == "" {
		return "no credential"
	}
	return c.Header + ": " + redacted + " for " + strings.Join(c.Hosts, ",")
}

// GoString hides the value from %#v, alone or inside a Policy or a Source.
func (c Credential) GoString() string {
	return fmt.Sprintf("fetch.Credential{Header:%q, Value:%q, Hosts:%#v}", c.Header, c.redactedValue(), c.Hosts)
}

// MarshalJSON hides the value from encoding/json (and from slog's JSON
// handler), alone or inside a Policy or a Source.
func (c Credential) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Header string
		Value  string
		Hosts  []string
	}{c.Header, c.redactedValue(), c.Hosts})
}

// LogValue hides the value from log/slog, whatever the handler.
func (c Credential) LogValue() slog.Value {
	return slog.GroupValue(slog.String("header", c.Header), slog.String("value", c.redactedValue()),
		slog.Any("hosts", c.Hosts))
}

// redactedValue is redacted when there is a value, "" when there is none.
func (c Credential) redactedValue() string {
	if c.Value == "" {
		return ""
	}
	return redacted
}

// UserAgent returns the User-Agent the policy sends: "Name/Version (+InfoURL)", or
// "Name/Version (+InfoURL; Contact)" once a contact is configured.
func (p *Policy) UserAgent() string {
	ua := p.Name + "/" + p.Version + " (+" + p.InfoURL
	if p.Contact != "" {
		ua += "; " + p.Contact
	}
	return ua + ")"
}

// ErrNoIdentity is matched (errors.Is) by the *[IdentityError] [New] returns for
// a Policy that does not say who is crawling.
var ErrNoIdentity = errors.New("fetch: the policy does not name its crawler")

// IdentityError is a Policy whose identity is missing or cannot be sent in a
// User-Agent; it matches [ErrNoIdentity].
type IdentityError struct {
	Missing []string // the fields to set: "Name", "Version", "InfoURL", "Contact"
	Invalid []string // the fields holding characters a User-Agent cannot carry
}

// Error names the fields to set or fix.
func (e *IdentityError) Error() string {
	s := "fetch: the policy does not name its crawler"
	if len(e.Missing) > 0 {
		s += ": set " + wordList(e.Missing) + " (a preset is a policy, not an identity)"
	}
	if len(e.Invalid) > 0 {
		if len(e.Missing) > 0 {
			s += ";"
		} else {
			s += ":"
		}
		s += " " + wordList(e.Invalid) + " cannot go in a User-Agent"
	}
	return s
}

// Unwrap returns ErrNoIdentity.
func (e *IdentityError) Unwrap() error { return ErrNoIdentity }

// wordList joins words as "a", "a and b" or "a, b and c".
func wordList(w []string) string {
	if len(w) <= 1 {
		return strings.Join(w, "")
	}
	return strings.Join(w[:len(w)-1], ", ") + " and " + w[len(w)-1]
}

// ErrInvalidCredential is returned by [New] for a credential header or value
// that cannot be sent (a line break in it).
var ErrInvalidCredential = errors.New("fetch: invalid credential header")

func (p *Policy) validate() error {
	var e IdentityError
	for _, f := range []struct {
		name, value, bad string
		required         bool
	}{
		{"Name", p.Name, " /()\r\n\t", true},
		{"Version", p.Version, " /()\r\n\t", true},
		{"InfoURL", p.InfoURL, " ()\r\n\t", true},
		{"Contact", p.Contact, "()\r\n", p.RequireContact},
	} {
		switch {
		case f.value == "" && f.required:
			e.Missing = append(e.Missing, f.name)
		case strings.ContainsAny(f.value, f.bad):
			e.Invalid = append(e.Invalid, f.name)
		}
	}
	if e.Missing != nil || e.Invalid != nil {
		return &e
	}
	if p.Credential.Header != "" && strings.ContainsAny(p.Credential.Header+p.Credential.Value, "\r\n") {
		return ErrInvalidCredential
	}
	return nil
}

// withDefaults returns a copy of p with every zero field replaced by its default.
func (p Policy) withDefaults() Policy {
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

// StrictNews returns the strict news crawler's policy (spec 000), with no
// identity: set Name, Version and InfoURL (and Contact, which the document adds to
// the User-Agent once set) before [New] accepts it. At most one request per second
// per site; robots.txt per RFC 9309 with 401, 403, 429 and an unreachable
// file disallowing the whole site, cached for one hour; refusals 401, 403,
// 429 and challenge pages backing off 5 min doubling to 6 h, suspended after 5 in
// a row and re-checked daily; images with at most three redirects;
// https only. Each call returns a fresh value.
func StrictNews() Policy {
	return Policy{
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

// Digest returns the digest engine's policy (spec 001), with no identity: set
// Name, Version, InfoURL and Contact (an e-mail address) before [New]
// accepts it. One request every 2 to 5 s per host, one connection per host;
// robots.txt per RFC 9309, cached 24 h; 429 and 503 cooling the host down
// 30–60 min with jitter, never retrying a 429 within 15 min; conditional
// GET. Each call returns a fresh value.
func Digest() Policy {
	return Policy{
		RequireContact: true,
		Interval:       2 * time.Second,
		IntervalMax:    5 * time.Second,
		InFlight:       1,
		Robots:         RobotsPolicy{Status: robots.RFC9309, TTL: 24 * time.Hour, Retry: DefaultRobotsRetry},
		Backoff:        backoff.Digest(),
		MaxRedirects:   DefaultMaxRedirects,
		Accept:         DefaultAccept,
	}
}

// Vault returns the vault connector's policy (spec 003), with no identity: set
// Name, Version, InfoURL and Contact (the connector gives a contact address in
// every request) before [New] accepts it. Exactly four headers and no
// conditional GET; at most one request per second per host, or the
// Crawl-delay; robots.txt 4xx treated as absent, 5xx or unreachable
// disallowing everything and retried after 15 min, cached 24 h; every
// non-200 recorded without a back-off of the ledger's own, though a refusal's
// Retry-After is honoured exactly (never rude); https only, admitted hosts
// and declared parameters per source, a redirect limit. Each call returns
// a fresh value.
func Vault() Policy {
	return Policy{
		RequireContact: true,
		Interval:       time.Second,
		InFlight:       1,
		Robots:         RobotsPolicy{Status: robots.RFC9309, TTL: 24 * time.Hour, Retry: 15 * time.Minute},
		Backoff:        backoff.Vault(),
		MaxRedirects:   DefaultMaxRedirects,
		Accept:         DefaultAccept,
		NoConditional:  true,
	}
}
