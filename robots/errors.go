package robots

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// ErrDisallowed is matched (with [errors.Is]) by every refusal of
// [Cache.Allow]: a rule, or a robots.txt fetch whose outcome disallows the
// whole site.
var ErrDisallowed = errors.New("robots: disallowed by robots.txt")

// ErrNotHTTPS is returned by [Cache.Allow] for a URL whose scheme the
// Cache does not read: anything but https, or but https and http when
// Cache.AllowHTTP is set.
var ErrNotHTTPS = errors.New("robots: not an https URL")

// ErrNotSent is matched (with [errors.Is]) by a Cache.Transport's error when
// the robots.txt request never left the process: a layer of ours refused to
// send it, its pacing slot or shared schedule could not be had, its wait for
// the host's turn ran out. Such a failure is ours, not the publisher's, so
// the Cache records nothing for it (a record would be shared with every
// worker for the retry interval): the request that needed robots.txt gets an
// error matching ErrNotSent and the Transport's error (never [ErrDisallowed]:
// robots.txt said nothing), and the next one asks again. A Transport that
// cannot tell leaves its errors unmarked, and they are network failures.
var ErrNotSent = errors.New("robots: robots.txt request not sent")

// StoreError is the failure of a [Cache] whose Store could not be read for
// a host: the Cache neither answers from what it last knew nor fetches
// robots.txt (a failing Store is not a host without a record), so the
// request that needed robots.txt is refused and nothing is sent. It matches
// [ErrNotSent] and the Store's error (errors.Is / errors.As see both); the
// next request asks the Store again.
type StoreError struct {
	// Host is the Store key whose record could not be read.
	Host string
	// Err is the Store's error.
	Err error
}

// Error says which host's record could not be read, and why.
func (e *StoreError) Error() string {
	return "robots: robots.txt record of " + e.Host + " unreadable, so nothing was sent: " + e.Err.Error()
}

// Unwrap returns ErrNotSent and Err.
func (e *StoreError) Unwrap() []error { return []error{ErrNotSent, e.Err} }

// ErrInsecureRedirect is the network failure recorded when an https
// robots.txt redirects to a URL that is not https (or any robots.txt to a
// scheme other than http and https).
var ErrInsecureRedirect = errors.New("robots: robots.txt redirected to a non-https URL")

// ErrRedirectNotRequested is matched by the *[RedirectError] recorded when
// robots.txt redirects to a URL the Transport would not request.
var ErrRedirectNotRequested = errors.New("robots: robots.txt redirected to a URL that is not requested")

// RedirectError is the failure recorded when robots.txt redirects to a URL
// that the Transport refuses to request (its error matched [ErrNotSent]: a
// non-public address, a host that is not valid): the host's robots.txt is
// unreachable through that redirect, which RFC 9309 reads as disallowing
// the site, until RetryInterval has passed. It keeps the Transport's error
// as text only, so that the refusal is not read as a request of ours that
// was not sent. It matches [ErrRedirectNotRequested].
type RedirectError struct {
	Target string // the redirect's target, redacted
	Cause  string // why the Transport did not request it
}

// Error names the target and why it was not requested.
func (e *RedirectError) Error() string {
	return "robots: robots.txt redirected to " + e.Target + ", which is not requested: " + e.Cause
}

// Is matches ErrRedirectNotRequested.
func (e *RedirectError) Is(target error) bool { return target == ErrRedirectNotRequested }

// ErrTruncated is the network failure recorded when a robots.txt body ends
// before its declared length.
var ErrTruncated = errors.New("robots: robots.txt body truncated")

// ErrContentEncoding is the failure recorded when a robots.txt body comes
// in a content-coding other than gzip or deflate.
var ErrContentEncoding = errors.New("robots: unsupported content-coding for robots.txt")

// DisallowedError is the refusal [Cache.Allow] returns. It matches
// [ErrDisallowed] and, when the refusal comes from a failed fetch, that
// failure too (errors.Is / errors.As see both).
type DisallowedError struct {
	// Host is the normalised host whose robots.txt refused.
	Host string
	// URL is the refused URL.
	URL string
	// Outcome is DisallowAll when the robots.txt fetch disallowed the whole
	// site (a status or a failure, see Status and Err), ParseBody when a rule
	// of the file did (see Rule and Group).
	Outcome Outcome
	// Status is the HTTP status of the robots.txt fetch, 0 when none arrived.
	Status int
	// Group and Rule name the group that applied and the rule that decided,
	// as in [Decision]; empty for a site-wide refusal.
	Group, Rule string
	// Line is the 1-based line of Rule in robots.txt; 0 for a site-wide
	// refusal.
	Line int
	// RetryAt is when robots.txt will next be fetched: the refusal may
	// change then, not before.
	RetryAt time.Time
	// Err is the fetch failure behind a site-wide refusal, nil otherwise.
	Err error
}

// Error says once what was refused, by which rule or which robots.txt
// answer, and until when the answer stands.
func (e *DisallowedError) Error() string {
	var b strings.Builder
	b.WriteString("robots: ")
	b.WriteString(e.URL)
	b.WriteString(" disallowed by robots.txt")
	switch {
	case e.Rule != "":
		b.WriteString(": \"")
		b.WriteString(e.Rule)
		b.WriteString("\"")
		if e.Line > 0 {
			b.WriteString(" (line ")
			b.WriteString(strconv.Itoa(e.Line))
			b.WriteString(")")
		}
		b.WriteString(" in group ")
		b.WriteString(strconv.Quote(e.Group))
	case e.Err != nil:
		if e.Status != 0 {
			// The answer began, then failed: a truncated body.
			b.WriteString(": robots.txt answered ")
			b.WriteString(strconv.Itoa(e.Status))
			b.WriteString(", then failed: ")
		} else {
			b.WriteString(": robots.txt unreachable: ")
		}
		cause := e.Err.Error()
		var fe *FetchError
		if errors.As(e.Err, &fe) {
			cause = fe.cause()
		}
		b.WriteString(strings.TrimPrefix(cause, "robots: "))
	case e.Status != 0:
		b.WriteString(": robots.txt answered ")
		b.WriteString(strconv.Itoa(e.Status))
	default:
		b.WriteString(": ")
		b.WriteString(e.Outcome.String())
	}
	if !e.RetryAt.IsZero() {
		b.WriteString(", until robots.txt is read again at ")
		b.WriteString(e.RetryAt.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// Unwrap returns ErrDisallowed and, when set, Err.
func (e *DisallowedError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrDisallowed, e.Err}
	}
	return []error{ErrDisallowed}
}

// FetchError is the network failure of a robots.txt fetch, kept in
// the Cache's view of a [Record] and reported in a [DisallowedError]'s Err.
type FetchError struct {
	// URL is the robots.txt URL requested when the failure happened (after
	// redirects).
	URL string
	// Err is the underlying failure; it may be nil when the error was read
	// back from a Store that keeps only its text.
	Err error
	// Text is Err's message, kept for stores that cannot hold an error.
	Text string
}

// Error describes the failure.
func (e *FetchError) Error() string {
	return "robots: fetch " + e.URL + ": " + e.cause()
}

// cause is the failure's text without the package prefix.
func (e *FetchError) cause() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Text
}

// Unwrap returns Err.
func (e *FetchError) Unwrap() error { return e.Err }
