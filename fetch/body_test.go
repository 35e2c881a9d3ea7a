package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http/httptrace"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func gzipped(t *testing.T, p []byte, layers int) []byte {
	t.Helper()
	for range layers {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		if _, err := w.Write(p); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		p = b.Bytes()
	}
	return p
}

// TestGet_BodyDecodingBounded: a Content-Encoding of 12,000 × gzip is refused
// with ErrTooManyCodings before any decoding, and a body that takes long to
// inflate (four gzip layers over 48 MiB of zeros) stops decoding when the Get's
// context ends: the error matches the context's and comes with the Result of
// the response, whose status arrived in time.
func TestGet_BodyDecodingBounded(t *testing.T) {
	t.Parallel()
	many := gzipped(t, []byte("<p>x</p>"), 3)
	slow := gzipped(t, make([]byte, 48<<20), 4)
	srv := newRawServer(t, func(host, target string) string {
		head := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
		switch target {
		case "/robots.txt":
			return rawOK("")
		case "/many":
			return head + "Content-Encoding: " + strings.Repeat("gzip,", 12_000) + "\r\nContent-Length: " + itoa(len(many)) + "\r\n\r\n" + string(many)
		case "/slow":
			return head + "Content-Encoding: gzip, gzip, gzip, gzip\r\nContent-Length: " + itoa(len(slow)) + "\r\n\r\n" + string(slow)
		}
		return rawOK("ok")
	})
	p := testPolicy(Vault(), time.Millisecond)
	p.MaxDecoded = 64 << 20
	c, err := New(p, WithNetwork(Network{Resolver: srv, Dial: srv.dial, RootCAs: srv.roots, Allow: []netip.Prefix{loopback}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Get(ctx, "https://codings.example/warm"); err != nil { // robots.txt and the connection
		t.Fatal(err)
	}
	res, err := c.Get(ctx, "https://codings.example/many")
	if !errors.Is(err, ErrTooManyCodings) || res == nil || res.Body != nil {
		t.Fatalf("12,000 × gzip: err %v; want ErrTooManyCodings beside a Result without body", err)
	}
	if !errors.Is(res.Depositable(), ErrTooManyCodings) {
		t.Fatalf("Depositable = %v, want ErrTooManyCodings", res.Depositable())
	}
	// The Get's context ends as the response's first byte arrives: the
	// wire read (378 bytes) or the decoding (192 MiB inflated) meets its
	// end, and either way the Get stops with the context's error and the
	// Result of the response. net/http may see the cancellation before it
	// hands the response over (its read loop and the caller race), and the
	// Get then has no Result to return, which is right too: the Get is
	// tried until the response wins, and stops with the context's error
	// every time.
	for attempt := 1; ; attempt++ {
		cctx, cancel := context.WithCancel(ctx)
		cctx = httptrace.WithClientTrace(cctx, &httptrace.ClientTrace{GotFirstResponseByte: cancel})
		res, err = c.Get(cctx, "https://codings.example/slow")
		cancel()
		if !errors.Is(err, context.Canceled) || (res != nil && (res.Status != 200 || res.Body != nil || res.Proof != nil)) {
			t.Fatalf("slow inflate: err %v, result %+v; want the context's error and a Result with status 200, no body", err, res)
		}
		if res != nil {
			break
		}
		if attempt == 50 {
			t.Fatal("slow inflate: net/http saw the cancellation before the response in 50 tries")
		}
	}
}
