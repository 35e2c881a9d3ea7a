package robots

import (
	"errors"
	"strconv"
)

// Outcome is what a robots.txt fetch means for a whole site.
type Outcome uint8

const (
	// ParseBody means the file was served: parse it and obey its rules.
	ParseBody Outcome = iota
	// AllowAll means the file is treated as absent: every path may be fetched.
	AllowAll
	// DisallowAll means nothing on the site may be fetched.
	DisallowAll
)

// String returns "parse-body", "allow-all" or "disallow-all".
func (o Outcome) String() string {
	switch o {
	case ParseBody:
		return "parse-body"
	case AllowAll:
		return "allow-all"
	case DisallowAll:
		return "disallow-all"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// StatusPolicy maps the result of a robots.txt fetch to an [Outcome]. It is a
// set of flags; the zero value is [RFC9309]. StatusPolicy values are
// constants, comparable and safe to share.
type StatusPolicy uint32

// Flags that make a StatusPolicy stricter than RFC 9309.
const (
	// Disallow401 treats a 401 answer as "disallow all" (RFC: allow all).
	Disallow401 StatusPolicy = 1 << iota
	// Disallow403 treats a 403 answer as "disallow all" (RFC: allow all).
	Disallow403
	// Disallow429 treats a 429 answer as "disallow all" (RFC: allow all).
	Disallow429
	// DisallowTooManyRedirects treats a chain of more than [MaxRedirects]
	// redirects as "disallow all" (RFC 9309 §2.3.1.2: the crawler MAY treat
	// the file as unavailable, that is allow all).
	DisallowTooManyRedirects
)

// The presets.
const (
	// RFC9309 follows RFC 9309 §2.3.1: 2xx → parse, 4xx → allow all (the
	// file is "unavailable"), 5xx and network failures → disallow all
	// ("unreachable"), more than five redirects → allow all.
	RFC9309 StatusPolicy = 0
	// Google is RFC9309 except that 429 disallows all, as Google documents
	// ("429 is treated as a server error").
	Google = Disallow429
	// Strict is RFC9309 plus 401, 403 and 429 → disallow all: the strict
	// news crawler's policy.
	Strict = Disallow401 | Disallow403 | Disallow429
)

// ErrTooManyRedirects reports a robots.txt redirect chain longer than
// [MaxRedirects]. [StatusPolicy.Decide] treats it as the RFC's "unavailable".
var ErrTooManyRedirects = errors.New("robots: more than 5 redirects for robots.txt")

// Decide returns the outcome of a robots.txt fetch that ended with status
// (the final response's status code, 0 when there was none) and err (a
// network failure: DNS, connect, TLS, timeout or a truncated body; nil when
// the response arrived in full).
//
// Any error other than [ErrTooManyRedirects] is a network failure and
// disallows all (RFC 9309 §2.3.1.4). 2xx parses the body; 4xx (and a 3xx
// that could not be followed, treated as Google treats it: as a 404) allows
// all unless a flag says otherwise; 5xx and anything else disallows all.
func (p StatusPolicy) Decide(status int, err error) Outcome {
	if err != nil {
		if errors.Is(err, ErrTooManyRedirects) {
			if p&DisallowTooManyRedirects != 0 {
				return DisallowAll
			}
			return AllowAll
		}
		return DisallowAll
	}
	switch {
	case status >= 200 && status <= 299:
		return ParseBody
	case status >= 300 && status <= 399:
		return AllowAll
	case status == 401 && p&Disallow401 != 0,
		status == 403 && p&Disallow403 != 0,
		status == 429 && p&Disallow429 != 0:
		return DisallowAll
	case status >= 400 && status <= 499:
		return AllowAll
	}
	return DisallowAll
}

// String names the preset, or lists the flags.
func (p StatusPolicy) String() string {
	switch p {
	case RFC9309:
		return "rfc9309"
	case Google:
		return "google"
	case Strict:
		return "strict"
	}
	s := ""
	for _, f := range []struct {
		f StatusPolicy
		n string
	}{{Disallow401, "401"}, {Disallow403, "403"}, {Disallow429, "429"}, {DisallowTooManyRedirects, "redirects"}} {
		if p&f.f != 0 {
			if s != "" {
				s += "+"
			}
			s += "disallow-" + f.n
		}
	}
	return s
}
