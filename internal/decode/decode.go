package decode

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// Defaults for the zero fields of [Limits].
const (
	DefaultMaxWire    = 10 << 20 // 10 MiB
	DefaultMaxDecoded = 50 << 20 // 50 MiB
	// MaxZstdWindow is the largest zstd window accepted (8 MiB).
	MaxZstdWindow = 8 << 20
	// MaxCodings is the most content-codings Read removes from one body
	// ("identity" not counted). Servers apply one, rarely two; a longer
	// list costs a full decoding pass per entry for nothing but the
	// sender's amusement, so it is refused before anything is read.
	MaxCodings = 4
)

// Limits caps the bytes [Read] accepts.
type Limits struct {
	// MaxWire caps the bytes read from the wire, before decoding. 0 (or
	// negative): DefaultMaxWire.
	MaxWire int64
	// MaxDecoded caps the bytes of the decoded envelope, and of every
	// intermediate stage when several codings are stacked. 0 (or
	// negative): DefaultMaxDecoded.
	MaxDecoded int64
}

func (l Limits) wire() int64 {
	if l.MaxWire <= 0 {
		return DefaultMaxWire
	}
	return l.MaxWire
}

func (l Limits) decoded() int64 {
	if l.MaxDecoded <= 0 {
		return DefaultMaxDecoded
	}
	return l.MaxDecoded
}

// Body is a body read in full and decoded.
type Body struct {
	// Envelope is the body with every content-coding removed.
	Envelope []byte
	// Wire is the number of bytes read off the wire (after transfer
	// decoding, before content decoding).
	Wire int64
	// Decoded is len(Envelope).
	Decoded int64
	// Removed lists the content-codings removed, lower case, in the order
	// they were applied (as the header lists them); "identity" is omitted.
	Removed []string
}

// Read is [ReadContext] with a context that never ends, for bodies whose
// bytes are already at hand.
func Read(r io.Reader, contentLength int64, contentEncoding []string, lim Limits) (*Body, error) {
	return ReadContext(context.Background(), r, contentLength, contentEncoding, lim)
}

// ReadContext reads r in full and removes the content-codings listed in
// contentEncoding (the Content-Encoding header values, in the order the
// codings were applied; each value may itself be a comma-separated list).
// contentLength is the declared length, or -1 when unknown.
//
// Read reads at most lim.MaxWire+1 bytes from r, and refuses at once a
// declared length above lim.MaxWire. Errors match (with errors.Is):
//   - [ErrWireTooLarge]: more than MaxWire bytes on the wire;
//   - [ErrTruncated]: fewer bytes than contentLength, a reader error
//     (io.ErrUnexpectedEOF, a reset, a deadline: the cause is wrapped too),
//     or a compressed stream that ends early;
//   - [ErrLengthMismatch]: more bytes than contentLength;
//   - [ErrUnknownCoding]: a coding other than gzip, x-gzip, deflate, br,
//     zstd or identity, as an [*UnknownCodingError];
//   - [ErrTooManyCodings]: more than [MaxCodings] codings, as a
//     [*TooManyCodingsError], refused before r is read;
//   - the context's error (context.DeadlineExceeded, context.Canceled)
//     when ctx ends while the body is decoded: decoding is CPU work that
//     no connection deadline interrupts, so it checks ctx between the
//     chunks it reads and stops there;
//   - [ErrDecodedTooLarge]: more than MaxDecoded bytes once decoded;
//   - [ErrCorrupt]: a compressed stream that is not valid.
//
// A body without a declared length that ends cleanly (io.EOF) is taken as
// complete unless a content-coding's own framing (gzip's trailer, zlib's
// checksum, the final deflate, brotli or zstd block) shows it was cut.
//
// "deflate" is decoded as zlib-wrapped deflate (RFC 9110), falling back to
// raw deflate as browsers do. Memory stays within about twice the caps
// whatever the input: a gzip bomb stops at MaxDecoded. On error Read returns
// a nil *Body. ReadContext does not close r; reading r itself ends with
// ctx only if r does (a response body does).
func ReadContext(ctx context.Context, r io.Reader, contentLength int64, contentEncoding []string, lim Limits) (*Body, error) {
	codings, err := parseCodings(contentEncoding)
	if err != nil {
		return nil, err
	}
	maxWire, maxDecoded := lim.wire(), lim.decoded()
	if contentLength > maxWire {
		return nil, &LimitError{Err: ErrWireTooLarge, Limit: maxWire, Declared: contentLength}
	}
	hint := int64(-1)
	if contentLength >= 0 {
		hint = contentLength + 1 // room to notice one byte too many
	}
	data, n, err := readCapped(ctx, r, maxWire, hint)
	if errors.Is(err, errStopped) {
		err = ctx.Err() // a body's reader usually ends with its context first
	}
	if err != nil {
		return nil, &TruncatedError{Got: n, Want: contentLength, Err: err}
	}
	if n > maxWire {
		return nil, &LimitError{Err: ErrWireTooLarge, Limit: maxWire, Declared: contentLength}
	}
	if contentLength >= 0 && n < contentLength {
		return nil, &TruncatedError{Got: n, Want: contentLength}
	}
	if contentLength >= 0 && n > contentLength {
		return nil, fmt.Errorf("%w: read %d bytes, Content-Length %d", ErrLengthMismatch, n, contentLength)
	}
	for i := len(codings) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return nil, &StoppedError{Coding: codings[i], Err: err}
		}
		data, err = decodeOne(ctx, codings[i], data, maxDecoded)
		if err != nil {
			return nil, err
		}
	}
	if int64(len(data)) > maxDecoded {
		// Identity only: the wire bytes are the envelope.
		return nil, &LimitError{Err: ErrDecodedTooLarge, Limit: maxDecoded, Declared: -1}
	}
	return &Body{Envelope: data, Wire: n, Decoded: int64(len(data)), Removed: codings}, nil
}

// parseCodings flattens the header values into lower-case tokens, dropping
// identity, and refuses unknown ones and more than MaxCodings. It stops at
// the first coding too many, so a header listing thousands costs no more than
// one listing five.
func parseCodings(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		for tok := range strings.SplitSeq(v, ",") {
			tok = strings.ToLower(strings.TrimSpace(tok))
			switch tok {
			case "", "identity":
			case "gzip", "x-gzip", "deflate", "br", "zstd":
				if len(out) == MaxCodings {
					return nil, &TooManyCodingsError{Limit: MaxCodings}
				}
				out = append(out, tok)
			default:
				return nil, &UnknownCodingError{Coding: tok}
			}
		}
	}
	return out, nil
}

func decodeOne(ctx context.Context, coding string, in []byte, maxDecoded int64) ([]byte, error) {
	switch coding {
	case "gzip", "x-gzip":
		return inflate(ctx, coding, in, maxDecoded, func(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) })
	case "deflate":
		// RFC 9110 deflate is zlib-wrapped; some servers send raw deflate,
		// which browsers accept. Try zlib, and raw deflate if zlib fails for
		// any reason but size; report zlib's error if both fail.
		out, err := inflate(ctx, coding, in, maxDecoded, zlib.NewReader)
		if err == nil || errors.Is(err, ErrDecodedTooLarge) || errors.Is(err, errStopped) {
			return out, err
		}
		raw, rawErr := inflate(ctx, coding, in, maxDecoded, func(r io.Reader) (io.ReadCloser, error) { return flate.NewReader(r), nil })
		if rawErr == nil || errors.Is(rawErr, ErrDecodedTooLarge) || errors.Is(rawErr, errStopped) {
			return raw, rawErr
		}
		return nil, err
	case "br":
		return inflate(ctx, coding, in, maxDecoded, func(r io.Reader) (io.ReadCloser, error) { return io.NopCloser(brotli.NewReader(r)), nil })
	case "zstd":
		return inflate(ctx, coding, in, maxDecoded, func(r io.Reader) (io.ReadCloser, error) {
			zr, err := zstd.NewReader(r,
				zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderMaxWindow(MaxZstdWindow),
				zstd.WithDecoderLowmem(true))
			if err != nil {
				return nil, err
			}
			return zr.IOReadCloser(), nil
		})
	}
	return nil, &UnknownCodingError{Coding: coding}
}

// inflate decodes in with the reader newReader makes, keeping at most
// maxDecoded bytes, and stops when ctx ends.
func inflate(ctx context.Context, coding string, in []byte, maxDecoded int64, newReader func(io.Reader) (io.ReadCloser, error)) ([]byte, error) {
	dec, err := newReader(bytes.NewReader(in))
	if err != nil {
		return nil, codingErr(coding, err)
	}
	defer dec.Close()
	out, n, err := readCapped(ctx, dec, maxDecoded, min(maxDecoded+1, max(4*int64(len(in)), 32<<10)))
	if errors.Is(err, errStopped) {
		return nil, &StoppedError{Coding: coding, Err: ctx.Err()}
	}
	if err != nil {
		return nil, codingErr(coding, err)
	}
	if n > maxDecoded {
		return nil, &LimitError{Err: ErrDecodedTooLarge, Limit: maxDecoded, Declared: -1, Coding: coding}
	}
	return out, nil
}

// codingErr classifies a decoder's error: an early end is truncation,
// anything else corruption.
func codingErr(coding string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &TruncatedError{Got: -1, Want: -1, Coding: coding, Err: err}
	}
	return &CorruptError{Coding: coding, Err: err}
}

// maxChunk bounds the chunks readCapped allocates once its hint is spent.
const maxChunk = 4 << 20

// firstChunk is the size of the first chunk of a body of unknown length. It
// comes from a pool and the bytes are copied out at the end, so a small body
// costs one allocation of its exact size.
const firstChunk = 32 << 10

var chunkPool = sync.Pool{New: func() any { b := make([]byte, firstChunk); return &b }}

// stopEvery is how many bytes readCapped decodes between two looks at its
// context: small enough that a decoder stops within a millisecond or so of
// its deadline, large enough that the look costs nothing measurable.
const stopEvery = 256 << 10

// errStopped is readCapped's report that its context ended.
var errStopped = errors.New("decode: stopped")

// readCapped reads r until io.EOF or until it holds limit+1 bytes, whichever
// comes first, and never asks r for more than limit+1 bytes. ctx is checked
// every stopEvery bytes, and its end stops the read with errStopped. A body of known
// length (hint > 0) is read into one buffer of hint bytes. Otherwise the
// first firstChunk bytes go into a pooled buffer and the rest into chunks
// that double, so a reader that stops early costs little; at the end the
// bytes are copied into one slice of their exact size. It returns the bytes
// read (nil when over limit), their number and any error other than io.EOF.
func readCapped(ctx context.Context, r io.Reader, limit, hint int64) ([]byte, int64, error) {
	remaining := limit + 1 // every chunk is cut to it, so r is never asked for more
	var (
		chunks [][]byte
		one    [1][]byte // chunks' backing array for the common single chunk
		total  int
		err    error
		pooled *[]byte
	)
	chunks = one[:0]
	size := hint
	if size <= 0 {
		pooled = chunkPool.Get().(*[]byte)
		size = firstChunk
	}
	for remaining > 0 && err == nil {
		var buf []byte
		if pooled != nil && len(chunks) == 0 {
			buf = (*pooled)[:min(size, remaining)]
		} else {
			buf = make([]byte, min(size, remaining))
		}
		n := 0
		empty := 0
		for n < len(buf) && err == nil {
			var m int
			m, err = r.Read(buf[n:min(len(buf), n+stopEvery)])
			n += m
			if err == nil && ctx.Err() != nil {
				err = errStopped
			}
			if m == 0 && err == nil {
				if empty++; empty >= 100 {
					err = io.ErrNoProgress
				}
			}
		}
		chunks = append(chunks, buf[:n])
		total += n
		remaining -= int64(n)
		size = min(2*size, maxChunk)
	}
	if pooled != nil {
		defer chunkPool.Put(pooled)
	}
	if err == io.EOF {
		err = nil
	}
	if remaining == 0 {
		return nil, int64(total), err // over the limit: the bytes are not wanted
	}
	if len(chunks) == 1 && pooled == nil {
		return chunks[0], int64(total), err
	}
	out := make([]byte, 0, total)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return out, int64(total), err
}
