package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// redirectTo answers with a 302 to loc, written as it is.
func redirectTo(loc string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", loc)
		w.WriteHeader(http.StatusFound)
	})
}

// TestRobots_R1_V10_RefusedRedirectRecorded: a robots.txt that redirects to a
// target the chain refuses before sending (a non-canonical literal, a
// percent-encoded host, a name resolving to a non-public address) is the
// host's answer: robots.txt is unreachable, the site is disallowed until the
// retry interval has passed (RFC 9309), and five Gets ask for robots.txt once,
// not five times. The refusal says robots.txt is unreachable
// (ErrRobotsUnreachable), with the redirect as its cause; nothing is ever
// dialled at the refused target.
func TestRobots_R1_V10_RefusedRedirectRecorded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, loc string
	}{
		{"NonCanonicalLiteral", "https://0x7f.1/robots.txt"},
		{"PercentEncodedHost", "https://%31%32%37.0.0.1/robots.txt"},
		{"LoopbackName", "https://inside.example/robots.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web := politetest.NewWeb(t)
			s := web.Site("moved.example")
			s.Handle("/robots.txt", redirectTo(tc.loc))
			a := s.AddArticle(politetest.Article{})
			web.Site("inside.example").ResolveTo(netip.MustParseAddr("10.0.0.1")) // not a public address
			c := newClient(t, web, testPolicy(Vault(), time.Millisecond))
			ctx := context.Background()
			start := time.Now()
			var first *RefusedError
			for i := range 5 {
				_, err := c.Get(ctx, s.URL(a.Path))
				var re *RefusedError
				if !errors.As(err, &re) || re.Reason != Robots {
					t.Fatalf("Get %d: %v, want a robots refusal", i, err)
				}
				if i == 0 {
					first = re
				}
			}
			if n := countRobots(web, "moved.example"); n != 1 {
				t.Fatalf("robots.txt asked %d times in 5 Gets, want once", n)
			}
			if !errors.Is(first, ErrRobotsUnreachable) {
				t.Errorf("the refusal does not say robots.txt is unreachable: %v", first)
			}
			if tc.name != "PercentEncodedHost" && !errors.Is(first, robots.ErrRedirectNotRequested) {
				t.Errorf("the refusal does not name the redirect: %v", first)
			}
			if d := first.Until.Sub(start); d < 14*time.Minute || d > 16*time.Minute {
				t.Errorf("refused until +%v, want the retry interval, +15m", d)
			}
			for _, r := range web.Requests() {
				if r.Host != "moved.example" {
					t.Errorf("the refused target was requested: %s %s", r.Host, r.Path)
				}
			}
		})
	}
}

// countRobots counts the robots.txt requests host received.
func countRobots(web *politetest.Web, host string) int {
	n := 0
	for _, r := range web.Requests() {
		if r.Host == host && r.Path == "/robots.txt" {
			n++
		}
	}
	return n
}

// TestRobots_S3_UnreachableSaysSo: a robots.txt that cannot be read (a reset
// connection, no such host, a 503) still disallows the site (RFC 9309), and
// the refusal says robots.txt is unreachable (ErrRobotsUnreachable, beside
// ErrRobots), with its cause and when it is asked again; a robots.txt that
// was read and forbids the URL, or a 403 that the strict policy reads as a
// refusal, is not "unreachable".
func TestRobots_S3_UnreachableSaysSo(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	reset := web.Site("reset.example")
	reset.SetRobots(politetest.Robots{Failure: politetest.FailReset})
	down := web.Site("down.example")
	down.SetRobots(politetest.Robots{Status: 503})
	forbidden := web.Site("forbidden.example")
	forbidden.SetRobots(politetest.Robots{Status: 403})
	rule := web.Site("rule.example")
	rule.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /\n"})
	c := newClient(t, web, testPolicy(StrictNews(), time.Millisecond))
	ctx := context.Background()
	for _, tc := range []struct {
		url         string
		unreachable bool
	}{
		{reset.URL("/a"), true},
		{down.URL("/a"), true},
		{"https://nowhere.example/a", true}, // no such host
		{forbidden.URL("/a"), false},
		{rule.URL("/a"), false},
	} {
		_, err := c.Get(ctx, tc.url)
		re := refusal(t, err, Robots)
		if got := errors.Is(err, ErrRobotsUnreachable); got != tc.unreachable {
			t.Errorf("%s: unreachable %v, want %v: %v", tc.url, got, tc.unreachable, err)
		}
		if tc.unreachable && (re.Until.IsZero() || re.Err == nil) {
			t.Errorf("%s: no cause or retry time: %+v", tc.url, re)
		}
	}
}

// TestRedirect_V10_PercentEncodedLocationRefused: a redirect whose Location
// has a percent-encoded host ends in a *RefusedError with Reason InvalidHost,
// not in net/http's error of bare text, and nothing is requested there.
func TestRedirect_V10_PercentEncodedLocationRefused(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("moving.example")
	s.Handle("/a", redirectTo("https://%31%32%37.0.0.1/inside"))
	c := newClient(t, web, testPolicy(Vault(), time.Millisecond))
	_, err := c.Get(context.Background(), s.URL("/a"))
	re := refusal(t, err, InvalidHost)
	if re.Host != "%31%32%37.0.0.1" {
		t.Errorf("refused host %q", re.Host)
	}
	for _, r := range web.Requests() {
		if r.Path == "/inside" {
			t.Fatal("the redirect's target was requested")
		}
	}
}

// TestUnparsedRefusal_V10_PercentEncodedHost: the refusal a Get of a URL
// with a percent-encoded host is to return (unparsedRefusal, for the URL
// a caller gives): InvalidHost naming the host and never a userinfo; a URL
// that fails to parse elsewhere keeps its own error.
func TestUnparsedRefusal_V10_PercentEncodedHost(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"https://%31%32%37.0.0.1/", "https://user:pw@%31%32%37.0.0.1/x?y", "https://%31%32%37.0.0.1"} {
		_, err := url.Parse(raw)
		if err == nil {
			t.Fatalf("%s parses", raw)
		}
		var re *RefusedError
		if !errors.As(unparsedRefusal(raw, err), &re) || re.Reason != InvalidHost || re.Host != "%31%32%37.0.0.1" {
			t.Errorf("%s: %v", raw, unparsedRefusal(raw, err))
		}
		if re != nil && strings.Contains(re.Error(), "pw") {
			t.Errorf("%s: the refusal shows the userinfo: %v", raw, re)
		}
	}
	raw := strings.Join([]string{"https://ok.example/", "%zz"}, "") // a bad escape in the path, not the host
	_, err := url.Parse(raw)
	if got := unparsedRefusal(raw, err); got != err {
		t.Errorf("%s: %v, want the parse error itself", raw, got)
	}
}

// TestGet_PercentEncodedHostRefused: a percent-encoded host handed to Get
// or Explain directly (not through a redirect) is refused with Reason
// InvalidHost, as a Location carrying one is, and nothing is sent; a URL
// that fails to parse elsewhere is still its parse error.
func TestGet_PercentEncodedHostRefused(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	web.Site("news.example")
	c := newClient(t, web, testPolicy(Vault(), 5*time.Millisecond))
	ctx := context.Background()
	for _, raw := range []string{"https://%31%32%37.0.0.1/", "https://user:pw@%31%32%37.0.0.1/x"} {
		_, err := c.Get(ctx, raw)
		var re *RefusedError
		if !errors.As(err, &re) || re.Reason != InvalidHost || re.Host != "%31%32%37.0.0.1" {
			t.Errorf("Get %s: %v, want a refusal with Reason InvalidHost", raw, err)
		}
		e, err := c.Explain(ctx, raw)
		if err != nil || e.Allowed || e.Refusal == nil || e.Refusal.Reason != InvalidHost {
			t.Errorf("Explain %s: %+v, %v; want a refusal with Reason InvalidHost", raw, e, err)
		}
		if strings.Contains(e.URL, "pw") {
			t.Errorf("Explain %s: URL %q shows the userinfo", raw, e.URL)
		}
	}
	var ue *url.Error
	if _, err := c.Get(ctx, "https://news.example/%zz"); !errors.As(err, &ue) {
		t.Errorf("a bad escape in the path: %v, want the *url.Error", err)
	}
	if n := len(web.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
