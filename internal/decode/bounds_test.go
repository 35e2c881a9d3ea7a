package decode

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestReadCodingsCapped: up to MaxCodings stacked codings are removed; a
// Content-Encoding listing more (12,000 × gzip, in one header value or in
// many) is refused with ErrTooManyCodings before a byte of the body is read.
func TestReadCodingsCapped(t *testing.T) {
	t.Parallel()
	body := page
	var applied []string
	for range MaxCodings {
		body = enc(t, "gzip", body)
		applied = append(applied, "gzip")
	}
	got, err := Read(bytes.NewReader(body), int64(len(body)), []string{strings.Join(applied, ", ")}, Limits{})
	if err != nil || !bytes.Equal(got.Envelope, page) || len(got.Removed) != MaxCodings {
		t.Fatalf("%d codings: %v, removed %v", MaxCodings, err, got)
	}
	many := strings.Repeat("gzip,", 12_000)
	for _, tc := range []struct {
		name   string
		header []string
	}{
		{"one over", []string{strings.Join(append(applied, "br"), ",")}},
		{"12000 in one value", []string{many}},
		{"12000 values", strings.Split(strings.TrimSuffix(many, ","), ",")},
		{"identity not counted, then one over", []string{"identity, gzip, identity, gzip, gzip, gzip, gzip"}},
	} {
		r := &tallyReader{r: bytes.NewReader(body)}
		_, err := Read(r, -1, tc.header, Limits{})
		var tm *TooManyCodingsError
		if !errors.Is(err, ErrTooManyCodings) || !errors.As(err, &tm) || tm.Limit != MaxCodings {
			t.Errorf("%s: err %v, want ErrTooManyCodings", tc.name, err)
		}
		if r.n.Load() != 0 {
			t.Errorf("%s: %d bytes of the body read before the refusal", tc.name, r.n.Load())
		}
	}
}

// TestReadContextStopsDecoding: decoding is CPU work no connection deadline
// interrupts, so ReadContext looks at its context as it goes and stops when
// it ends. The context here ends after a fixed number of looks (not after a
// time), so the test measures work, not the machine's speed: four stacked
// gzip layers over 40 MiB of zeros stop within the looks allowed, with the
// context's error, having decoded a small part of what they would.
func TestReadContextStopsDecoding(t *testing.T) {
	t.Parallel()
	body := make([]byte, 40<<20)
	for range MaxCodings {
		body = enc(t, "gzip", body)
	}
	ctx := &lookCountingCtx{Context: context.Background(), allow: 8}
	_, err := ReadContext(ctx, bytes.NewReader(body), int64(len(body)), []string{"gzip, gzip, gzip, gzip"}, Limits{MaxDecoded: 64 << 20})
	var se *StoppedError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &se) || se.Coding != "gzip" {
		t.Fatalf("err %v, want a StoppedError matching context.DeadlineExceeded", err)
	}
	// 40 MiB decoded at stopEvery bytes per look would take 160 looks in
	// the last layer alone.
	if looks := ctx.looks.Load(); looks > ctx.allow+2 {
		t.Fatalf("the decoder looked at its context %d times after it ended at look %d", looks, ctx.allow)
	}

	// A context already done decodes nothing at all.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadContext(done, bytes.NewReader(body), int64(len(body)), []string{"gzip, gzip, gzip, gzip"}, Limits{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: err %v, want context.Canceled", err)
	}
	// Without codings, or with a live context, nothing changes.
	if got, err := ReadContext(context.Background(), bytes.NewReader(page), int64(len(page)), nil, Limits{}); err != nil || !bytes.Equal(got.Envelope, page) {
		t.Fatalf("identity body: %v", err)
	}
}

// tallyReader counts the bytes read from r.
type tallyReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *tallyReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// lookCountingCtx is a context whose deadline passes at its allow-th Err call:
// a deadline measured in work done, not in time.
type lookCountingCtx struct {
	context.Context
	allow int64
	looks atomic.Int64
}

func (c *lookCountingCtx) Err() error {
	if c.looks.Add(1) > c.allow {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *lookCountingCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
