package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// get sends a GET for url through hc and reads the body; it returns the status
// (0 on error) and the error.
func get(hc *http.Client, url string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", "AloneBot/1 (+https://alone.example/bot)")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// TestLayersAlone: each exported layer does its job on its own, as the only
// layer of a plain http.Client over net/http's transport (a politetest web's),
// with none of the Client's other layers around it.
func TestLayersAlone(t *testing.T) {
	t.Parallel()

	t.Run("pacer", func(t *testing.T) {
		// Eight goroutines, one host: starts an interval apart, one in
		// flight, over connections net/http dials, reuses and closes itself
		// (the pacer learns each moment from net/http's trace hooks).
		t.Parallel()
		web := politetest.NewWeb(t)
		s := web.Site("pacer-alone.example")
		tr := web.Transport()
		defer tr.CloseIdleConnections()
		const interval = 50 * time.Millisecond
		hc := &http.Client{Transport: &pacer{Interval: interval, Next: tr}}
		var paths []string
		for range 8 {
			paths = append(paths, s.AddArticle(politetest.Article{}).Path)
		}
		var wg sync.WaitGroup
		for _, path := range paths {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if st, err := get(hc, s.URL(path)); err != nil || st != 200 {
					t.Errorf("GET: %d, %v", st, err)
				}
			}()
		}
		wg.Wait()
		rep := web.Audit(politetest.Policy{Interval: interval, MaxInFlight: 1, Slack: auditSlack(interval),
			UserAgent: regexp.MustCompile(`^AloneBot/1`), Ignore: []politetest.Rule{politetest.RuleRobotsFirst}})
		if !rep.OK() || rep.Requests != 8 {
			t.Fatalf("%d requests: %v", rep.Requests, rep)
		}
	})

	t.Run("PacerOverOwnTLSDialer", func(t *testing.T) {
		// A transport that makes its TLS connections itself, and hides
		// them from net/http, reports a connect but no handshake: the
		// pacer must not keep the turn held for a handshake it never hears
		// of.
		t.Parallel()
		web := politetest.NewWeb(t)
		s := web.Site("own-tls.example")
		tr := &http.Transport{DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			raw, err := web.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			host, _, _ := net.SplitHostPort(addr)
			conn := tls.Client(raw, &tls.Config{ServerName: host, RootCAs: web.RootCAs(), NextProtos: []string{"http/1.1"}})
			if err := conn.HandshakeContext(ctx); err != nil {
				raw.Close()
				return nil, err
			}
			return struct{ net.Conn }{conn}, nil // not a *tls.Conn: net/http reports no handshake either
		}, DisableKeepAlives: true}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: &pacer{Interval: time.Millisecond, Next: tr}, Timeout: 10 * time.Second}
		for range 3 {
			a := s.AddArticle(politetest.Article{})
			if st, err := get(hc, s.URL(a.Path)); err != nil || st != 200 {
				t.Fatalf("GET: %d, %v", st, err)
			}
		}
	})

	t.Run("robotsGate", func(t *testing.T) {
		// robots.txt is read once, through the robotsChecker's own
		// transport; a disallowed URL is refused with nothing sent.
		t.Parallel()
		web := politetest.NewWeb(t)
		s := web.Site("robots-alone.example")
		s.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /private/\n"})
		a := s.AddArticle(politetest.Article{})
		tr := web.Transport()
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: &robotsGate{Robots: &robots.Cache{Transport: tr, UserAgent: "AloneBot"}, Next: tr}}
		if st, err := get(hc, s.URL(a.Path)); err != nil || st != 200 {
			t.Fatalf("allowed page: %d, %v", st, err)
		}
		_, err := get(hc, s.URL("/private/x"))
		var re *RefusedError
		if !errors.As(err, &re) || re.Reason != Robots || !errors.Is(err, ErrRobots) {
			t.Fatalf("disallowed page: %v, want a Robots refusal", err)
		}
		if requested(web, "robots-alone.example", "/private/x") || len(web.Requests()) != 2 {
			t.Fatalf("requests: %d, the disallowed page among them: %v", len(web.Requests()), requested(web, "robots-alone.example", "/private/x"))
		}
	})

	t.Run("Identity", func(t *testing.T) {
		// Exactly the identity headers reach the web, whatever the
		// caller's request carried.
		t.Parallel()
		web := politetest.NewWeb(t)
		s := web.Site("identity-alone.example")
		a := s.AddArticle(politetest.Article{})
		tr := web.Transport()
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: &identityLayer{UserAgent: "AloneBot/2 (+https://alone.example/bot)", Next: tr}}
		req, _ := http.NewRequest(http.MethodGet, s.URL(a.Path), nil)
		req.Header.Set("Cookie", "session=1")
		req.Header.Set("X-Debug", "1")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		rep := web.Audit(politetest.Policy{AllowedHeaders: []string{"User-Agent", "Accept", "Accept-Encoding"},
			UserAgent: regexp.MustCompile(`^AloneBot/2 `), Ignore: []politetest.Rule{politetest.RuleRobotsFirst}})
		if !rep.OK() || rep.Requests != 1 {
			t.Fatalf("%d requests: %v", rep.Requests, rep)
		}
	})

	t.Run("conditional", func(t *testing.T) {
		// A feed read twice: the second GET carries the first's
		// validators and is answered 304.
		t.Parallel()
		web := politetest.NewWeb(t)
		s := web.Site("conditional-alone.example")
		s.AddArticle(politetest.Article{})
		tr := web.Transport()
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: &conditional{Next: tr}}
		for i, want := range []int{http.StatusOK, http.StatusNotModified} {
			if st, err := get(hc, s.URL("/feed.xml")); err != nil || st != want {
				t.Fatalf("read %d of the feed: %d, %v; want %d", i+1, st, err, want)
			}
		}
	})

	t.Run("ledgerGate", func(t *testing.T) {
		// A 429 with Retry-After comes back as a 429; the host's next
		// request is refused with its cool-down's end, and not sent.
		t.Parallel()
		web := politetest.NewWeb(t)
		s := web.Site("ledger-alone.example")
		a := s.AddArticle(politetest.Article{})
		b := s.AddArticle(politetest.Article{})
		s.Misbehave(a.Path, politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: time.Hour})
		tr := web.Transport()
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: &ledgerGate{Ledger: &backoff.Ledger{Policy: backoff.Digest()}, Next: tr}}
		if st, err := get(hc, s.URL(a.Path)); err != nil || st != http.StatusTooManyRequests {
			t.Fatalf("refused page: %d, %v; want the 429 as a response", st, err)
		}
		_, err := get(hc, s.URL(b.Path))
		var re *RefusedError
		if !errors.As(err, &re) || re.Reason != Cooldown || re.Until.Before(time.Now().Add(59*time.Minute)) {
			t.Fatalf("next page: %v, want a Cooldown refusal until an hour from now", err)
		}
		if requested(web, "ledger-alone.example", b.Path) {
			t.Fatal("the request in the cool-down was sent")
		}
	})
}
