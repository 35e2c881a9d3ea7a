package politetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// raw sends one GET with the given client and returns the response, its body
// (as far as it could be read), and the read error.
func raw(t *testing.T, c *http.Client, url string) (*http.Response, []byte, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("User-Agent", botUA)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

func TestMisbehaviourOnTheWire(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("rude.example")
	w.Site("www.rude.example")
	s.AddArticle(Article{ID: 1, Path: "/a/"})
	c := w.Client() // does not follow redirects
	follow := &http.Client{Transport: w.Transport()}

	_, normal, _ := raw(t, c, s.URL("/a/"))
	if len(normal) < 500 {
		t.Fatalf("normal page too short: %d", len(normal))
	}

	for _, tc := range []struct {
		name  string
		b     Behaviour
		check func(t *testing.T, resp *http.Response, body []byte, err error)
	}{
		{"429 seconds", Behaviour{Kind: TooManyRequests, RetryAfter: 90 * time.Second}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "90" {
				t.Errorf("%d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
		}},
		{"503 date", Behaviour{Kind: Unavailable, RetryAfter: time.Hour, RetryAfterDate: true}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			at, perr := http.ParseTime(resp.Header.Get("Retry-After"))
			if resp.StatusCode != 503 || perr != nil || time.Until(at) < 59*time.Minute || time.Until(at) > 61*time.Minute {
				t.Errorf("%d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
		}},
		{"401", Behaviour{Kind: Unauthorized}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%d %v", resp.StatusCode, resp.Header)
			}
		}},
		{"403", Behaviour{Kind: Forbidden}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 403 {
				t.Errorf("%d", resp.StatusCode)
			}
		}},
		{"502", Behaviour{Kind: ServerError, Status: 502}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 502 {
				t.Errorf("%d", resp.StatusCode)
			}
		}},
		{"challenge 403", Behaviour{Kind: Challenge}, checkChallenge(403)},
		{"challenge 503", Behaviour{Kind: Challenge, Status: 503}, checkChallenge(503)},
		{"slow first byte", Behaviour{Kind: SlowFirstByte, Delay: 30 * time.Millisecond}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 200 || !bytes.Equal(body, normal) {
				t.Errorf("%d, %d bytes", resp.StatusCode, len(body))
			}
		}},
		{"trickle", Behaviour{Kind: Trickle, Chunk: 512, Delay: time.Millisecond}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, normal) {
				t.Errorf("%d, %d bytes, %v", resp.StatusCode, len(body), err)
			}
		}},
		{"truncate", Behaviour{Kind: Truncate}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if !errors.Is(err, io.ErrUnexpectedEOF) || resp.ContentLength != int64(len(normal)) || len(body) != len(normal)/2 {
				t.Errorf("err %v, Content-Length %d, got %d bytes of %d", err, resp.ContentLength, len(body), len(normal))
			}
		}},
		{"unknown encoding", Behaviour{Kind: UnknownEncoding}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.Header.Get("Content-Encoding") != "x-politetest" || !bytes.Equal(body, normal) {
				t.Errorf("Content-Encoding %q, %d bytes", resp.Header.Get("Content-Encoding"), len(body))
			}
		}},
		{"gzip bomb", Behaviour{Kind: GzipBomb, Size: 8 << 20}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if err != nil || resp.Header.Get("Content-Encoding") != "gzip" || len(body) > 64<<10 {
				t.Fatalf("Content-Encoding %q, %d wire bytes, %v", resp.Header.Get("Content-Encoding"), len(body), err)
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, zr)
			if err != nil || n != 8<<20 {
				t.Errorf("inflated to %d bytes (%v), want %d from %d", n, err, 8<<20, len(body))
			}
		}},
		{"oversize", Behaviour{Kind: Oversize, Size: 3 << 20}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if err != nil || len(body) != 3<<20 || resp.ContentLength != 3<<20 {
				t.Errorf("%d bytes, Content-Length %d, %v", len(body), resp.ContentLength, err)
			}
		}},
		{"no content type", Behaviour{Kind: NoContentType}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if _, ok := resp.Header["Content-Type"]; ok || !bytes.Equal(body, normal) {
				t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
			}
		}},
		{"redirect loop", Behaviour{Kind: RedirectLoop}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 302 || resp.Header.Get("Location") != "/a/?loop=1" {
				t.Errorf("%d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			if _, _, err := raw(t, follow, s.URL("/a/")); err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
				t.Errorf("following the loop: %v", err)
			}
		}},
		{"redirect to http", Behaviour{Kind: RedirectToHTTP}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 301 || resp.Header.Get("Location") != "http://rude.example/a/" {
				t.Errorf("%d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			r2, b2, err2 := raw(t, follow, s.URL("/a/"))
			if err2 != nil {
				t.Fatal(err2)
			}
			if r2.StatusCode != 200 || r2.Request.URL.Scheme != "http" || !bytes.Equal(b2, normal) {
				t.Errorf("following to http ended at %v with %d", r2.Request.URL, r2.StatusCode)
			}
			reqs := w.Requests()
			if last := reqs[len(reqs)-1]; last.TLS || last.Path != "/a/" {
				t.Errorf("last request %+v, want plain http", last)
			}
		}},
		{"redirect to host", Behaviour{Kind: RedirectToHost}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 301 || resp.Header.Get("Location") != "https://www.rude.example/a/" {
				t.Errorf("%d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
		}},
		{"redirect adds param", Behaviour{Kind: RedirectAddParam}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 302 || resp.Header.Get("Location") != "/a/?utm_source=politetest" {
				t.Errorf("%d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			r2, _, err2 := raw(t, follow, s.URL("/a/"))
			if err2 != nil {
				t.Fatal(err2)
			}
			if r2.StatusCode != 200 || r2.Request.URL.RawQuery != "utm_source=politetest" {
				t.Errorf("following ended at %v with %d", r2.Request.URL, r2.StatusCode)
			}
		}},
		{"redirect chain", Behaviour{Kind: RedirectChain, Hops: 4}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 302 || resp.Header.Get("Location") != "/a/?hop=1" {
				t.Errorf("%d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			before := len(w.Requests())
			r2, _, err2 := raw(t, follow, s.URL("/a/"))
			if err2 != nil {
				t.Fatal(err2)
			}
			if r2.StatusCode != 200 || r2.Request.URL.RawQuery != "hop=4" || len(w.Requests())-before != 5 {
				t.Errorf("following ended at %v with %d after %d requests", r2.Request.URL, r2.StatusCode, len(w.Requests())-before)
			}
		}},
		{"set cookie", Behaviour{Kind: SetCookie}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if len(resp.Cookies()) != 1 || !bytes.Equal(body, normal) {
				t.Errorf("cookies %v", resp.Cookies())
			}
		}},
		{"reset", Behaviour{Kind: Reset}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if err == nil {
				t.Errorf("reset gave %v", resp.Status)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.Misbehave("/a/", tc.b)
			defer s.Misbehave("/a/", Behaviour{})
			resp, body, err := raw(t, c, s.URL("/a/"))
			if resp == nil && tc.b.Kind != Reset {
				t.Fatalf("no response: %v", err)
			}
			tc.check(t, resp, body, err)
		})
	}
}

// Hang holds the client until it gives up; the record shows no answer.
func TestMisbehaviourHang(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("hang.example")
	s.Misbehave("/feed.xml", Behaviour{Kind: Hang})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL("/feed.xml"), nil)
	if _, err := w.Client().Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the client's deadline", err)
	}
	for _, r := range w.Requests() {
		if r.Status != 0 {
			t.Errorf("hung request recorded with status %d", r.Status)
		}
	}
}

func checkChallenge(status int) func(t *testing.T, resp *http.Response, body []byte, err error) {
	return func(t *testing.T, resp *http.Response, body []byte, err error) {
		h := resp.Header
		if resp.StatusCode != status || h.Get("Server") != "cloudflare" || h.Get("cf-mitigated") != "challenge" || h.Get("cf-ray") == "" {
			t.Errorf("%d %v", resp.StatusCode, h)
		}
		for _, want := range []string{"Just a moment...", "challenge-platform", "_cf_chl_opt"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("body lacks %q", want)
			}
		}
	}
}

func TestMisbehaviourTimesAndStar(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("x.example")
	c := w.Client()
	s.Misbehave("/feed.xml", Behaviour{Kind: TooManyRequests, Times: 2})
	s.Misbehave("*", Behaviour{Kind: Forbidden})
	var got []int
	for _, p := range []string{"/feed.xml", "/feed.xml", "/feed.xml", "/atom.xml", "/robots.txt"} {
		resp, _, err := raw(t, c, s.URL(p))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.StatusCode)
	}
	// Two 429s, then the path's behaviour is spent and "*" governs it;
	// robots.txt is governed by SetRobots only.
	if want := []int{429, 429, 200, 403, 200}; !equalInts(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRobotsAnswers_R1_S3_V11(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	c := w.Client()
	follow := &http.Client{Transport: w.Transport()}
	for _, tc := range []struct {
		name   string
		r      Robots
		status int
		body   string
		fail   bool
	}{
		{"body", Robots{Body: "User-agent: *\nDisallow: /x\n"}, 200, "User-agent: *\nDisallow: /x\n", false},
		{"404", Robots{Status: 404}, 404, "", false},
		{"401", Robots{Status: 401}, 401, "", false},
		{"500", Robots{Status: 500, Body: "oops"}, 500, "oops", false},
		{"reset", Robots{Failure: FailReset}, 0, "", true},
		{"redirect chain", Robots{Redirects: 5, Body: "User-agent: *\nAllow: /\n"}, 200, "User-agent: *\nAllow: /\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := w.Site(strings.ReplaceAll(tc.name, " ", "-") + ".example")
			s.SetRobots(tc.r)
			resp, body, err := raw(t, follow, s.URL("/robots.txt"))
			if tc.fail {
				if err == nil {
					t.Fatalf("got %s, want a failure", resp.Status)
				}
				return
			}
			if err != nil || resp.StatusCode != tc.status || string(body) != tc.body {
				t.Fatalf("%v: %v %q", err, resp.Status, body)
			}
			if tc.r.Redirects > 0 {
				if resp.Request.URL.RawQuery != "hop=5" {
					t.Errorf("ended at %v", resp.Request.URL)
				}
				first, _, _ := raw(t, c, s.URL("/robots.txt"))
				if first.StatusCode != 301 || first.Header.Get("Location") != "/robots.txt?hop=1" {
					t.Errorf("first hop %d %q", first.StatusCode, first.Header.Get("Location"))
				}
			}
		})
	}
}

// A hanging robots.txt holds the client until it gives up, and never blocks
// Close (V11: "unreachable").
func TestRobotsTimeoutAndCloseDoesNotBlock(t *testing.T) {
	t.Parallel()
	w, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	s := w.Site("slow.example")
	s.SetRobots(Robots{Failure: FailTimeout})
	c := w.Client()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL("/robots.txt"), nil)
	if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hanging robots.txt: %v, want the client's deadline", err)
	}

	// One more hang, still in flight when the web closes.
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, s.URL("/robots.txt"), nil)
		close(started)
		_, err := c.Do(req)
		done <- err
	}()
	<-started
	// (The first request may never have arrived: the deadline can fire
	// during the TLS handshake. Wait for one that is in flight.)
	for inFlight := false; !inFlight; {
		for _, r := range w.Requests() {
			inFlight = inFlight || r.Finished.IsZero()
		}
		tick := time.NewTimer(time.Millisecond)
		<-tick.C
	}
	w.Close() // must return although a handler is hanging
	if err := <-done; err == nil {
		t.Fatal("the hanging request got an answer")
	}
	for _, r := range w.Requests() {
		if r.Status != 0 || r.Finished.IsZero() {
			t.Errorf("hung request recorded as %d finished %v", r.Status, r.Finished)
		}
	}
}
