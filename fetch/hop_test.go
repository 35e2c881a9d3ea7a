package fetch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptrace"
	"testing"
)

// TestHopRecorder_HooksAfterEarlyReturn: net/http returns from RoundTrip as
// soon as a request's context is done, while its read and write loops may
// still run the request's trace hooks (GotConn, WroteRequest,
// GotFirstResponseByte). The hop recorder must not read what those hooks
// write without synchronisation. The far end here does what the transport
// does: it returns the context's error at once and runs the hooks from
// another goroutine afterwards. The race detector reports the data race
// (go test -race); without it the test checks only that the error comes back
// untouched.
func TestHopRecorder_HooksAfterEarlyReturn(t *testing.T) {
	t.Parallel()
	hooksDone := make(chan struct{}, 1)
	far := rtFunc(func(r *http.Request) (*http.Response, error) {
		trace := httptrace.ContextClientTrace(r.Context())
		client, server := net.Pipe()
		go func() {
			defer func() { hooksDone <- struct{}{} }()
			defer client.Close()
			defer server.Close()
			trace.GotConn(httptrace.GotConnInfo{Conn: client})
			trace.WroteRequest(httptrace.WroteRequestInfo{})
			trace.GotFirstResponseByte()
		}()
		return nil, context.Canceled
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	call := &callInfo{}
	call.rec = &call.recorder
	req, _ := http.NewRequestWithContext(withCall(ctx, call), http.MethodGet, "https://a.example/", nil)
	for range 50 { // several rounds, so the detector sees the accesses interleave
		if _, err := (&hopRecorder{next: far}).RoundTrip(req); err != context.Canceled {
			t.Fatalf("err %v, want context.Canceled", err)
		}
		<-hooksDone
	}
}
