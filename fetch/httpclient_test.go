package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestHTTPClient_V10_ServiceAdoption: a service keeps its own http.Client code on
// HTTPClient(): robots, pacing and the redirect policy still apply.
func TestHTTPClient_V10_ServiceAdoption(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("service.example")
	a := s.AddArticle(politetest.Article{})
	s.Misbehave("/away", politetest.Behaviour{Kind: politetest.RedirectToHTTP})
	p := testPolicy(Vault(), auditInterval)
	c := newClient(t, web, p)
	hc := c.HTTPClient()
	if hc.Jar != nil || hc.Timeout != DefaultTimeout {
		t.Fatalf("jar %v, timeout %v", hc.Jar, hc.Timeout)
	}
	resp, err := hc.Get(s.URL(a.Path))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(body) == 0 || resp.TLS == nil {
		t.Fatalf("status %d, %d bytes, TLS %v", resp.StatusCode, len(body), resp.TLS != nil)
	}
	if _, err := hc.Get(s.URL("/away")); err == nil {
		t.Fatal("a redirect to http was followed")
	} else {
		refusal(t, err, NotHTTPS)
	}
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Fatal(rep)
	}
}

// TestHTTPClient_D4_NeverConditionalUnasked: a caller of HTTPClient who sends
// no conditional header gets a 200 with the body on every read, although the
// chain holds validators for the URL; one who sends If-None-Match gets the
// server's 304.
func TestHTTPClient_D4_NeverConditionalUnasked(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("plain.example")
	s.AddArticle(politetest.Article{})
	p := testPolicy(Digest(), auditInterval)
	c := newClient(t, web, p)
	if res, err := c.Get(context.Background(), s.URL("/feed.xml"), GetOptions{Kind: KindFeed}); err != nil || !res.Complete() {
		t.Fatalf("Get: %v", err)
	}
	hc := c.HTTPClient()
	var etag string
	for i := range 2 {
		resp, err := hc.Get(s.URL("/feed.xml"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Fatalf("plain read %d: status %d, %d bytes", i+1, resp.StatusCode, len(body))
		}
		etag = resp.Header.Get("ETag")
	}
	for _, r := range web.Requests()[2:] {
		if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
			t.Fatalf("a plain read went out conditional: %v", r.Header)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL("/feed.xml"), nil)
	req.Header.Set("If-None-Match", etag)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("asked conditional read: status %d, want 304", resp.StatusCode)
	}
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Fatal(rep)
	}
}

// TestHTTPClient_RefusesWhatItCannotSend: a method other than GET or HEAD, a
// body, or a header that would change the request's meaning is refused with a
// *RequestError and nothing is sent; harmless headers are dropped and the
// caller's Accept is sent.
func TestHTTPClient_RefusesWhatItCannotSend(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("service.example")
	a := s.AddArticle(politetest.Article{})
	p := testPolicy(Vault(), auditInterval)
	c := newClient(t, web, p)
	hc := c.HTTPClient()
	for _, tc := range []struct {
		name   string
		method string
		body   io.Reader
		header string
		want   error
	}{
		{"post", http.MethodPost, http.NoBody, "", ErrUnsupportedMethod},
		{"put", http.MethodPut, nil, "", ErrUnsupportedMethod},
		{"get with a body", http.MethodGet, stringsReader("q=1"), "", ErrRequestBody},
		{"authorization", http.MethodGet, nil, "Authorization", ErrUnsupportedHeader},
		{"cookie", http.MethodGet, nil, "Cookie", ErrUnsupportedHeader},
		{"range", http.MethodGet, nil, "Range", ErrUnsupportedHeader},
		{"api key", http.MethodGet, nil, "X-Api-Key", ErrUnsupportedHeader},
	} {
		req, err := http.NewRequest(tc.method, s.URL(a.Path), tc.body)
		if err != nil {
			t.Fatal(err)
		}
		if tc.header != "" {
			req.Header.Set(tc.header, "secret")
		}
		_, err = hc.Do(req)
		var re *RequestError
		if !errors.As(err, &re) || !errors.Is(err, tc.want) || re.Header != tc.header {
			t.Errorf("%s: err = %v, want a *RequestError matching %v", tc.name, err, tc.want)
		}
		if _, err := c.Doer(KindFeed).Do(req); !errors.Is(err, tc.want) {
			t.Errorf("%s through a Doer: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	if n := len(web.Requests()); n != 0 {
		t.Fatalf("%d requests reached the web", n)
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL(a.Path), nil)
	req.Header.Set("X-Request-Id", "42")
	req.Header.Set("User-Agent", "curl/8")
	req.Header.Set("Accept", "text/html")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reqs := web.Requests()
	got := reqs[len(reqs)-1].Header
	if got.Get("Accept") != "text/html" || got.Get("X-Request-Id") != "" || got.Get("User-Agent") != p.UserAgent() {
		t.Fatalf("sent %v", got)
	}
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Fatal(rep)
	}
}

// TestHTTPClient_CallerContextEndsAnOpenBody: once the answer has come, the
// caller's context still bounds the body: a read blocked on a server that
// sent the headers and part of the body, then nothing, returns the caller's
// error when the caller cancels, and the server sees the connection go. (A
// page's answer comes only with the start of its body, which the ledger
// gate reads for a challenge: this answer is JSON.)
func TestHTTPClient_CallerContextEndsAnOpenBody(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("stall.example")
	gone := make(chan struct{})
	s.Handle("/stall", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json") // not a page: the ledger gate does not peek
		io.WriteString(w, `{"first": "part"`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}))
	c := newClient(t, web, testPolicy(Vault(), auditInterval))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL("/stall"), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, len(`{"first": "part"`))
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatalf("first part: %v", err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := resp.Body.Read(make([]byte, 64))
		read <- err
	}()
	cancel()
	select {
	case err := <-read:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("read after the caller cancelled: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a read of an open body outlived its caller's context")
	}
	<-gone
}
