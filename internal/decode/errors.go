package decode

import (
	"errors"
	"fmt"
)

// Sentinels matched, with errors.Is, by the errors [Read] returns.
var (
	ErrWireTooLarge    = errors.New("decode: body larger than the wire limit")
	ErrDecodedTooLarge = errors.New("decode: decoded body larger than the limit")
	ErrTruncated       = errors.New("decode: body truncated")
	ErrLengthMismatch  = errors.New("decode: body longer than its Content-Length")
	ErrUnknownCoding   = errors.New("decode: unknown content-coding")
	ErrCorrupt         = errors.New("decode: corrupt compressed body")
	ErrTooManyCodings  = errors.New("decode: too many content-codings")
)

// TooManyCodingsError reports a Content-Encoding listing more codings than
// [MaxCodings]. It matches [ErrTooManyCodings].
type TooManyCodingsError struct {
	Limit int // the most codings accepted
}

// Error implements error.
func (e *TooManyCodingsError) Error() string {
	return fmt.Sprintf("decode: more than %d content-codings", e.Limit)
}

// Unwrap returns ErrTooManyCodings.
func (e *TooManyCodingsError) Unwrap() error { return ErrTooManyCodings }

// StoppedError reports decoding stopped because the context ended. It
// matches the context's error (context.DeadlineExceeded or
// context.Canceled).
type StoppedError struct {
	Coding string // the coding being removed when the context ended
	Err    error  // the context's error
}

// Error implements error.
func (e *StoppedError) Error() string {
	return fmt.Sprintf("decode: stopped removing %s: %v", e.Coding, e.Err)
}

// Unwrap returns the context's error, and errStopped for the package's own
// use.
func (e *StoppedError) Unwrap() []error { return []error{e.Err, errStopped} }

// LimitError reports a body over one of the [Limits]. Err is
// [ErrWireTooLarge] or [ErrDecodedTooLarge].
type LimitError struct {
	Err      error
	Limit    int64  // the cap exceeded
	Declared int64  // the declared Content-Length when it alone exceeded the cap, else -1 or the header's value
	Coding   string // the coding whose output exceeded MaxDecoded, if any
}

// Error implements error.
func (e *LimitError) Error() string {
	if e.Coding != "" {
		return fmt.Sprintf("%v: more than %d bytes decoding %s", e.Err, e.Limit, e.Coding)
	}
	return fmt.Sprintf("%v: more than %d bytes", e.Err, e.Limit)
}

// Unwrap returns Err.
func (e *LimitError) Unwrap() error { return e.Err }

// TruncatedError reports a body not received in full. It matches
// [ErrTruncated] and, when set, its cause Err (io.ErrUnexpectedEOF, a
// connection reset, context.DeadlineExceeded, …).
type TruncatedError struct {
	Got    int64  // bytes read off the wire; -1 when a coding's stream ended early
	Want   int64  // the declared Content-Length, or -1
	Coding string // the coding whose stream ended early, if any
	Err    error  // the cause, or nil
}

// Error implements error.
func (e *TruncatedError) Error() string {
	var msg string
	switch {
	case e.Coding != "":
		msg = fmt.Sprintf("decode: body truncated: %s stream ends early", e.Coding)
	case e.Want >= 0:
		msg = fmt.Sprintf("decode: body truncated: %d of %d bytes", e.Got, e.Want)
	default:
		msg = fmt.Sprintf("decode: body truncated after %d bytes", e.Got)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrTruncated and the cause.
func (e *TruncatedError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrTruncated}
	}
	return []error{ErrTruncated, e.Err}
}

// UnknownCodingError reports a content-coding [Read] cannot remove. It
// matches [ErrUnknownCoding].
type UnknownCodingError struct {
	Coding string // lower case, as listed in Content-Encoding
}

// Error implements error.
func (e *UnknownCodingError) Error() string {
	return fmt.Sprintf("decode: unknown content-coding %q", e.Coding)
}

// Unwrap returns ErrUnknownCoding.
func (e *UnknownCodingError) Unwrap() error { return ErrUnknownCoding }

// CorruptError reports a compressed stream that is not valid. It matches
// [ErrCorrupt] and the decoder's error.
type CorruptError struct {
	Coding string
	Err    error
}

// Error implements error.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("decode: corrupt %s body: %v", e.Coding, e.Err)
}

// Unwrap returns ErrCorrupt and the decoder's error.
func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }
