package sharecheck

import (
	"errors"
	"fmt"
	"strconv"
)

// Reason says why an image is not used.
type Reason uint8

// The reasons. The zero Reason is not used.
const (
	InvalidURL  Reason = iota + 1 // the image URL does not parse, or is not absolute (nor made so by the page)
	Refused                       // the chain did not ask: robots.txt, a cool-down, a suspension, a non-public address, a scheme or host not allowed (Err is the *fetch.RefusedError)
	Redirects                     // more redirects than MaxRedirects (or the Client's policy) allow
	UnknownHost                   // the image's host name does not resolve
	Unreachable                   // the host could not be reached or did not answer in time, or the caller's context ended
	Status                        // the final answer was not a 200 (UnusableError.Status says which)
	TooLarge                      // the body is larger than Checker.MaxBytes or the policy's caps
	Unreadable                    // the body could not be read in full (truncated, or a content-coding unknown or corrupt)
	NotImage                      // the bytes are not JPEG, PNG, WebP or GIF, whatever the Content-Type says
	Corrupt                       // the bytes start as one of the four formats but their header does not decode
)

var reasonNames = [...]string{
	InvalidURL:  "invalid URL",
	Refused:     "refused",
	Redirects:   "too many redirects",
	UnknownHost: "unknown host",
	Unreachable: "unreachable",
	Status:      "not a 200",
	TooLarge:    "too large",
	Unreadable:  "unreadable",
	NotImage:    "not an image",
	Corrupt:     "corrupt",
}

// String returns the reason in words, such as "not an image".
func (r Reason) String() string {
	if r > 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

// MarshalText returns the reason in words, as String does.
func (r Reason) MarshalText() ([]byte, error) {
	if r == 0 || int(r) >= len(reasonNames) {
		return nil, fmt.Errorf("sharecheck: no such reason %d", int(r))
	}
	return []byte(reasonNames[r]), nil
}

// UnmarshalText reads a reason's words, as MarshalText writes them.
func (r *Reason) UnmarshalText(b []byte) error {
	for i, n := range reasonNames {
		if i > 0 && n == string(b) {
			*r = Reason(i)
			return nil
		}
	}
	return fmt.Errorf("sharecheck: unknown reason %q", b)
}

// Sentinels matching each [Reason] with errors.Is: errors.Is(res.Err,
// sharecheck.ErrNotImage) holds for every *UnusableError whose Reason is
// NotImage.
var (
	ErrInvalidURL  = errors.New("sharecheck: invalid image URL")
	ErrRefused     = errors.New("sharecheck: refused by the chain")
	ErrRedirects   = errors.New("sharecheck: too many redirects")
	ErrUnknownHost = errors.New("sharecheck: unknown host")
	ErrUnreachable = errors.New("sharecheck: unreachable")
	ErrStatus      = errors.New("sharecheck: final status is not 200")
	ErrTooLarge    = errors.New("sharecheck: image too large")
	ErrUnreadable  = errors.New("sharecheck: body unreadable")
	ErrNotImage    = errors.New("sharecheck: not a JPEG, PNG, WebP or GIF")
	ErrCorrupt     = errors.New("sharecheck: corrupt image")

	// ErrNotAbsolute: the image URL is relative and no page makes it absolute.
	ErrNotAbsolute = errors.New("sharecheck: image URL is not absolute")
)

var sentinels = [...]error{
	InvalidURL: ErrInvalidURL, Refused: ErrRefused, Redirects: ErrRedirects, UnknownHost: ErrUnknownHost,
	Unreachable: ErrUnreachable, Status: ErrStatus, TooLarge: ErrTooLarge, Unreadable: ErrUnreadable,
	NotImage: ErrNotImage, Corrupt: ErrCorrupt,
}

// UnusableError says why an image is not used. It matches its Reason's
// sentinel and its cause with errors.Is and errors.As (a robots.txt refusal
// also matches fetch.ErrRobots, and errors.As finds its *fetch.RefusedError).
type UnusableError struct {
	URL    string // the image URL checked
	Reason Reason
	Status int   // the final status, for Reason Status; else 0
	Err    error // the cause, or nil
}

// Error says which image is not used and why, once.
func (e *UnusableError) Error() string {
	s := fmt.Sprintf("sharecheck: image %s not used: %s", e.URL, e.Reason)
	if e.Status != 0 {
		s += " (" + strconv.Itoa(e.Status) + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the Reason's sentinel and the cause.
func (e *UnusableError) Unwrap() []error {
	var out []error
	if int(e.Reason) < len(sentinels) && sentinels[e.Reason] != nil {
		out = append(out, sentinels[e.Reason])
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}
