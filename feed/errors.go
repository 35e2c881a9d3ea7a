package feed

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors; match them with [errors.Is].
var (
	// ErrNoClient: a Reader or walker was used without a Client.
	ErrNoClient = errors.New("feed: no client")
	// ErrTooLarge: a document exceeded its size bound (wire or decoded).
	ErrTooLarge = errors.New("feed: document exceeds size limit")
	// ErrTooMany: a sitemap listed more entries than sitemaps.org allows, or a
	// walk exceeded its file or page bound.
	ErrTooMany = errors.New("feed: too many entries")
	// ErrMalformed: a document could not be parsed.
	ErrMalformed = errors.New("feed: malformed document")
	// ErrNotFeed: a document is not a feed (often an HTML page, such as a
	// bot-challenge page answered with 200).
	ErrNotFeed = errors.New("feed: not a feed")
	// ErrStatus: the server answered with a status the read cannot use.
	ErrStatus = errors.New("feed: unexpected status")
)

// StatusError reports a response whose status the read cannot use (anything
// but 200, and 304 for a conditional feed read). It unwraps to [ErrStatus].
type StatusError struct {
	URL        string // the URL requested
	StatusCode int    // the status received
	RetryAfter string // the Retry-After header as sent, "" when absent
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("feed: %s: unexpected status %d", e.URL, e.StatusCode)
}

// Unwrap returns [ErrStatus].
func (e *StatusError) Unwrap() error { return ErrStatus }

// ParseError reports a document that could not be parsed. It unwraps to
// [ErrMalformed] (or [ErrNotFeed]) and to the underlying parser error.
type ParseError struct {
	URL    string // the document's URL
	Format string // "feed", "sitemap", "json", "html"
	Err    error  // the parser's error
}

func (e *ParseError) Error() string {
	msg := "<nil>"
	if e.Err != nil {
		msg = strings.TrimPrefix(e.Err.Error(), "feed: ")
	}
	return fmt.Sprintf("feed: %s: bad %s: %s", e.URL, e.Format, msg)
}

// Unwrap returns [ErrMalformed] and the parser's error.
func (e *ParseError) Unwrap() []error {
	if errors.Is(e.Err, ErrNotFeed) || errors.Is(e.Err, ErrTooLarge) || errors.Is(e.Err, ErrTooMany) {
		return []error{e.Err}
	}
	return []error{ErrMalformed, e.Err}
}
