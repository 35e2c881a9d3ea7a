package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/politetest"
)

// read sends a GET for u through d and returns the status and the body.
func read(t *testing.T, d Doer, u string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := d.Do(req)
	if err != nil {
		t.Fatalf("Do(%s): %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

// TestDoer_S4_SuspendedHostFeedStillRead: a Doer bound to KindFeed reads the
// feed of a host whose articles are suspended, and the ledger counts it as a
// feed; a Doer bound to KindArticle is refused with Suspended (S4).
func TestDoer_S4_SuspendedHostFeedStillRead(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("suspended.example")
	a := s.AddArticle(politetest.Article{})
	p := testPolicy(StrictNews(), auditInterval)
	c := newClient(t, web, p)
	ctx := context.Background()
	now := time.Now()
	for i := range 5 { // five refusals, long enough ago for the cool-downs to have ended
		at := now.Add(-20*time.Hour + time.Duration(i)*3*time.Hour)
		if _, err := c.ledger.Observe(ctx, "suspended.example", backoff.Outcome{Kind: backoff.Article, Status: 403}, at); err != nil {
			t.Fatal(err)
		}
	}
	if status, _, body := read(t, c.Doer(KindFeed), s.URL("/feed.xml")); status != 200 || len(body) == 0 {
		t.Fatalf("feed of a suspended host: status %d, %d bytes", status, len(body))
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL(a.Path), nil)
	if _, err := c.Doer(KindArticle).Do(req); err == nil {
		t.Fatal("an article of a suspended host was read")
	} else {
		refusal(t, err, Suspended)
	}
	if requested(web, "suspended.example", a.Path) {
		t.Fatal("the suspended article was requested")
	}
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Fatal(rep)
	}
}

// TestDoer_D4_ConditionalAndDecoded: a Doer's second read of an unchanged feed
// goes out conditional and comes back as a 304 with an empty body (D4); its
// bodies arrive with their content-codings removed.
func TestDoer_D4_ConditionalAndDecoded(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("feeds.example")
	s.AddArticle(politetest.Article{})
	s.Misbehave("/packed.xml", politetest.Behaviour{Kind: politetest.GzipBomb, Size: 5000})
	p := testPolicy(Digest(), auditInterval)
	c := newClient(t, web, p)
	d := c.Doer(KindFeed)
	if status, _, body := read(t, d, s.URL("/feed.xml?utm_source=x")); status != 200 || len(body) == 0 {
		t.Fatalf("first read: status %d, %d bytes", status, len(body))
	}
	status, _, body := read(t, d, s.URL("/feed.xml"))
	if status != http.StatusNotModified || len(body) != 0 {
		t.Fatalf("second read: status %d, %d bytes; want a 304 with no body", status, len(body))
	}
	reqs := web.Requests()
	if last := reqs[len(reqs)-1]; last.Header.Get("If-None-Match") == "" || last.Path != "/feed.xml" || last.Query != "" {
		t.Fatalf("second read went out as %s?%s with If-None-Match %q", last.Path, last.Query, last.Header.Get("If-None-Match"))
	}
	status, h, body := read(t, d, s.URL("/packed.xml"))
	if status != 200 || len(body) < 5000 || h.Get("Content-Encoding") != "" || h.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Fatalf("gzip body: status %d, %d bytes, Content-Encoding %q, Content-Length %q", status, len(body), h.Get("Content-Encoding"), h.Get("Content-Length"))
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
	if res, err := c.Get(context.Background(), s.URL("/feed.xml"), AsKind(KindFeed)); err != nil || !res.Complete() {
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
