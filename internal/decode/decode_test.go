package decode

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// encoders compress with one content-coding each.
var encoders = map[string]func(t testing.TB, p []byte) []byte{
	"gzip": func(t testing.TB, p []byte) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(p)
		must(t, w.Close())
		return b.Bytes()
	},
	"deflate": func(t testing.TB, p []byte) []byte { // zlib-wrapped, RFC 9110
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		w.Write(p)
		must(t, w.Close())
		return b.Bytes()
	},
	"rawdeflate": func(t testing.TB, p []byte) []byte {
		var b bytes.Buffer
		w, err := flate.NewWriter(&b, flate.DefaultCompression)
		must(t, err)
		w.Write(p)
		must(t, w.Close())
		return b.Bytes()
	},
	"br": func(t testing.TB, p []byte) []byte {
		var b bytes.Buffer
		w := brotli.NewWriter(&b)
		w.Write(p)
		must(t, w.Close())
		return b.Bytes()
	},
	"zstd": func(t testing.TB, p []byte) []byte {
		var b bytes.Buffer
		w, err := zstd.NewWriter(&b)
		must(t, err)
		w.Write(p)
		must(t, w.Close())
		return b.Bytes()
	},
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func enc(t testing.TB, coding string, p []byte) []byte { return encoders[coding](t, p) }

var page = []byte(strings.Repeat("<p>Un article de presse, lu poliment.</p>\n", 200))

// V12: every known content-coding is removed, last applied first, and the
// codings removed are reported.
func TestReadV12Codings(t *testing.T) {
	t.Parallel()
	gz := enc(t, "gzip", page)
	tests := []struct {
		name    string
		wire    []byte
		header  []string
		removed []string
	}{
		{"none", page, nil, nil},
		{"identity", page, []string{"identity"}, nil},
		{"gzip", gz, []string{"gzip"}, []string{"gzip"}},
		{"x-gzip", gz, []string{"x-gzip"}, []string{"x-gzip"}},
		{"GZIP upper case", gz, []string{"GZIP"}, []string{"gzip"}},
		{"deflate zlib", enc(t, "deflate", page), []string{"deflate"}, []string{"deflate"}},
		{"deflate raw", enc(t, "rawdeflate", page), []string{"deflate"}, []string{"deflate"}},
		{"br", enc(t, "br", page), []string{"br"}, []string{"br"}},
		{"zstd", enc(t, "zstd", page), []string{"zstd"}, []string{"zstd"}},
		{"gzip then br, one value", enc(t, "br", gz), []string{"gzip, br"}, []string{"gzip", "br"}},
		{"gzip then br, two values", enc(t, "br", gz), []string{"gzip", "br"}, []string{"gzip", "br"}},
		{"gzip, identity, zstd", enc(t, "zstd", gz), []string{"gzip,identity", " zstd "}, []string{"gzip", "zstd"}},
		{"gzip multi-member", append(enc(t, "gzip", page[:100]), enc(t, "gzip", page[100:])...), []string{"gzip"}, []string{"gzip"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, cl := range []int64{int64(len(tt.wire)), -1} {
				b, err := Read(bytes.NewReader(tt.wire), cl, tt.header, Limits{})
				if err != nil {
					t.Fatalf("Read(contentLength %d): %v", cl, err)
				}
				if !bytes.Equal(b.Envelope, page) {
					t.Fatalf("envelope differs: %d bytes, want %d", len(b.Envelope), len(page))
				}
				if b.Wire != int64(len(tt.wire)) || b.Decoded != int64(len(page)) {
					t.Errorf("Wire, Decoded = %d, %d; want %d, %d", b.Wire, b.Decoded, len(tt.wire), len(page))
				}
				if fmt.Sprint(b.Removed) != fmt.Sprint(tt.removed) {
					t.Errorf("Removed = %q, want %q", b.Removed, tt.removed)
				}
			}
		})
	}
}

// V12: an unknown content-coding refuses the body, with the coding named.
func TestReadV12UnknownCoding(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		header []string
		coding string
	}{
		{[]string{"compress"}, "compress"},
		{[]string{"sdch"}, "sdch"},
		{[]string{"gzip, foo"}, "foo"},
		{[]string{"gzip", "X-Custom"}, "x-custom"},
		{[]string{"gzip;q=1"}, "gzip;q=1"},
	} {
		_, err := Read(bytes.NewReader(page), -1, tt.header, Limits{})
		var ue *UnknownCodingError
		if !errors.As(err, &ue) || !errors.Is(err, ErrUnknownCoding) {
			t.Errorf("Read with %q: %v, want *UnknownCodingError", tt.header, err)
			continue
		}
		if ue.Coding != tt.coding {
			t.Errorf("Coding = %q, want %q", ue.Coding, tt.coding)
		}
	}
}

// V12: a body shorter than its Content-Length, a reader failing mid-body,
// or a compressed stream that ends early is truncated, never complete.
func TestReadV12Truncated(t *testing.T) {
	t.Parallel()
	t.Run("short of Content-Length", func(t *testing.T) {
		t.Parallel()
		_, err := Read(bytes.NewReader(page[:100]), int64(len(page)), nil, Limits{})
		var te *TruncatedError
		if !errors.As(err, &te) || !errors.Is(err, ErrTruncated) {
			t.Fatalf("err = %v, want *TruncatedError", err)
		}
		if te.Got != 100 || te.Want != int64(len(page)) {
			t.Errorf("Got, Want = %d, %d", te.Got, te.Want)
		}
	})
	t.Run("reader fails", func(t *testing.T) {
		t.Parallel()
		r := io.MultiReader(bytes.NewReader(page[:10]), iotestErr{io.ErrUnexpectedEOF})
		_, err := Read(r, -1, nil, Limits{})
		if !errors.Is(err, ErrTruncated) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("err = %v, want ErrTruncated wrapping io.ErrUnexpectedEOF", err)
		}
	})
	for _, coding := range []string{"gzip", "deflate", "br", "zstd"} {
		t.Run(coding+" stream ends early", func(t *testing.T) {
			t.Parallel()
			full := enc(t, coding, page)
			for _, cut := range []int{len(full) / 2, len(full) - 1} {
				_, err := Read(bytes.NewReader(full[:cut]), int64(cut), []string{coding}, Limits{})
				if !errors.Is(err, ErrTruncated) {
					t.Errorf("%s cut at %d of %d: err = %v, want ErrTruncated", coding, cut, len(full), err)
				}
			}
		})
	}
	t.Run("empty gzip body", func(t *testing.T) {
		t.Parallel()
		_, err := Read(bytes.NewReader(nil), 0, []string{"gzip"}, Limits{})
		if !errors.Is(err, ErrTruncated) {
			t.Errorf("err = %v, want ErrTruncated", err)
		}
	})
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

// V12 on a real socket: a server that declares 4000 bytes, sends 1000 and
// closes is caught as truncated.
func TestReadV12TruncatedOverLoopback(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		http.ReadRequest(bufio.NewReader(c))
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n", len(page))
		c.Write(page[:1000])
	}()
	tr := &http.Transport{Proxy: nil}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = Read(resp.Body, resp.ContentLength, resp.Header.Values("Content-Encoding"), Limits{})
	var te *TruncatedError
	if !errors.As(err, &te) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want *TruncatedError wrapping io.ErrUnexpectedEOF", err)
	}
	if te.Got != 1000 {
		t.Errorf("Got = %d, want 1000", te.Got)
	}
}

// countingReader yields an endless stream of 'a' and counts what it gives.
type countingReader struct{ n int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	r.n += int64(len(p))
	return len(p), nil
}

// V10: the wire is capped; a declared oversize body is refused unread, an
// endless one after MaxWire+1 bytes.
func TestReadV10WireLimit(t *testing.T) {
	t.Parallel()
	lim := Limits{MaxWire: 1000}
	var r countingReader
	_, err := Read(&r, 1001, nil, lim)
	var le *LimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrWireTooLarge) || le.Limit != 1000 || le.Declared != 1001 {
		t.Fatalf("declared 1001: err = %v", err)
	}
	if r.n != 0 {
		t.Errorf("read %d bytes of a body declared too large", r.n)
	}
	_, err = Read(&r, -1, nil, lim)
	if !errors.Is(err, ErrWireTooLarge) {
		t.Fatalf("endless body: err = %v", err)
	}
	if r.n > 1001+512 { // bytes.Buffer reads in chunks of at least 512
		t.Errorf("read %d bytes of an endless body, want about 1001", r.n)
	}
	b, err := Read(bytes.NewReader(page[:1000]), 1000, nil, lim)
	if err != nil || b.Wire != 1000 {
		t.Errorf("exactly MaxWire: %v", err)
	}
	// Zero limits mean the defaults.
	if _, err := Read(&r, DefaultMaxWire+1, nil, Limits{}); !errors.Is(err, ErrWireTooLarge) {
		t.Errorf("declared DefaultMaxWire+1: err = %v", err)
	}
}

func TestReadLengthMismatch(t *testing.T) {
	t.Parallel()
	_, err := Read(bytes.NewReader(page[:200]), 100, nil, Limits{})
	if !errors.Is(err, ErrLengthMismatch) {
		t.Errorf("err = %v, want ErrLengthMismatch", err)
	}
}

// V10: the decoded size is capped separately, also for identity and for
// each stage of stacked codings.
func TestReadV10DecodedLimit(t *testing.T) {
	t.Parallel()
	lim := Limits{MaxDecoded: 1000}
	for _, coding := range []string{"gzip", "deflate", "rawdeflate", "br", "zstd"} {
		header := coding
		if coding == "rawdeflate" {
			header = "deflate"
		}
		_, err := Read(bytes.NewReader(enc(t, coding, page)), -1, []string{header}, lim)
		var le *LimitError
		if !errors.As(err, &le) || !errors.Is(err, ErrDecodedTooLarge) || le.Limit != 1000 || le.Coding != header {
			t.Errorf("%s: err = %v, want ErrDecodedTooLarge from %s", coding, err, header)
		}
		b, err := Read(bytes.NewReader(enc(t, coding, page[:1000])), -1, []string{header}, lim)
		if err != nil || b.Decoded != 1000 {
			t.Errorf("%s, exactly MaxDecoded: %v", coding, err)
		}
	}
	if _, err := Read(bytes.NewReader(page[:1001]), -1, nil, lim); !errors.Is(err, ErrDecodedTooLarge) {
		t.Errorf("identity over MaxDecoded: err = %v", err)
	}
}

// gzipBomb returns size bytes of zeros (a multiple of 1 MiB), gzipped as one
// member: one MiB of zeros is deflated once, flushed to a byte boundary, and
// the resulting blocks repeated, so building a 64 MiB bomb (about 64 KiB)
// costs one MiB of compression.
func gzipBomb(t testing.TB, size int) []byte {
	var chunk bytes.Buffer
	fw, err := flate.NewWriter(&chunk, flate.BestCompression)
	must(t, err)
	fw.Write(make([]byte, 1<<20))
	must(t, fw.Flush())
	var out bytes.Buffer
	out.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}) // RFC 1952 header
	for range size >> 20 {
		out.Write(chunk.Bytes())
	}
	out.Write([]byte{3, 0}) // final, empty fixed-Huffman block
	crc := crc32.NewIEEE()
	zeros := make([]byte, 1<<20)
	for range size >> 20 {
		crc.Write(zeros)
	}
	out.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	out.Write(binary.LittleEndian.AppendUint32(nil, uint32(size)))
	return out.Bytes()
}

func TestGzipBombIsValid(t *testing.T) {
	t.Parallel()
	bomb := gzipBomb(t, 4<<20)
	zr, err := gzip.NewReader(bytes.NewReader(bomb))
	must(t, err)
	n, err := io.Copy(io.Discard, zr)
	if err != nil || n != 4<<20 {
		t.Fatalf("bomb inflates to %d bytes, %v; want %d", n, err, 4<<20)
	}
}

// V10, hostile response: a 64 MiB gzip bomb under a 1 MiB cap stops at the
// cap, with memory bounded. Not parallel, so the allocation figure is ours.
func TestReadV10GzipBomb(t *testing.T) {
	bomb := gzipBomb(t, 64<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Read(bytes.NewReader(bomb), int64(len(bomb)), []string{"gzip"}, Limits{MaxDecoded: 1 << 20})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrDecodedTooLarge) {
		t.Fatalf("err = %v, want ErrDecodedTooLarge", err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("64 MiB bomb (%d bytes on the wire) under a 1 MiB cap: %d bytes allocated", len(bomb), alloc)
	if alloc > 2<<20 {
		t.Errorf("allocated %d bytes, want under 2 MiB", alloc)
	}
}

// zstdFrame returns a zstd frame (RFC 8878) whose header declares a window
// of 1<<windowLog bytes, holding content as one raw block.
func zstdFrame(windowLog int, content []byte) []byte {
	f := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, byte(windowLog-10) << 3}
	h := uint32(len(content))<<3 | 1 // raw block, last
	f = append(f, byte(h), byte(h>>8), byte(h>>16))
	return append(f, content...)
}

// V10: a zstd frame asking for a window over 8 MiB is refused.
func TestReadV10ZstdWindowCapped(t *testing.T) {
	t.Parallel()
	content := []byte("hello, zstd")
	for _, tt := range []struct {
		log int
		ok  bool
	}{{20, true}, {23, true}, {24, false}, {27, false}} {
		b, err := Read(bytes.NewReader(zstdFrame(tt.log, content)), -1, []string{"zstd"}, Limits{})
		if tt.ok {
			if err != nil || string(b.Envelope) != string(content) {
				t.Errorf("window 1<<%d: %v", tt.log, err)
			}
			continue
		}
		if !errors.Is(err, ErrCorrupt) || !errors.Is(err, zstd.ErrWindowSizeExceeded) {
			t.Errorf("window 1<<%d: err = %v, want ErrCorrupt wrapping zstd.ErrWindowSizeExceeded", tt.log, err)
		}
	}
}

// V12: a body that claims a coding but is not valid in it is refused.
func TestReadV12Corrupt(t *testing.T) {
	t.Parallel()
	garbage := []byte("this is not compressed at all, whatever the header says")
	for _, coding := range []string{"gzip", "deflate", "br", "zstd"} {
		_, err := Read(bytes.NewReader(garbage), -1, []string{coding}, Limits{})
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTruncated) {
			t.Errorf("%s over plain text: err = %v, want ErrCorrupt or ErrTruncated", coding, err)
		}
		var ce *CorruptError
		if errors.As(err, &ce) && ce.Coding != coding {
			t.Errorf("CorruptError.Coding = %q, want %q", ce.Coding, coding)
		}
	}
	trailing := append(enc(t, "gzip", page), "junk after the stream"...)
	if _, err := Read(bytes.NewReader(trailing), -1, []string{"gzip"}, Limits{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("gzip with trailing junk: err = %v, want ErrCorrupt", err)
	}
}

// BenchmarkReadGzipBomb reports the bytes allocated to refuse a 64 MiB gzip
// bomb under a 1 MiB cap (go test -bench GzipBomb -benchmem ./internal/decode).
func BenchmarkReadGzipBomb(b *testing.B) {
	bomb := gzipBomb(b, 64<<20)
	b.SetBytes(int64(len(bomb)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(bomb), int64(len(bomb)), []string{"gzip"}, Limits{MaxDecoded: 1 << 20}); !errors.Is(err, ErrDecodedTooLarge) {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadGzipPage reads an ordinary gzipped page.
func BenchmarkReadGzipPage(b *testing.B) {
	gz := enc(b, "gzip", page)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(gz), int64(len(gz)), []string{"gzip"}, Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A raw deflate stream whose first two bytes happen to form a valid zlib
// header is still decoded, by the raw fallback: a stored block whose header
// byte 0x78 and length byte 0x01 read as zlib's CMF and FLG.
func TestReadRawDeflateLookingLikeZlib(t *testing.T) {
	t.Parallel()
	raw := []byte{0x78, 0x01, 0x00, 0xfe, 0xff, 'A', 0x01, 0x00, 0x00, 0xff, 0xff}
	if _, err := zlib.NewReader(bytes.NewReader(raw)); err != nil {
		t.Fatalf("the zlib header is not accepted (%v): the test proves nothing", err)
	}
	b, err := Read(bytes.NewReader(raw), int64(len(raw)), []string{"deflate"}, Limits{})
	if err != nil || string(b.Envelope) != "A" {
		t.Fatalf("Read = %v, %v; want \"A\"", b, err)
	}
}
