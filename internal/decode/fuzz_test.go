package decode

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzDecode checks that Read never panics, never returns more than
// MaxDecoded bytes nor reads more than MaxWire+1, and fails only with its
// documented errors (V10, V12).
func FuzzDecode(f *testing.F) {
	f.Add([]byte("plain"), "", int64(-1))
	f.Add(enc(f, "gzip", page), "gzip", int64(-1))
	f.Add(enc(f, "deflate", page), "deflate", int64(-1))
	f.Add(enc(f, "rawdeflate", page[:300]), "deflate", int64(-1))
	f.Add(enc(f, "br", page), "br", int64(-1))
	f.Add(enc(f, "zstd", page), "zstd", int64(-1))
	f.Add(enc(f, "br", enc(f, "gzip", page)), "gzip, br", int64(-1))
	f.Add(zstdFrame(27, []byte("big window")), "zstd", int64(-1))
	f.Add(gzipBomb(f, 4<<20), "gzip", int64(100))
	f.Fuzz(func(t *testing.T, wire []byte, codings string, contentLength int64) {
		lim := Limits{MaxWire: 64 << 10, MaxDecoded: 256 << 10}
		r := &countingBytes{r: bytes.NewReader(wire)}
		b, err := Read(r, contentLength, strings.Split(codings, ";"), lim)
		if r.n > lim.MaxWire+1 {
			t.Fatalf("read %d wire bytes, limit %d", r.n, lim.MaxWire)
		}
		if err != nil {
			if b != nil {
				t.Fatal("non-nil Body with an error")
			}
			for _, want := range []error{ErrWireTooLarge, ErrDecodedTooLarge, ErrTruncated, ErrLengthMismatch, ErrUnknownCoding, ErrCorrupt} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("undocumented error %v", err)
		}
		if b.Decoded != int64(len(b.Envelope)) || b.Decoded > lim.MaxDecoded {
			t.Fatalf("Decoded = %d, len = %d, limit %d", b.Decoded, len(b.Envelope), lim.MaxDecoded)
		}
		if b.Wire != int64(len(wire)) {
			t.Fatalf("Wire = %d, want %d", b.Wire, len(wire))
		}
		if contentLength >= 0 && b.Wire != contentLength {
			t.Fatalf("complete body of %d bytes, Content-Length %d", b.Wire, contentLength)
		}
	})
}

type countingBytes struct {
	r *bytes.Reader
	n int64
}

func (c *countingBytes) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
