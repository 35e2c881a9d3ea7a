package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/robots"
)

// rtFunc is a RoundTripper from a function: the far end of a layer under test.
type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func answer(status int, body string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"text/plain"}},
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}
}

// trackedBody reports whether it was closed.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *trackedBody) Close() error { b.closed.Store(true); return nil }

// TestLayers_RoundTripperContract: every layer that refuses closes the request
// body and returns a typed error without calling the next layer; Identity never
// modifies the caller's request.
func TestLayers_RoundTripperContract(t *testing.T) {
	t.Parallel()
	sent := 0
	far := rtFunc(func(r *http.Request) (*http.Response, error) {
		sent++
		if r.URL.Path == "/robots.txt" {
			return answer(200, "User-agent: *\nDisallow: /private\n"), nil
		}
		return answer(200, "ok"), nil
	})
	cache := &robots.Cache{Transport: far, UserAgent: "TestBot"}
	ledger := &backoff.Ledger{Policy: backoff.Digest()}
	if _, err := ledger.Observe(context.Background(), "cool.example", backoff.Outcome{Status: 429}, time.Now()); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	busy := &pacer{Interval: time.Hour}
	if r, _, err := busy.waitTurn(context.Background(), "busy.example", 0); err != nil {
		t.Fatal(err)
	} else {
		defer r()
	}
	for _, tc := range []struct {
		name  string
		layer http.RoundTripper
		ctx   context.Context
		url   string
		want  error
	}{
		{"robots gate", &robotsGate{Robots: cache, Next: far}, context.Background(), "https://a.example/private/x", ErrRobots},
		{"ledger gate", &ledgerGate{Ledger: ledger, Next: far}, context.Background(), "https://cool.example/x", ErrCooldown},
		{"pacer", &pacer{Next: far}, cancelled, "https://busy.example/x", context.Canceled},
		{"pacer busy", busy, cancelled, "https://busy.example/x", context.Canceled},
		{"robots gate without robots", &robotsGate{Next: far}, context.Background(), "https://a.example/", errNoRobots},
	} {
		before := sent
		body := &trackedBody{Reader: strings.NewReader("payload")}
		req, _ := http.NewRequestWithContext(tc.ctx, http.MethodPost, tc.url, body)
		resp, err := tc.layer.RoundTrip(req)
		if !errors.Is(err, tc.want) || resp != nil {
			t.Errorf("%s: resp %v, err %v; want %v", tc.name, resp, err, tc.want)
		}
		if !body.closed.Load() {
			t.Errorf("%s: the request body was not closed", tc.name)
		}
		if sent != before && tc.name != "robots gate" {
			t.Errorf("%s: the next layer was called", tc.name)
		}
	}

	var seen http.Header
	id := &identityLayer{UserAgent: "TestBot/1 (+https://t.example)", Next: rtFunc(func(r *http.Request) (*http.Response, error) {
		seen = r.Header
		return answer(200, ""), nil
	})}
	req, _ := http.NewRequest(http.MethodGet, "https://a.example/", nil)
	req.Header.Set("Cookie", "a=b")
	req.Header.Set("Referer", "https://elsewhere.example/")
	req.Close = true
	if _, err := id.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if len(req.Header) != 2 || !req.Close {
		t.Errorf("Identity modified the caller's request: %v", req.Header)
	}
	if len(seen) != 3 || seen.Get("Cookie") != "" || seen.Get("Referer") != "" || seen.Get("Accept-Encoding") != "identity" {
		t.Errorf("Identity sent %v", seen)
	}
}

// TestValidators_D4_KeptOnlyWhenComplete: a 200's validators are kept once its body
// is read to the end, sent on the next GET (which the server answers 304), and not
// kept when the body was cut short.
func TestValidators_D4_KeptOnlyWhenComplete(t *testing.T) {
	t.Parallel()
	var conditionals atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cut" {
			hj, _ := w.(http.Hijacker)
			conn, buf, _ := hj.Hijack()
			defer conn.Close()
			buf.WriteString("HTTP/1.1 200 OK\r\nETag: \"cut\"\r\nContent-Length: 100\r\n\r\nshort")
			buf.Flush()
			return
		}
		if r.Header.Get("If-None-Match") == `"v1"` {
			conditionals.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		w.Write([]byte("feed body"))
	}))
	defer srv.Close()
	tr := &http.Transport{DialContext: (&net.Dialer{}).DialContext}
	defer tr.CloseIdleConnections()
	store := &MemoryStore{}
	v := &conditional{Next: tr, Store: store}
	get := func(path string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		resp, err := v.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	get("/feed")
	if got, ok, _ := store.Get(context.Background(), srv.URL+"/feed"); !ok || got.ETag != `"v1"` || got.LastModified == "" {
		t.Fatalf("validators kept: %+v, %v", got, ok)
	}
	if resp := get("/feed"); resp.StatusCode != http.StatusNotModified || conditionals.Load() != 1 {
		t.Fatalf("second GET: status %d, conditional %d", resp.StatusCode, conditionals.Load())
	}
	get("/cut")
	if _, ok, _ := store.Get(context.Background(), srv.URL+"/cut"); ok {
		t.Fatal("validators of a truncated body were kept")
	}
}

// TestConnSlots_D2_NextDialWaitsForClose: Go's transport frees a host's
// connection slot before it closes the old connection; the base transport's
// dialer therefore waits until the old connection's Close has returned before it
// dials the next one to that host, so two connections to one host are never open
// at once (D2, the auditor's connection rule). Other hosts are not held up; a
// dial that waits ends with its context; a host's entry goes with its last
// connection.
func TestConnSlots_D2_NextDialWaitsForClose(t *testing.T) {
	s := &connSlots{max: 1}
	ctx := context.Background()
	if err := s.acquire(ctx, "a.example:443"); err != nil {
		t.Fatal(err)
	}
	if err := s.acquire(ctx, "b.example:443"); err != nil {
		t.Fatalf("another host held up: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.acquire(cctx, "a.example:443"); !errors.Is(err, context.Canceled) {
		t.Fatalf("second connection to a host while the first is open: err %v, want context.Canceled", err)
	}
	got := make(chan error, 1)
	go func() { got <- s.acquire(ctx, "a.example:443") }()
	select {
	case err := <-got:
		t.Fatalf("dialled before the old connection closed (err %v)", err)
	default:
	}
	s.release("a.example:443") // the old connection's Close returned
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	s.release("a.example:443")
	s.release("b.example:443")
	s.mu.Lock()
	n := len(s.m)
	s.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d host entries left after every connection closed", n)
	}
}
