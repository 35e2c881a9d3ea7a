package politetest

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"
)

// botUA is the identity of the test clients.
const botUA = "PoliteBot/1.0 (+https://bot.example/info; bot@bot.example)"

// testPolicy is the politeness the careful client claims and the auditor
// checks in these tests: a short stated interval (20 ms), the V9 header set,
// a User-Agent rule.
func testPolicy() Policy {
	return Policy{
		Interval:       20 * time.Millisecond,
		AllowedHeaders: []string{"User-Agent", "Accept", "Accept-Encoding"},
		UserAgent:      regexp.MustCompile(`^PoliteBot/\d`),
	}
}

// careful is a polite sequential client: one connection per host, exactly
// the three allowed headers, no cookies, and before each request it waits
// until `interval` after the previous response was read in full (its own
// pacing, not a test sleep). The audit then checks what arrived.
type careful struct {
	c        *http.Client
	interval time.Duration
	last     time.Time
}

func newCareful(w *Web, interval time.Duration) *careful {
	t := w.Transport()
	t.MaxConnsPerHost = 1
	t.DisableCompression = true
	return &careful{
		c: &http.Client{
			Transport:     t,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		interval: interval,
	}
}

// pace waits until the client's next start is allowed, or at least d after
// its last response.
func (p *careful) pace(d time.Duration) {
	if p.last.IsZero() {
		return
	}
	if wait := time.Until(p.last.Add(max(d, p.interval))); wait > 0 {
		t := time.NewTimer(wait)
		<-t.C
	}
}

func (p *careful) get(tb testing.TB, url string) (*http.Response, []byte) {
	tb.Helper()
	p.pace(0)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("User-Agent", botUA)
	req.Header.Set("Accept", "*/*")
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := p.c.Do(req)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	p.last = time.Now()
	if err != nil {
		tb.Fatalf("GET %s: body: %v", url, err)
	}
	return resp, body
}

// rudeGet sends one request with the given client and headers (a "User-Agent"
// key is sent as given, even empty) and reads the answer.
func rudeGet(tb testing.TB, c *http.Client, url string, hdr map[string]string) *http.Response {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func politeHeaders() map[string]string {
	return map[string]string{"User-Agent": botUA, "Accept": "*/*", "Accept-Encoding": "identity"}
}

// rudeClient is a plain client over the web's transport, with one
// connection per host and no compression unless the test changes it.
func rudeClient(w *Web) *http.Client {
	t := w.Transport()
	t.DisableCompression = true
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
