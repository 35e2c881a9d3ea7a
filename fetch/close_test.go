package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// pacerGoroutines returns the stacks of the goroutines running a pacer's
// code (the answer grace's background waits, the waits on open bodies).
func pacerGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("politefetch/fetch.(*pacer).")) {
			out = append(out, string(g))
		}
	}
	return out
}

// TestClose_NoGoroutineOutlivesIt: once Close has returned, no goroutine of
// the Client's is left: neither the background wait of a request its caller
// gave up on after it was written (which would otherwise live for its
// answer grace), nor the wait on a body left open, nor an answer goroutine
// waiting idle for the next request. The test is not
// parallel, so that no other test's pacer runs meanwhile.
func TestClose_NoGoroutineOutlivesIt(t *testing.T) {
	before := len(pacerGoroutines())
	web := politetest.NewWeb(t)
	s := web.Site("close.example")
	release := make(chan struct{})
	defer close(release)
	s.Handle("/hang", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	s.Handle("/open", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(bytes.Repeat([]byte("x"), 1<<20))
	}))
	// Two clients, one host each time: the abandoned request holds its
	// host's turn for its grace.
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err := c.Get(ctx, s.URL("/hang"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hanging request: err %v, want the caller's deadline", err)
	}
	c2 := newClient(t, web, testPolicy(Digest(), time.Millisecond))
	if _, err := c2.Get(context.Background(), s.URL("/open")); err != nil {
		t.Fatal(err) // its answer goroutine waits idle for the next request
	}
	resp, err := c2.HTTPClient().Get(s.URL("/open"))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp // its body left open
	if n := len(pacerGoroutines()); n <= before {
		t.Fatalf("%d pacer goroutines before Close, %d before the test: the test proves nothing", n, before)
	}
	c.Close()
	c2.Close()
	if g := pacerGoroutines(); len(g) > before {
		t.Errorf("%d goroutines of the Client outlive Close, %d before the test; first:\n%s", len(g), before, g[0])
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the open body was still readable in full after Close")
	}
	resp.Body.Close()
	// A closed Client sends nothing more.
	sent := len(web.Requests())
	if _, err := c2.Get(context.Background(), s.URL("/after")); err == nil {
		t.Error("a Get on a closed Client succeeded")
	}
	if n := len(web.Requests()); n != sent {
		t.Errorf("a closed Client sent %d requests", n-sent)
	}
}
