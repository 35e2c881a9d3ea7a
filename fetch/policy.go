package fetch

import (
	"fmt"
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
	DefaultRobotsTTL    = robots.DefaultTTL
	DefaultRobotsRetry  = robots.DefaultRetryInterval
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

	// Robots is the robots.txt policy, handed to the Client's robots.txt
	// cache as it is: its status rules, TTL, retry interval and failure mode.
	// Its zero value follows RFC 9309 with DefaultRobotsTTL and
	// DefaultRobotsRetry.
	Robots robots.Policy
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
	// Nil: the common tracking parameters (utm_*, fbclid, gclid, mc_cid,
	// session ids and the like). An empty non-nil slice strips nothing.
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
	// NoCredential refuses every credential: [New] refuses a Policy whose
	// Credential is set, [Policy.CheckCredential] any Credential, and a Get
	// whose Source carries one is refused before anything is sent (the
	// strict news crawler sends none). Zero: a credential may be configured.
	NoCredential bool

	// What a crawler built over the Client keeps and checks. The Client
	// itself reads neither; package crawl does, so that behaviour that
	// differs between presets is read from the policy, never from its name.

	// KeepExcerpts lets the crawler keep what a feed says of an article
	// (its headline and description) as an excerpt. Zero: only the
	// article's reference is kept (the vault connector keeps nothing of a
	// feed).
	KeepExcerpts bool
	// CheckShareImages makes the crawler download a story's share image
	// once, as [KindImage], to check that it suits the story. Zero: share
	// images are not fetched.
	CheckShareImages bool
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
	return p.CheckCredential(p.Credential)
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
	if p.Robots.RetryInterval <= 0 {
		p.Robots.RetryInterval = DefaultRobotsRetry
	}
	if p.Tracking == nil {
		p.Tracking = defaultTracking()
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
// per site (a registrable domain: a.example.com and b.example.com share one
// budget); robots.txt by [robots.StrictNews]; refusals by [backoff.StrictNews];
// images with at most three redirects; no credential; excerpts kept and share
// images checked; https only. Each call returns a fresh value.
func StrictNews() Policy {
	return Policy{
		Interval:          time.Second,
		InFlight:          1,
		PerSite:           true,
		Robots:            robots.StrictNews(),
		Backoff:           backoff.StrictNews(),
		MaxRedirects:      DefaultMaxRedirects,
		ImageMaxRedirects: 3,
		Accept:            DefaultAccept,
		NoCredential:      true,
		KeepExcerpts:      true,
		CheckShareImages:  true,
	}
}

// Digest returns the digest engine's policy (spec 001), with no identity: set
// Name, Version, InfoURL and Contact (an e-mail address) before [New]
// accepts it. One request every 2 to 5 s per host ("per domain" in the
// document: the host a URL names, so two hosts of one registrable domain
// are paced apart), one connection per host; robots.txt by
// [robots.Digest]; refusals by [backoff.Digest]; conditional GET; excerpts
// kept. Each call returns a fresh value.
func Digest() Policy {
	return Policy{
		RequireContact: true,
		Interval:       2 * time.Second,
		IntervalMax:    5 * time.Second,
		InFlight:       1,
		Robots:         robots.Digest(),
		Backoff:        backoff.Digest(),
		MaxRedirects:   DefaultMaxRedirects,
		Accept:         DefaultAccept,
		KeepExcerpts:   true,
	}
}

// Vault returns the vault connector's policy (spec 003), with no identity: set
// Name, Version, InfoURL and Contact (the connector gives a contact address in
// every request) before [New] accepts it. Exactly four headers and no
// conditional GET; at most one request per second per host, or the
// Crawl-delay; robots.txt by [robots.Vault]; refusals by [backoff.Vault];
// https only, admitted hosts and declared parameters per source, a
// redirect limit; nothing of a feed kept but its references. Each call
// returns a fresh value.
func Vault() Policy {
	return Policy{
		RequireContact: true,
		Interval:       time.Second,
		InFlight:       1,
		Robots:         robots.Vault(),
		Backoff:        backoff.Vault(),
		MaxRedirects:   DefaultMaxRedirects,
		Accept:         DefaultAccept,
		NoConditional:  true,
	}
}

// Overrides are an operator's changes to a policy (a source's, a
// configuration's). Each zero field keeps the policy's value; each set field
// may only make the policy more polite, which [Policy.Tighten] checks.
type Overrides struct {
	// Interval lengthens the policy's Interval (and its IntervalMax, which
	// is never below it).
	Interval time.Duration
	// IntervalMax widens the interval band's top: at least the Interval
	// and the IntervalMax (after Interval is applied).
	IntervalMax time.Duration
	// RobotsTTL shortens how long a robots.txt copy is used: from
	// robots.MinTTL to the policy's Robots.TTL.
	RobotsTTL time.Duration
	// RobotsRetry lengthens the wait before a failed robots.txt is fetched
	// again: at least the policy's Robots.RetryInterval.
	RobotsRetry time.Duration
	// MaxRedirects lowers the redirect limit: from 1 to the policy's; the
	// image limit follows it down.
	MaxRedirects int
	// Timeout bounds one Get: from 1 s to the policy's Timeout.
	Timeout time.Duration
	// MaxWire lowers the cap on a body's bytes on the wire: from 1024
	// to the policy's MaxWire.
	MaxWire int64
}

// The least values an [Overrides] may set: below them a Get could not read
// an ordinary answer, and would ask again.
const (
	minTimeout = time.Second
	minMaxWire = 1024
)

// OverrideError is an override [Policy.Tighten] refuses: the [Overrides]
// field at fault ("Interval", "RobotsTTL", …), and why. It matches
// [ErrLessPolite].
type OverrideError struct {
	Field  string
	Reason string
}

// Error names the field and says why.
func (e *OverrideError) Error() string {
	return "fetch: override " + e.Field + " refused: " + e.Reason
}

// Is matches ErrLessPolite.
func (e *OverrideError) Is(target error) bool { return target == ErrLessPolite }

// Tighten returns p with o applied, or an *[OverrideError] naming the first
// field of o that would make p less polite (a shorter interval, a
// robots.txt copy kept longer or retried sooner, more redirects, a longer
// Get or a larger body) or that lies outside its documented range. It is the
// one place an override is judged: crawl's sources and the command line's
// configuration both apply theirs through it. p's zero fields are read as
// their defaults.
func (p Policy) Tighten(o Overrides) (Policy, error) {
	orig, r := p, p.withDefaults()
	refuse := func(field, format string, args ...any) (Policy, error) {
		return orig, &OverrideError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if d := o.Interval; d != 0 {
		if d < r.Interval {
			return refuse("Interval", "%v is shorter than the policy's %v", d, r.Interval)
		}
		p.Interval, r.Interval = d, d
		if p.IntervalMax != 0 && p.IntervalMax < d {
			p.IntervalMax = d
		}
		r.IntervalMax = max(r.IntervalMax, d)
	}
	if d := o.IntervalMax; d != 0 {
		if d < r.IntervalMax {
			return refuse("IntervalMax", "%v is below the interval band's %v", d, r.IntervalMax)
		}
		p.IntervalMax = d
	}
	if d := o.RobotsTTL; d != 0 {
		if d > r.Robots.TTL || d < robots.MinTTL {
			return refuse("RobotsTTL", "%v: from %v to the policy's %v", d, robots.MinTTL, r.Robots.TTL)
		}
		p.Robots.TTL = d
	}
	if d := o.RobotsRetry; d != 0 {
		if d < r.Robots.RetryInterval {
			return refuse("RobotsRetry", "%v is shorter than the policy's %v", d, r.Robots.RetryInterval)
		}
		p.Robots.RetryInterval = d
	}
	if n := o.MaxRedirects; n != 0 {
		if n < 0 || (r.MaxRedirects > 0 && n > r.MaxRedirects) || r.MaxRedirects < 0 {
			return refuse("MaxRedirects", "%d: from 1 to the policy's %d", n, max(r.MaxRedirects, 0))
		}
		p.MaxRedirects = n
		if p.ImageMaxRedirects > n {
			p.ImageMaxRedirects = n
		}
	}
	if d := o.Timeout; d != 0 {
		if d < minTimeout || d > r.Timeout {
			return refuse("Timeout", "%v: from %v to the policy's %v", d, minTimeout, r.Timeout)
		}
		p.Timeout = d
	}
	if n := o.MaxWire; n != 0 {
		if n < minMaxWire || n > r.MaxWire {
			return refuse("MaxWire", "%d: from %d to the policy's %d", n, minMaxWire, r.MaxWire)
		}
		p.MaxWire = n
	}
	return p, nil
}
