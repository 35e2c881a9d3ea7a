package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/internal/hostkey"
	"github.com/politefetch/politefetch/internal/netguard"
	"github.com/politefetch/politefetch/robots"
)

// Reason says why the chain refused a request before (or instead of) sending it.
type Reason int

// The reasons for a refusal we make ourselves. The zero Reason is not used.
const (
	Robots           Reason = iota + 1 // robots.txt forbids the URL (or the whole site)
	Cooldown                           // the host is cooling down after a refusal
	Suspended                          // the host is suspended for this kind of request
	BlockedAddr                        // the host resolves to, or connects to, a non-public address
	NotHTTPS                           // the URL's (or a redirect's) scheme is not one the policy allows: https, and http with AllowHTTP
	HostNotAdmitted                    // the host is not admitted for the source
	UndeclaredParam                    // a redirect added a query parameter the source did not declare
	TooManyRedirects                   // the redirect limit was reached
	InvalidHost                        // the host is not a valid name or a canonical IP literal (2130706433, 127.1, 0x7f.1)
)

var reasonNames = [...]string{
	Robots:           "robots",
	Cooldown:         "cool-down",
	Suspended:        "suspended",
	BlockedAddr:      "blocked address",
	NotHTTPS:         "scheme not allowed",
	HostNotAdmitted:  "host not admitted",
	UndeclaredParam:  "undeclared parameter",
	TooManyRedirects: "too many redirects",
	InvalidHost:      "invalid host",
}

// String returns the reason in words, for example "cool-down".
func (r Reason) String() string {
	if r > 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", int(r))
}

// Sentinels matching each [Reason] with [errors.Is]: errors.Is(err, fetch.ErrCooldown)
// holds for every *RefusedError whose Reason is Cooldown.
var (
	ErrRobots           = errors.New("fetch: disallowed by robots.txt")
	ErrCooldown         = errors.New("fetch: host is cooling down")
	ErrSuspended        = errors.New("fetch: host is suspended")
	ErrBlockedAddr      = errors.New("fetch: address is not public")
	ErrNotHTTPS         = errors.New("fetch: scheme not allowed")
	ErrHostNotAdmitted  = errors.New("fetch: host not admitted for the source")
	ErrUndeclaredParam  = errors.New("fetch: redirect adds an undeclared query parameter")
	ErrTooManyRedirects = errors.New("fetch: too many redirects")
	ErrInvalidHost      = errors.New("fetch: invalid host")

	// ErrRobotsUnreachable is matched, beside ErrRobots, by the refusal of
	// a URL whose site is disallowed because its robots.txt could not be
	// read: a network failure (DNS, connection, TLS, time-out, a body cut
	// short), a 5xx answer, or a redirect to a target the chain does not
	// request. RFC 9309 reads an unreachable robots.txt as disallowing the
	// whole site, so the refusal stands until Until, when robots.txt is
	// asked again; the cause is in the refusal's Err (a
	// *robots.DisallowedError). It is not matched when robots.txt was read
	// and forbids the URL, nor when an answer the policy counts as a
	// refusal (a 401 or 403 under robots.Strict) did.
	ErrRobotsUnreachable = errors.New("fetch: robots.txt unreachable")
)

// Errors of a configuration [New] or [Policy.Tighten] refuses, each matched
// (errors.Is) by the typed error that says which field and why.
var (
	// ErrNoIdentity is matched by the *[IdentityError] New returns for a
	// Policy that does not say who is crawling.
	ErrNoIdentity = errors.New("fetch: the policy does not name its crawler")
	// ErrLessPolite is matched by every *[OverrideError].
	ErrLessPolite = errors.New("fetch: override would make the policy less polite")
	// ErrInvalidCredential is matched by the *[CredentialError] of a
	// credential that cannot, or may not, be sent.
	ErrInvalidCredential = errors.New("fetch: invalid credential")
)

// Errors about a response body that arrived but may not be deposited. They are
// returned by [Result.Depositable], and by [Client.Get] beside the Result when the body
// could not be read in full within bounds.
var (
	ErrNotOK           = errors.New("fetch: final status is not 200")
	ErrNoMediaType     = errors.New("fetch: response has no media type")
	ErrTruncated       = errors.New("fetch: body truncated")
	ErrUnknownCoding   = errors.New("fetch: unknown content-coding")
	ErrWireTooLarge    = errors.New("fetch: body exceeds the wire byte limit")
	ErrDecodedTooLarge = errors.New("fetch: decoded body exceeds the byte limit")
	ErrCorrupt         = errors.New("fetch: corrupt compressed body")
	ErrTooManyCodings  = errors.New("fetch: too many content-codings") // more than four stacked
)

func (r Reason) sentinel() error {
	switch r {
	case Robots:
		return ErrRobots
	case Cooldown:
		return ErrCooldown
	case Suspended:
		return ErrSuspended
	case BlockedAddr:
		return ErrBlockedAddr
	case NotHTTPS:
		return ErrNotHTTPS
	case HostNotAdmitted:
		return ErrHostNotAdmitted
	case UndeclaredParam:
		return ErrUndeclaredParam
	case TooManyRedirects:
		return ErrTooManyRedirects
	case InvalidHost:
		return ErrInvalidHost
	}
	return nil
}

// RefusedError is a refusal the chain made itself: nothing was sent for the refused
// request (for BlockedAddr, no connection was opened). Match it with [errors.As], or
// its reason with [errors.Is] and the Err… sentinels.
type RefusedError struct {
	Host   string    // the normalised host (or site) key
	URL    string    // the URL refused, when known
	Reason Reason    // why
	Until  time.Time // when the refusal ends; zero when it does not end by itself
	Err    error     // the underlying cause (a robots or backoff refusal, a dial error), or nil
}

// Error says once, in words, what was refused, why and until when:
//
//	fetch: refused https://a.example/private/x: robots.txt rule "Disallow: /private" (line 3, group "*") disallows it, until robots.txt is read again at 2026-12-01T14:00:00Z
//	fetch: refused https://a.example/x: a.example is cooling down after a refusal (status 429), until 2026-12-01T14:30:00Z
//	fetch: refused ftp://a.example/x: scheme ftp not allowed
func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("fetch: refused ")
	if e.URL != "" {
		b.WriteString(e.URL)
	} else {
		b.WriteString(e.Host)
	}
	b.WriteString(": ")
	b.WriteString(e.why())
	if !e.Until.IsZero() {
		b.WriteString(", until ")
		if e.Reason == Robots {
			b.WriteString("robots.txt is read again at ")
		}
		b.WriteString(e.Until.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// why is the reason of the refusal, from its cause where it has one.
func (e *RefusedError) why() string {
	switch e.Reason {
	case Robots:
		var d *robots.DisallowedError
		switch {
		case !errors.As(e.Err, &d):
			return "robots.txt disallows it"
		case d.Rule != "":
			s := "robots.txt rule " + strconv.Quote(d.Rule)
			if d.Line > 0 {
				s += " (line " + strconv.Itoa(d.Line) + ", group " + strconv.Quote(d.Group) + ")"
			}
			return s + " disallows it"
		case d.Err != nil:
			// A failure first: a 200 whose body broke off is a failure,
			// not an answer.
			cause := causeText(d.Err)
			var fe *robots.FetchError
			if errors.As(d.Err, &fe) {
				cause = fe.Text
				if fe.Err != nil {
					cause = causeText(fe.Err)
				}
			}
			if d.Status != 0 {
				cause = "status " + strconv.Itoa(d.Status) + ", then " + strings.TrimPrefix(cause, "robots.txt ")
			}
			return "robots.txt could not be read (" + cause + "), which disallows the whole site"
		case d.Status != 0:
			return "robots.txt answered " + strconv.Itoa(d.Status) + ", which disallows the whole site"
		}
		return "robots.txt disallows the whole site"
	case Cooldown, Suspended:
		var ce *backoff.CooldownError
		if errors.As(e.Err, &ce) && ce.Reason == backoff.Unavailable {
			s := "the refusal ledger could not be read, so nothing is sent"
			if ce.Err != nil {
				s += " (" + causeText(ce.Err) + ")"
			}
			return s
		}
		s := e.Host + " is cooling down after a refusal"
		if e.Reason == Suspended {
			kind := "article"
			if ce != nil {
				kind = ce.Kind.String()
			}
			s = e.Host + " is suspended for " + kind + " requests after repeated refusals"
		}
		if ce != nil && ce.Cause != "" {
			s += " (" + ce.Cause + ")"
		}
		return s
	case BlockedAddr:
		var be *netguard.BlockedError
		if errors.As(e.Err, &be) {
			s := be.Addr.String() + " is not a public address"
			if be.Host != "" && be.Host != be.Addr.String() {
				s = be.Host + " resolves to " + be.Addr.String() + ", which is not a public address"
			}
			if be.Range != "" {
				s += " (" + be.Range + ")"
			}
			return s
		}
		return "the address is not public"
	case NotHTTPS:
		if scheme, _, ok := strings.Cut(e.URL, ":"); ok && scheme != "" && !strings.ContainsAny(scheme, "/?#") {
			return "scheme " + strings.ToLower(scheme) + " not allowed"
		}
		return "scheme not allowed"
	case HostNotAdmitted:
		return "host " + e.Host + " is not admitted for this source"
	case UndeclaredParam:
		var pe *paramError
		if errors.As(e.Err, &pe) {
			return "the redirect adds query parameters the source does not declare: " + strings.Join(pe.Params, ", ")
		}
		return "the redirect adds query parameters the source does not declare"
	case TooManyRedirects:
		return "more redirects than the policy allows"
	case InvalidHost:
		var he *hostkey.HostError
		if errors.As(e.Err, &he) && he.Reason != "" {
			return "host " + strconv.Quote(e.Host) + " is not a valid host name or canonical IP address (" + he.Reason + ")"
		}
		return "host " + strconv.Quote(e.Host) + " is not a valid host name or canonical IP address"
	}
	if e.Err != nil {
		return e.Reason.String() + " (" + causeText(e.Err) + ")"
	}
	return e.Reason.String()
}

// robotsUnreachable reports whether e is a robots refusal because robots.txt
// could not be read: a fetch failure (other than too many redirects, which a
// policy reads as an answer), or a 5xx.
func (e *RefusedError) robotsUnreachable() bool {
	var d *robots.DisallowedError
	if e.Reason != Robots || !errors.As(e.Err, &d) || d.Outcome != robots.DisallowAll {
		return false
	}
	if d.Err != nil {
		return !errors.Is(d.Err, robots.ErrTooManyRedirects)
	}
	return d.Status >= 500
}

// causeText is an underlying error's text without its package prefix (a
// lowercase word and a colon), so that a message names no internal package.
func causeText(err error) string {
	s := err.Error()
	if i := strings.Index(s, ": "); i > 0 && isLowerWord(s[:i]) {
		return s[i+2:]
	}
	return s
}

func isLowerWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// Unwrap returns the reason's sentinel and the underlying cause.
func (e *RefusedError) Unwrap() []error {
	errs := make([]error, 0, 3)
	if s := e.Reason.sentinel(); s != nil {
		errs = append(errs, s)
	}
	if e.robotsUnreachable() {
		errs = append(errs, ErrRobotsUnreachable)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// Errors about a request a caller built that the chain will not send as
// written (see [Client.HTTPClient]); each is the Err of a *[RequestError].
var (
	ErrUnsupportedMethod = errors.New("fetch: method not supported: the chain only reads (GET, HEAD)")
	ErrRequestBody       = errors.New("fetch: request has a body: the chain only reads")
	ErrUnsupportedHeader = errors.New("fetch: header not supported: it would change the request, and the chain cannot send it")
)

// RequestError is a request a caller built that the chain refuses to send
// because it could not send it as written: nothing was sent. It is not a
// politeness refusal (that is a *[RefusedError]) but a request to change.
type RequestError struct {
	Method string // the request's method
	Header string // the header concerned (canonical form), or ""
	Err    error  // ErrUnsupportedMethod, ErrRequestBody or ErrUnsupportedHeader
}

// Error says what was not sent and why.
func (e *RequestError) Error() string {
	s := "fetch: " + e.Method + " not sent: "
	if e.Header != "" {
		s += e.Header + ": "
	}
	return s + unprefixed(e.Err)
}

// Unwrap returns Err.
func (e *RequestError) Unwrap() error { return e.Err }

// unprefixed returns err's text without this package's "fetch: " prefix, for
// an error text that already starts with it.
func unprefixed(err error) string {
	return strings.TrimPrefix(err.Error(), "fetch: ")
}

// pacingDeadlineError is a deadline met while a request waited, before
// anything of its own was sent: for its host's turn in the pacer, or for
// its host's robots.txt to be read (for it or for another request).
type pacingDeadlineError struct {
	host string
	wait string // what it waited for, after the host's name
	err  error  // the context's error
}

func (e *pacingDeadlineError) Error() string {
	return "fetch: deadline reached while waiting for " + e.host + "'s " + e.wait + ": nothing was sent"
}

func (e *pacingDeadlineError) Unwrap() []error { return []error{ErrPacingDeadline, e.err} }

// What a request waits for before it is sent (pacingDeadlineError.wait).
const (
	waitTurn   = "turn (its pacing interval)"
	waitRobots = "robots.txt to be read"
)

// waitError returns the error of a wait for host's wait (waitTurn,
// waitRobots) that ended with err: a deadline says what it was met
// waiting for; any other error is returned as it is.
func waitError(host, wait string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &pacingDeadlineError{host: host, wait: wait, err: err}
	}
	return err
}

// Errors of a request's turn with its host, and of a request that was not
// answered within the chain's bounds: it waited past its deadline before it
// was sent, its connection failed once it was, or its answer's header did
// not arrive in time or in size (those of a header wrap net/http's own error
// too). ErrLeaseNotHeld is a [Schedule]'s answer to the pacer about a turn's
// lease, not a request's error.
var (
	// ErrPacingDeadline is matched by the error of a request whose
	// context's deadline came while it waited for its host's turn in the
	// pacer or for its host's robots.txt to be read, or would come before
	// that turn (then the request fails at once): nothing of its own was
	// sent. The error matches context.DeadlineExceeded as well.
	ErrPacingDeadline = errors.New("fetch: deadline reached while waiting for the host's turn")
	// ErrLeaseNotHeld is returned by a [Schedule]'s Renew and Release when
	// the owner holds no live lease on the key.
	ErrLeaseNotHeld = errors.New("fetch: schedule lease not held")
	// ErrNotResent: the request's connection failed after the request had
	// been written to it (reset, or closed by the server before any
	// answer). net/http would send such a request again at once on a new
	// connection: a second request to the host within its interval, so
	// the chain does not. The request reached the host; ask again at a
	// later turn.
	ErrNotResent = errors.New("fetch: connection failed after the request was sent; not sent again within the host's interval")
	// ErrHeaderTimeout: no response header within Policy.FirstByte of the
	// request being written.
	ErrHeaderTimeout = errors.New("fetch: no response header within the first-byte time-out")
	// ErrHeaderTooLarge: the response header exceeded the chain's limit.
	ErrHeaderTooLarge = errors.New("fetch: response header too large")
	// ErrNoAnswer: the server closed the connection without answering
	// (net/http's io.EOF, which the error wraps too).
	ErrNoAnswer = errors.New("fetch: connection closed with no answer")
)

// namedError is a failure this package names with one of its sentinels, its
// cause kept: its text is the sentinel's, then the cause's in brackets, without
// the cause's package prefix.
type namedError struct {
	sentinel error
	err      error
}

func (e *namedError) Error() string {
	cause := causeText(e.err)
	if rest, ok := strings.CutPrefix(cause, unprefixed(e.sentinel)); ok {
		cause = strings.TrimLeft(rest, ": ") // the cause's own words for the sentinel's, once
	}
	if cause == "" {
		return e.sentinel.Error()
	}
	return e.sentinel.Error() + " (" + cause + ")"
}

func (e *namedError) Unwrap() []error { return []error{e.sentinel, e.err} }

// errNotInTime names a body whose decoding the Get's deadline (or its
// caller's cancellation) stopped; the error matches the context's too.
var errNotInTime = errors.New("fetch: body not decoded in time")

// transportFailure maps net/http's header time-out and header-size errors,
// which it exports under no name, to ErrHeaderTimeout and ErrHeaderTooLarge,
// and its bare io.EOF (a connection closed before any answer) to ErrNoAnswer.
func transportFailure(err error) error {
	msg := err.Error()
	switch {
	case err == io.EOF:
		return &namedError{sentinel: ErrNoAnswer, err: err}
	case strings.Contains(msg, "timeout awaiting response headers"):
		return &namedError{sentinel: ErrHeaderTimeout, err: err}
	case strings.Contains(msg, "server response headers exceeded"):
		return &namedError{sentinel: ErrHeaderTooLarge, err: err}
	}
	return err
}

// invalidHost returns the refusal of u, whose host hostkey could not
// normalise: the cause is kept, and it is a *RefusedError a caller matches.
func invalidHost(u *url.URL, err error) error {
	return &RefusedError{Host: u.Host, URL: u.Redacted(), Reason: InvalidHost, Err: err}
}

// unparsedRefusal returns the refusal of raw, a URL that url.Parse could not
// read because of its host (a percent-encoded one such as
// "%31%32%37.0.0.1", which RFC 3986 allows but no resolver should be handed):
// a *RefusedError with Reason InvalidHost and the parse error as its cause.
// Any other parse failure is returned as it is.
func unparsedRefusal(raw string, err error) error {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || scheme == "" {
		return err
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	host := authority
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		host = authority[i+1:] // never echo a userinfo
	}
	if _, perr := url.Parse("https://" + host); perr == nil {
		return err // the host parses: the fault is elsewhere (the scheme, the path)
	}
	return &RefusedError{Host: host, URL: scheme + "://" + host + "/", Reason: InvalidHost, Err: err}
}

// locationRefusal returns the refusal of the redirect resp answers req with
// when its Location's host cannot be parsed (see unparsedRefusal), and nil
// otherwise: net/http would fail on it with an error of bare text.
func locationRefusal(req *http.Request, resp *http.Response) error {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return nil
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil
	}
	_, err := req.URL.Parse(loc)
	if err == nil {
		return nil
	}
	if re, ok := unparsedRefusal(loc, err).(*RefusedError); ok {
		return re
	}
	return nil
}
