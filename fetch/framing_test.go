package fetch

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"
)

// rawClient is a Client over srv with policy p.
func rawClient(t *testing.T, srv *rawServer, p Policy) *Client {
	t.Helper()
	c, err := New(p, WithNetwork(Network{Resolver: srv, Dial: srv.dial, RootCAs: srv.roots, Allow: []netip.Prefix{loopback}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

const halfPage = "<html><body><p>first half of the story, and then"

// TestBody_V6_V12_CutWithoutCloseNotifyIsTruncated: an answer framed by
// neither Content-Length nor chunked coding ends when the connection does;
// over TLS, only a close_notify says the publisher meant it to end there. A
// TCP close without one (crypto/tls reports it as io.EOF, like a
// close_notify) is a truncated body: ErrTruncated, no proof, not
// depositable (V6, V12). The same answer ended by a close_notify is whole.
func TestBody_V6_V12_CutWithoutCloseNotifyIsTruncated(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(host, target string) string {
		head := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
		switch target {
		case "/robots.txt":
			return rawOK("User-agent: *\nAllow: /\n")
		case "/cut":
			return head + halfPage + rawCut
		}
		return head + halfPage + rawClose
	})
	c := rawClient(t, srv, testPolicy(Digest(), time.Millisecond))
	res, err := c.Get(context.Background(), "https://news.example/cut")
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("cut without close_notify: err %v, want ErrTruncated", err)
	}
	if res == nil || res.Complete() || res.Proof != nil || !errors.Is(res.Depositable(), ErrTruncated) {
		t.Fatalf("cut without close_notify: result %+v, want one not depositable, without a proof", res)
	}
	res, err = c.Get(context.Background(), "https://news.example/whole")
	if err != nil || !res.Complete() || res.Proof == nil || string(res.Body) != halfPage {
		t.Fatalf("ended by close_notify: %v %+v, want the whole body with its proof", err, res)
	}
}

// TestBody_V6_V12_BothLengthAndChunkedRefused: an answer declaring both a
// Content-Length and Transfer-Encoding: chunked is ambiguous (RFC 9112
// §6.3, a smuggling vector); it is refused, nothing of it is read as a body
// and nothing is deposited (V6, V12).
func TestBody_V6_V12_BothLengthAndChunkedRefused(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(host, target string) string {
		if target == "/robots.txt" {
			return rawOK("User-agent: *\nAllow: /\n")
		}
		return "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\ntransfer-encoding: chunked\r\n\r\n" +
			"5\r\nhello\r\n0\r\n\r\n"
	})
	c := rawClient(t, srv, testPolicy(Digest(), time.Millisecond))
	res, err := c.Get(context.Background(), "https://news.example/both")
	if err == nil || !errors.Is(err, errFraming) {
		t.Fatalf("both framings: err %v, want the framing refusal", err)
	}
	if res != nil && (res.Complete() || res.Proof != nil) {
		t.Fatalf("both framings: a depositable result %+v", res)
	}
	// Doers refuse it too.
	req := mustRequest(t, "https://news.example/both-feed")
	if resp, err := c.Doer(KindFeed).Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a Doer read an answer with both framings")
	}
}

// TestBody_V6_TimeoutDuringBodyIsTruncatedAndDeadline: when the policy's
// Timeout runs out while the body is read, the error says both what became
// of the body (ErrTruncated) and why (context.DeadlineExceeded), and the
// Result is not depositable (V6).
func TestBody_V6_TimeoutDuringBodyIsTruncatedAndDeadline(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(host, target string) string {
		if target == "/robots.txt" {
			return rawOK("User-agent: *\nAllow: /\n")
		}
		return "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000\r\n\r\n" + halfPage + rawHang
	})
	p := testPolicy(Digest(), time.Millisecond)
	p.Timeout = 300 * time.Millisecond
	c := rawClient(t, srv, p)
	res, err := c.Get(context.Background(), "https://news.example/slow")
	if !errors.Is(err, ErrTruncated) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("time-out during the body: err %v, want ErrTruncated and context.DeadlineExceeded", err)
	}
	if res == nil || res.Complete() || res.Proof != nil {
		t.Fatalf("time-out during the body: result %+v, want one not depositable", res)
	}
}
