package robots_test

import (
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

const agent = "ExampleBot/1.0 (+https://example.org/bot)"

var epoch = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// probe wraps the web's transport to tell the test when a request has
// started and when its response headers arrived, so timeouts can be driven
// by the Manual clock at the right moment.
type probe struct {
	next    http.RoundTripper
	started chan string
	headers chan string
}

func newProbe(next http.RoundTripper) *probe {
	return &probe{next: next, started: make(chan string, 64), headers: make(chan string, 64)}
}

func (p *probe) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case p.started <- req.URL.String():
	default: // nobody is listening for that many
	}
	resp, err := p.next.RoundTrip(req)
	if err == nil {
		select {
		case p.headers <- req.URL.String():
		default:
		}
	}
	return resp, err
}

// setup starts a politetest web and a Cache over it with a Manual clock.
func setup(t *testing.T, pol robots.Policy) (*politetest.Web, *robots.Cache, *clock.Manual, *probe) {
	t.Helper()
	web := politetest.NewWeb(t)
	clk := clock.NewManual(epoch)
	p := newProbe(web.Transport())
	c := &robots.Cache{Transport: p, UserAgent: agent, Policy: pol, Clock: clk, Timeout: 10 * time.Second}
	return web, c, clk, p
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// robotsFetches counts the requests for /robots.txt (redirect hops
// included) the web received for host.
func robotsFetches(web *politetest.Web, host string) int {
	n := 0
	for _, r := range web.Requests() {
		if r.Host == host && r.Path == "/robots.txt" {
			n++
		}
	}
	return n
}

// gate is the fetch chain's robots layer in miniature: it asks the Cache
// before sending, as the fetch package does.
type gate struct {
	c    *robots.Cache
	next http.RoundTripper
}

func (g gate) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := g.c.Allow(req.Context(), req.URL); err != nil {
		return nil, err
	}
	return g.next.RoundTrip(req)
}

// TestCache_V11_RobotsBeforeAnyOtherRequest proves V11 and D1 on the wire:
// through a robots gate, each host's first request is its robots.txt, it is
// fetched once, disallowed paths are never requested, and the politetest
// referee finds no robots violation.
func TestCache_V11_RobotsBeforeAnyOtherRequest(t *testing.T) {
	t.Parallel()
	web, c, _, _ := setup(t, robots.Vault())
	for _, h := range []string{"a.example", "b.example"} {
		web.Site(h).SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /private\n\nUser-agent: ExampleBot\nDisallow: /members\n"})
	}
	client := &http.Client{Transport: gate{c: c, next: web.Transport()}}
	var refused []string
	for _, u := range []string{
		"https://a.example/feed.xml", "https://a.example/members/1", "https://b.example/feed.xml",
		"https://a.example/private/1", "https://a.example/sitemap.xml", "https://b.example/members/2", "https://b.example/",
	} {
		resp, err := client.Get(u)
		if err != nil {
			if !errors.Is(err, robots.ErrDisallowed) {
				t.Fatalf("GET %s: %v", u, err)
			}
			refused = append(refused, u)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if got, want := strings.Join(refused, " "), "https://a.example/members/1 https://b.example/members/2"; got != want {
		t.Errorf("refused %s, want %s (the ExampleBot group, not \"*\", applies)", got, want)
	}
	first := map[string]string{}
	for _, r := range web.Requests() {
		if _, ok := first[r.Host]; !ok {
			first[r.Host] = r.Path
		}
	}
	for _, h := range []string{"a.example", "b.example"} {
		if first[h] != "/robots.txt" {
			t.Errorf("first request to %s was %q, want /robots.txt", h, first[h])
		}
		if n := robotsFetches(web, h); n != 1 {
			t.Errorf("%s: robots.txt fetched %d times, want 1", h, n)
		}
	}
	rep := web.Audit(politetest.Policy{RobotsAgent: "ExampleBot"})
	for _, rule := range []politetest.Rule{politetest.RuleRobotsFirst, politetest.RuleDisallowed} {
		if n := rep.Count(rule); n != 0 {
			t.Errorf("referee: %d %s violations:\n%s", n, rule, rep)
		}
	}
}

// TestCache_RobotsTxtItselfNeverFetchesItself proves R1: /robots.txt is
// allowed without a fetch.
func TestCache_RobotsTxtItselfNeverFetchesItself(t *testing.T) {
	t.Parallel()
	web, c, _, _ := setup(t, robots.StrictNews())
	web.Site("a.example").SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /\n"})
	if err := c.Allow(context.Background(), mustURL(t, "https://a.example/robots.txt")); err != nil {
		t.Fatalf("Allow(/robots.txt) = %v", err)
	}
	if n := len(web.Requests()); n != 0 {
		t.Fatalf("%d requests sent, want none", n)
	}
}

// TestCache_OneFetchPerHost proves the singleflight: many concurrent first
// hits to one host, under any spelling of its name, make one fetch.
func TestCache_OneFetchPerHost(t *testing.T) {
	t.Parallel()
	web, c, _, _ := setup(t, robots.Digest())
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	web.Site("a.example").Handle("/robots.txt", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		io.WriteString(w, "User-agent: *\nDisallow: /x\n")
	}))
	hosts := []string{"a.example", "A.EXAMPLE", "a.example.", "a.example:443"}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- c.Allow(context.Background(), mustURL(t, "https://"+hosts[i%len(hosts)]+"/x/1"))
		}()
	}
	<-arrived
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, robots.ErrDisallowed) {
			t.Errorf("Allow = %v, want a refusal", err)
		}
	}
	if n := robotsFetches(web, "a.example"); n != 1 {
		t.Fatalf("robots.txt fetched %d times, want 1", n)
	}
}

// TestCache_TTL proves each policy's cache time on the Manual clock (S3:
// 1 h; V11: at most 24 h; digest 24 h) and D13: a new "Disallow: /" stops
// the crawler at the next refresh at the latest.
func TestCache_TTL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		pol  robots.Policy
		ttl  time.Duration
	}{
		{"S3_News1h", robots.StrictNews(), time.Hour},
		{"V11_Vault24h", robots.Vault(), 24 * time.Hour},
		{"D13_Digest24h", robots.Digest(), 24 * time.Hour},
		{"ZeroPolicyDefault", robots.Policy{}, robots.DefaultTTL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web, c, clk, _ := setup(t, tc.pol)
			site := web.Site("a.example")
			site.SetRobots(politetest.Robots{Body: "User-agent: *\nAllow: /\n"})
			ctx := context.Background()
			page := mustURL(t, "https://a.example/page")
			if err := c.Allow(ctx, page); err != nil {
				t.Fatalf("Allow = %v", err)
			}
			site.SetRobots(politetest.Robots{Body: "User-agent: ExampleBot\nDisallow: /\n"})
			clk.Advance(tc.ttl - time.Second)
			if err := c.Allow(ctx, page); err != nil {
				t.Fatalf("1 s before the TTL: Allow = %v, want the cached allow", err)
			}
			if n := robotsFetches(web, "a.example"); n != 1 {
				t.Fatalf("1 s before the TTL: %d fetches, want 1", n)
			}
			clk.Advance(time.Second)
			err := c.Allow(ctx, page)
			var re *robots.DisallowedError
			if !errors.As(err, &re) || re.Rule != "Disallow: /" || re.Group != "ExampleBot" {
				t.Fatalf("at the TTL: Allow = %v, want refusal by \"Disallow: /\" in group ExampleBot", err)
			}
			if want := epoch.Add(2 * tc.ttl); !re.RetryAt.Equal(want) {
				t.Errorf("RetryAt = %v, want %v", re.RetryAt, want)
			}
			if n := robotsFetches(web, "a.example"); n != 2 {
				t.Fatalf("at the TTL: %d fetches, want 2", n)
			}
		})
	}
}

// TestCache_MaxAgeShorterWins proves that a shorter Cache-Control max-age
// shortens the TTL, but never below MinTTL.
func TestCache_MaxAgeShorterWins(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cc   string
		want time.Duration
	}{
		{"max-age=600", 10 * time.Minute},
		{"public, max-age=7200", time.Hour}, // longer than the news TTL: the TTL wins
		{"max-age=0", robots.MinTTL},
		{"no-store", robots.MinTTL},
	} {
		t.Run(tc.cc, func(t *testing.T) {
			t.Parallel()
			web, c, clk, _ := setup(t, robots.StrictNews())
			web.Site("a.example").Handle("/robots.txt", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Cache-Control", tc.cc)
				io.WriteString(w, "User-agent: *\nDisallow: /x\n")
			}))
			e, err := c.Lookup(context.Background(), "a.example")
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Expires.Sub(clk.Now()); got != tc.want {
				t.Fatalf("TTL = %v, want %v", got, tc.want)
			}
		})
	}
}

type want int

const (
	allowed    want = iota // the page may be fetched
	ruled                  // the file was parsed: /page allowed, /x refused by its rule
	disallowed             // the whole site is refused
)

// TestCache_StatusPerPreset proves every status and failure per preset on
// the wire: S3 (401, 403, 429, 5xx, unreachable → site disallowed), V11
// (4xx → allowed, 5xx or unreachable → nothing read), the digest engine's
// RFC rules, and the Google preset.
func TestCache_StatusPerPreset(t *testing.T) {
	t.Parallel()
	type outcome struct{ news, vault, digest, google want }
	cases := []struct {
		name    string
		robots  politetest.Robots
		timeout bool // the fetch hangs: the Manual clock runs out the Timeout
		out     outcome
	}{
		{"200", politetest.Robots{Body: "User-agent: *\nDisallow: /x\n"}, false, outcome{ruled, ruled, ruled, ruled}},
		{"204", politetest.Robots{Status: 204}, false, outcome{allowed, allowed, allowed, allowed}},
		{"400", politetest.Robots{Status: 400}, false, outcome{allowed, allowed, allowed, allowed}},
		{"401", politetest.Robots{Status: 401}, false, outcome{disallowed, allowed, allowed, allowed}},
		{"403", politetest.Robots{Status: 403}, false, outcome{disallowed, allowed, allowed, allowed}},
		{"404", politetest.Robots{Status: 404}, false, outcome{allowed, allowed, allowed, allowed}},
		{"410", politetest.Robots{Status: 410}, false, outcome{allowed, allowed, allowed, allowed}},
		{"429", politetest.Robots{Status: 429}, false, outcome{disallowed, allowed, allowed, disallowed}},
		{"500", politetest.Robots{Status: 500}, false, outcome{disallowed, disallowed, disallowed, disallowed}},
		{"503", politetest.Robots{Status: 503}, false, outcome{disallowed, disallowed, disallowed, disallowed}},
		{"reset", politetest.Robots{Failure: politetest.FailReset}, false, outcome{disallowed, disallowed, disallowed, disallowed}},
		{"timeout", politetest.Robots{Failure: politetest.FailTimeout}, true, outcome{disallowed, disallowed, disallowed, disallowed}},
	}
	presets := []struct {
		name string
		pol  robots.Policy
		pick func(outcome) want
	}{
		{"S3_News", robots.StrictNews(), func(o outcome) want { return o.news }},
		{"V11_Vault", robots.Vault(), func(o outcome) want { return o.vault }},
		{"Digest", robots.Digest(), func(o outcome) want { return o.digest }},
		{"Google", robots.Policy{Status: robots.Google}, func(o outcome) want { return o.google }},
	}
	for _, p := range presets {
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				web, c, clk, pr := setup(t, p.pol)
				web.Site("a.example").SetRobots(tc.robots)
				ctx := context.Background()
				var page error
				if tc.timeout {
					done := make(chan error, 1)
					go func() { done <- c.Allow(ctx, mustURL(t, "https://a.example/page")) }()
					<-pr.started
					clk.Advance(c.Timeout)
					page = <-done
				} else {
					page = c.Allow(ctx, mustURL(t, "https://a.example/page"))
				}
				x := c.Allow(ctx, mustURL(t, "https://a.example/x/1"))
				var re *robots.DisallowedError
				switch w := p.pick(tc.out); w {
				case allowed:
					if page != nil || x != nil {
						t.Fatalf("Allow = %v, %v; want both allowed", page, x)
					}
				case ruled:
					if page != nil || !errors.As(x, &re) || re.Rule != "Disallow: /x" {
						t.Fatalf("Allow = %v, %v; want /page allowed, /x refused by its rule", page, x)
					}
				case disallowed:
					if !errors.As(page, &re) || re.Outcome != robots.DisallowAll || !errors.Is(x, robots.ErrDisallowed) {
						t.Fatalf("Allow = %v, %v; want the site disallowed", page, x)
					}
					if tc.robots.Status != 0 && re.Status != tc.robots.Status {
						t.Errorf("DisallowedError.Status = %d, want %d", re.Status, tc.robots.Status)
					}
					if tc.robots.Failure != 0 && re.Err == nil {
						t.Errorf("DisallowedError.Err is nil for a network failure")
					}
				}
				if n := robotsFetches(web, "a.example"); n != 1 && !tc.timeout {
					t.Errorf("%d robots fetches, want 1", n)
				}
			})
		}
	}
}

// TestCache_V11_RetryAfterFailure proves V11's "5xx or unreachable → read
// nothing until it answers, retrying robots.txt after 15 minutes", and the
// same retry for S3's refusals.
func TestCache_V11_RetryAfterFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		pol    robots.Policy
		robots politetest.Robots
	}{
		{"V11_Vault503", robots.Vault(), politetest.Robots{Status: 503}},
		{"V11_VaultReset", robots.Vault(), politetest.Robots{Failure: politetest.FailReset}},
		{"S3_News403", robots.StrictNews(), politetest.Robots{Status: 403}},
		{"S3_News429", robots.StrictNews(), politetest.Robots{Status: 429}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web, c, clk, _ := setup(t, tc.pol)
			site := web.Site("a.example")
			site.SetRobots(tc.robots)
			ctx := context.Background()
			page := mustURL(t, "https://a.example/feed.xml")
			err := c.Allow(ctx, page)
			var re *robots.DisallowedError
			if !errors.As(err, &re) || re.Outcome != robots.DisallowAll {
				t.Fatalf("Allow = %v, want the site disallowed", err)
			}
			if want := epoch.Add(15 * time.Minute); !re.RetryAt.Equal(want) {
				t.Fatalf("RetryAt = %v, want %v", re.RetryAt, want)
			}
			site.SetRobots(politetest.Robots{Body: "User-agent: *\nAllow: /\n"})
			clk.Advance(15*time.Minute - time.Second)
			if err := c.Allow(ctx, page); !errors.Is(err, robots.ErrDisallowed) {
				t.Fatalf("before the retry interval: Allow = %v, want still refused", err)
			}
			if n := robotsFetches(web, "a.example"); n != 1 {
				t.Fatalf("before the retry interval: %d fetches, want 1", n)
			}
			clk.Advance(time.Second)
			if err := c.Allow(ctx, page); err != nil {
				t.Fatalf("after the retry interval: Allow = %v, want allowed", err)
			}
			if n := robotsFetches(web, "a.example"); n != 2 {
				t.Fatalf("after the retry interval: %d fetches, want 2", n)
			}
		})
	}
}

// TestCache_FailureAfterGood proves the OnFailure choice: the seed
// policies disallow the site when a refresh fails; UseLastGood keeps the
// last good copy while the file is unreachable (RFC 9309 §2.4).
func TestCache_FailureAfterGood(t *testing.T) {
	t.Parallel()
	useLast := robots.Vault()
	useLast.OnFailure = robots.UseLastGood
	for _, tc := range []struct {
		name     string
		pol      robots.Policy
		failure  politetest.Robots
		lastGood bool
	}{
		{"S3_NewsDisallows", robots.StrictNews(), politetest.Robots{Status: 503}, false},
		{"V11_VaultDisallows", robots.Vault(), politetest.Robots{Failure: politetest.FailReset}, false},
		{"UseLastGood503", useLast, politetest.Robots{Status: 503}, true},
		{"UseLastGoodReset", useLast, politetest.Robots{Failure: politetest.FailReset}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web, c, clk, _ := setup(t, tc.pol)
			site := web.Site("a.example")
			site.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /x\n"})
			ctx := context.Background()
			if _, err := c.Lookup(ctx, "a.example"); err != nil {
				t.Fatal(err)
			}
			site.SetRobots(tc.failure)
			clk.Advance(tc.pol.TTL)
			err := c.Allow(ctx, mustURL(t, "https://a.example/page"))
			e, _ := c.Lookup(ctx, "a.example")
			if tc.lastGood {
				if err != nil || !e.Stale || e.LastFailure == "" {
					t.Fatalf("Allow = %v, stale %v %q; want the last good copy", err, e.Stale, e.LastFailure)
				}
				if err := c.Allow(ctx, mustURL(t, "https://a.example/x")); !errors.Is(err, robots.ErrDisallowed) {
					t.Fatalf("last good copy's rule not applied: %v", err)
				}
			} else if !errors.Is(err, robots.ErrDisallowed) {
				t.Fatalf("Allow = %v, want the site disallowed", err)
			}
			if want := clk.Now().Add(15 * time.Minute); !e.Expires.Equal(want) {
				t.Errorf("Expires = %v, want the retry interval %v", e.Expires, want)
			}
		})
	}
}

// TestCache_R1_Redirects proves R1's redirect rule: five redirects are
// followed and the rules apply to the original host; a sixth redirect is
// not followed and the file counts as unavailable (RFC 9309 §2.3.1.2), unless
// the policy says DisallowTooManyRedirects; a redirect to http fails.
func TestCache_R1_Redirects(t *testing.T) {
	t.Parallel()
	body := "User-agent: *\nDisallow: /x\n"
	strictRedirects := robots.Policy{Status: robots.Strict | robots.DisallowTooManyRedirects}
	for _, tc := range []struct {
		name     string
		pol      robots.Policy
		hops     int
		want     want
		requests int
	}{
		{"1", robots.StrictNews(), 1, ruled, 2},
		{"5", robots.StrictNews(), 5, ruled, 6},
		{"6_RFCUnavailable", robots.Vault(), 6, allowed, 6},
		{"6_StrictNewsAsRFC", robots.StrictNews(), 6, allowed, 6},
		{"6_DisallowTooManyRedirects", strictRedirects, 6, disallowed, 6},
		{"20", robots.Digest(), 20, allowed, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web, c, _, _ := setup(t, tc.pol)
			web.Site("a.example").SetRobots(politetest.Robots{Body: body, Redirects: tc.hops})
			ctx := context.Background()
			page := c.Allow(ctx, mustURL(t, "https://a.example/page"))
			x := c.Allow(ctx, mustURL(t, "https://a.example/x"))
			switch tc.want {
			case ruled:
				if page != nil || !errors.Is(x, robots.ErrDisallowed) {
					t.Fatalf("Allow = %v, %v; want the file's rules", page, x)
				}
			case allowed:
				if page != nil || x != nil {
					t.Fatalf("Allow = %v, %v; want all allowed", page, x)
				}
			case disallowed:
				if !errors.Is(page, robots.ErrDisallowed) || !errors.Is(page, robots.ErrTooManyRedirects) {
					t.Fatalf("Allow = %v; want disallowed for too many redirects", page)
				}
			}
			if n := robotsFetches(web, "a.example"); n != tc.requests {
				t.Fatalf("%d robots.txt requests, want %d", n, tc.requests)
			}
		})
	}
	t.Run("OtherHost", func(t *testing.T) {
		t.Parallel()
		web, c, _, _ := setup(t, robots.StrictNews())
		web.Site("cdn.example").SetRobots(politetest.Robots{Body: body})
		web.Site("a.example").Handle("/robots.txt", http.RedirectHandler("https://cdn.example/robots.txt", http.StatusFound))
		if err := c.Allow(context.Background(), mustURL(t, "https://a.example/x")); !errors.Is(err, robots.ErrDisallowed) {
			t.Fatalf("Allow = %v; want the redirect target's rules applied to a.example", err)
		}
		if e, _ := c.Lookup(context.Background(), "cdn.example"); robotsFetches(web, "cdn.example") != 2 || e.Outcome != robots.ParseBody {
			t.Fatal("cdn.example's own entry should be a separate fetch")
		}
	})
	t.Run("ToHTTP", func(t *testing.T) {
		t.Parallel()
		web, c, _, _ := setup(t, robots.Vault())
		web.Site("a.example").Misbehave("/robots.txt", politetest.Behaviour{Kind: politetest.RedirectToHTTP})
		err := c.Allow(context.Background(), mustURL(t, "https://a.example/page"))
		if !errors.Is(err, robots.ErrDisallowed) || !errors.Is(err, robots.ErrInsecureRedirect) {
			t.Fatalf("Allow = %v; want disallowed for the insecure redirect", err)
		}
	})
}

// TestCache_R1_Oversize proves R1's size limit on the wire: the first
// 500 KiB are parsed, a rule beyond them is ignored, and the fetch stops
// reading there.
func TestCache_R1_Oversize(t *testing.T) {
	t.Parallel()
	web, c, _, _ := setup(t, robots.StrictNews())
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /early\n")
	for b.Len() < robots.MaxBodySize-100 {
		b.WriteString("# padding padding padding padding padding padding padding padding\n")
	}
	for b.Len() < robots.MaxBodySize-10 {
		b.WriteString("#\n")
	}
	b.WriteString("Disallow: /cut\n") // crosses the limit: dropped
	b.WriteString("Disallow: /late\n")
	for b.Len() < 4<<20 {
		b.WriteString("Disallow: /late\n")
	}
	big := b.String()
	web.Site("a.example").Handle("/robots.txt", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, big)
	}))
	ctx := context.Background()
	if err := c.Allow(ctx, mustURL(t, "https://a.example/early")); !errors.Is(err, robots.ErrDisallowed) {
		t.Fatalf("/early: %v, want refused", err)
	}
	for _, p := range []string{"/cut", "/late"} {
		if err := c.Allow(ctx, mustURL(t, "https://a.example"+p)); err != nil {
			t.Fatalf("%s: %v, want allowed (beyond the limit)", p, err)
		}
	}
	e, _ := c.Lookup(ctx, "a.example")
	if len(e.Body) > robots.MaxBodySize+1 {
		t.Fatalf("kept %d bytes, want at most %d", len(e.Body), robots.MaxBodySize+1)
	}
}

// TestCache_TruncatedAndSlowBodies proves that a truncated body and a body
// too slow to finish within the Timeout are network failures: the site is
// disallowed under every seed policy (S3, V11).
func TestCache_TruncatedAndSlowBodies(t *testing.T) {
	t.Parallel()
	body := "User-agent: *\nDisallow: /x\n" + strings.Repeat("# comment line\n", 100)
	for _, pol := range []struct {
		name string
		p    robots.Policy
	}{{"S3_News", robots.StrictNews()}, {"V11_Vault", robots.Vault()}, {"Digest", robots.Digest()}} {
		t.Run(pol.name+"/Truncated", func(t *testing.T) {
			t.Parallel()
			web, c, _, _ := setup(t, pol.p)
			site := web.Site("a.example")
			site.SetRobots(politetest.Robots{Body: body})
			site.Misbehave("/robots.txt", politetest.Behaviour{Kind: politetest.Truncate})
			err := c.Allow(context.Background(), mustURL(t, "https://a.example/page"))
			if !errors.Is(err, robots.ErrDisallowed) || !errors.Is(err, robots.ErrTruncated) {
				t.Fatalf("Allow = %v; want disallowed for a truncated body", err)
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "decode:") || strings.Count(err.Error(), "truncated") != 1 {
				t.Errorf("Allow = %q: want the cause (unexpected EOF), said once in the package's words", err)
			}
		})
		t.Run(pol.name+"/Slow", func(t *testing.T) {
			t.Parallel()
			web, c, clk, pr := setup(t, pol.p)
			site := web.Site("a.example")
			site.SetRobots(politetest.Robots{Body: body})
			site.Misbehave("/robots.txt", politetest.Behaviour{Kind: politetest.Trickle, Chunk: 64, Delay: time.Hour})
			done := make(chan error, 1)
			go func() { done <- c.Allow(context.Background(), mustURL(t, "https://a.example/page")) }()
			<-pr.headers // the body has started to trickle
			clk.Advance(c.Timeout)
			err := <-done
			if !errors.Is(err, robots.ErrDisallowed) {
				t.Fatalf("Allow = %v; want disallowed for a body slower than the timeout", err)
			}
		})
	}
}

// TestCache_CallerCancelDoesNotPoisonHost proves that a caller giving up
// while robots.txt is being fetched gets its context's error, not a
// refusal, and the fetch still completes for the others.
func TestCache_CallerCancelDoesNotPoisonHost(t *testing.T) {
	t.Parallel()
	web, c, _, _ := setup(t, robots.Vault())
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	web.Site("a.example").Handle("/robots.txt", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		io.WriteString(w, "User-agent: *\nDisallow: /x\n")
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Allow(ctx, mustURL(t, "https://a.example/page")) }()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || errors.Is(err, robots.ErrDisallowed) {
		t.Fatalf("Allow after cancel = %v, want context.Canceled", err)
	}
	close(release)
	if err := c.Allow(context.Background(), mustURL(t, "https://a.example/page")); err != nil {
		t.Fatalf("later Allow = %v, want allowed", err)
	}
	if n := robotsFetches(web, "a.example"); n != 1 {
		t.Fatalf("%d fetches, want 1", n)
	}
}

// TestCache_CrawlDelayAndSitemaps proves V11's Crawl-delay input and the
// feed discovery through Sitemaps.
func TestCache_CrawlDelayAndSitemaps(t *testing.T) {
	t.Parallel()
	web, c, _, _ := setup(t, robots.Vault())
	web.Site("a.example").SetRobots(politetest.Robots{Body: "User-agent: *\nCrawl-delay: 1\n\nUser-agent: examplebot\nCrawl-delay: 2.5\nDisallow: /x\n\nSitemap: https://a.example/sitemap_index.xml\n"})
	web.Site("b.example").SetRobots(politetest.Robots{Status: 503})
	web.Site("c.example").SetRobots(politetest.Robots{Status: 404})
	ctx := context.Background()
	if d, ok := c.CrawlDelay(ctx, mustURL(t, "https://A.example:443/")); !ok || d != 2500*time.Millisecond {
		t.Errorf("CrawlDelay = %v, %v; want 2.5s", d, ok)
	}
	if sm, err := c.Sitemaps(ctx, "a.example"); err != nil || len(sm) != 1 || sm[0] != "https://a.example/sitemap_index.xml" {
		t.Errorf("Sitemaps = %q, %v", sm, err)
	}
	if _, ok := c.CrawlDelay(ctx, mustURL(t, "https://b.example/")); ok {
		t.Error("CrawlDelay for an unreachable robots.txt reported one")
	}
	if _, err := c.Sitemaps(ctx, "b.example"); !errors.Is(err, robots.ErrDisallowed) {
		t.Errorf("Sitemaps(503 host) = %v, want a refusal", err)
	}
	if sm, err := c.Sitemaps(ctx, "c.example"); err != nil || sm != nil {
		t.Errorf("Sitemaps(404 host) = %q, %v; want none", sm, err)
	}
	if n := robotsFetches(web, "a.example"); n != 1 {
		t.Errorf("%d fetches of a.example, want 1", n)
	}
}

// TestCache_NotHTTPS: only https URLs with a valid host are answered (V10).
func TestCache_NotHTTPS(t *testing.T) {
	t.Parallel()
	c := &robots.Cache{Transport: http.DefaultTransport}
	if err := c.Allow(context.Background(), mustURL(t, "http://a.example/")); !errors.Is(err, robots.ErrNotHTTPS) {
		t.Fatalf("Allow(http) = %v, want ErrNotHTTPS", err)
	}
	for _, u := range []*url.URL{{Scheme: "https", Path: "/x"}, {Scheme: "https", Host: "[::1].", Path: "/x"}} {
		if err := c.Allow(context.Background(), u); err == nil || errors.Is(err, robots.ErrDisallowed) {
			t.Errorf("Allow(%q) = %v, want an invalid-host error", u, err)
		}
	}
}

// TestCache_HostSpellingsShareOneRecord: every spelling of one host (case,
// a trailing dot, the default port) is one key, so one robots.txt fetch;
// a host that is not valid is an error, not a fetch.
func TestCache_HostSpellingsShareOneRecord(t *testing.T) {
	t.Parallel()
	web, c, _, _ := setup(t, robots.Digest())
	web.Site("a.example")
	ctx := context.Background()
	for _, h := range []string{"A.example", "a.example.", "a.example:443", "a.EXAMPLE.:443"} {
		if _, err := c.Lookup(ctx, h); err != nil {
			t.Fatalf("Lookup(%q): %v", h, err)
		}
	}
	if n := robotsFetches(web, "a.example"); n != 1 {
		t.Fatalf("%d robots.txt fetches for one host spelt four ways, want 1", n)
	}
	for _, h := range []string{"", "a b", "[::1]."} {
		if _, err := c.Lookup(ctx, h); err == nil {
			t.Errorf("Lookup(%q) = nil error, want the invalid host refused", h)
		}
	}
	if n := len(web.Requests()); n != 1 {
		t.Fatalf("%d requests, want only the one robots.txt", n)
	}
}

// TestCache_ContentCoding: a robots.txt compressed despite the identity
// request is decoded (gzip) or, in an unknown coding, a failure that
// disallows the site rather than a garbled file that would allow all.
func TestCache_ContentCoding(t *testing.T) {
	t.Parallel()
	t.Run("Gzip", func(t *testing.T) {
		t.Parallel()
		web, c, _, _ := setup(t, robots.Vault())
		web.Site("a.example").Handle("/robots.txt", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, "User-agent: *\nDisallow: /x\n")
			zw.Close()
		}))
		// The request asks for identity, as the fetch chain's identity layer does.
		c.Transport = headerRT{next: c.Transport, key: "Accept-Encoding", value: "identity"}
		if err := c.Allow(context.Background(), mustURL(t, "https://a.example/x")); !errors.Is(err, robots.ErrDisallowed) {
			t.Fatalf("Allow = %v, want the gzipped file's rule", err)
		}
	})
	t.Run("Deflate", func(t *testing.T) {
		t.Parallel()
		web, c, _, _ := setup(t, robots.Vault())
		web.Site("a.example").Handle("/robots.txt", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "deflate")
			zw := zlib.NewWriter(w)
			io.WriteString(zw, "User-agent: *\nDisallow: /x\n")
			zw.Close()
		}))
		c.Transport = headerRT{next: c.Transport, key: "Accept-Encoding", value: "identity"}
		if err := c.Allow(context.Background(), mustURL(t, "https://a.example/x")); !errors.Is(err, robots.ErrDisallowed) {
			t.Fatalf("Allow = %v, want the deflated file's rule", err)
		}
	})
	t.Run("Unknown", func(t *testing.T) {
		t.Parallel()
		web, c, _, _ := setup(t, robots.Vault())
		web.Site("a.example").SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /x\n"})
		web.Site("a.example").Misbehave("/robots.txt", politetest.Behaviour{Kind: politetest.UnknownEncoding})
		err := c.Allow(context.Background(), mustURL(t, "https://a.example/page"))
		if !errors.Is(err, robots.ErrDisallowed) || !errors.Is(err, robots.ErrContentEncoding) {
			t.Fatalf("Allow = %v, want disallowed for an unknown coding", err)
		}
	})
}

type headerRT struct {
	next       http.RoundTripper
	key, value string
}

func (h headerRT) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(h.key, h.value)
	return h.next.RoundTrip(req)
}

// TestCache_PlainHTTP: robots.txt is read over the scheme of the URL asked
// about (RFC 9309 §2.3), and only when the Cache is told it may read plain
// http; https stays the default.
func TestCache_PlainHTTP(t *testing.T) {
	t.Parallel()
	body := "User-agent: *\nDisallow: /x\nCrawl-delay: 2\n"
	for _, tc := range []struct {
		name      string
		allowHTTP bool
	}{{"DefaultHTTPSOnly", false}, {"AllowHTTP", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web, c, _, _ := setup(t, robots.Digest())
			c.AllowHTTP = tc.allowHTTP
			web.Site("a.example").SetRobots(politetest.Robots{Body: body})
			ctx := context.Background()
			y, x := mustURL(t, "http://a.example/y"), mustURL(t, "http://a.example/x/1")
			if !tc.allowHTTP {
				if err := c.Allow(ctx, y); !errors.Is(err, robots.ErrNotHTTPS) {
					t.Fatalf("Allow(%s) = %v; want ErrNotHTTPS", y, err)
				}
				if _, ok := c.CrawlDelay(ctx, y); ok {
					t.Fatal("CrawlDelay answered for an http URL")
				}
				if n := len(web.Requests()); n != 0 {
					t.Fatalf("%d requests sent for an http URL the Cache does not read", n)
				}
				return
			}
			if err := c.Allow(ctx, y); err != nil {
				t.Fatalf("Allow(%s) = %v", y, err)
			}
			if err := c.Allow(ctx, x); !errors.Is(err, robots.ErrDisallowed) {
				t.Fatalf("Allow(%s) = %v; want disallowed", x, err)
			}
			if d, ok := c.CrawlDelay(ctx, y); !ok || d != 2*time.Second {
				t.Fatalf("CrawlDelay(%s) = %v, %v", y, d, ok)
			}
			reqs := web.Requests()
			if len(reqs) != 1 || reqs[0].TLS || reqs[0].Path != "/robots.txt" {
				t.Fatalf("requests = %+v; want one plain-http robots.txt", reqs)
			}
			// The https robots.txt of the same host is another file.
			if err := c.Allow(ctx, mustURL(t, "https://a.example/y")); err != nil {
				t.Fatal(err)
			}
			if reqs := web.Requests(); len(reqs) != 2 || !reqs[1].TLS || reqs[1].Path != "/robots.txt" {
				t.Fatalf("requests = %d; want the https robots.txt read on its own", len(reqs))
			}
		})
	}
}

// TestCache_Explain: Explain gives Allow's answer with its reasons: the
// group and its User-agent line, the deciding rule and its line, and the
// record behind it (outcome, status, when fetched, until when).
func TestCache_Explain(t *testing.T) {
	t.Parallel()
	body := "# news site\nUser-agent: OtherBot\nDisallow: /\n\nUser-agent: *\nAllow: /private/open\nDisallow: /private/\n"
	for _, tc := range []struct {
		name    string
		robots  politetest.Robots
		url     string
		want    robots.Decision
		expires time.Duration
	}{
		{"RuleDisallows", politetest.Robots{Body: body}, "https://a.example/private/x",
			robots.Decision{Allowed: false, Group: "*", AgentLine: 5, Rule: "Disallow: /private/", Line: 7, Path: "/private/x",
				Outcome: robots.ParseBody, Status: 200}, 24 * time.Hour},
		{"RuleAllows", politetest.Robots{Body: body}, "https://a.example/private/open?q=1",
			robots.Decision{Allowed: true, Group: "*", AgentLine: 5, Rule: "Allow: /private/open", Line: 6, Path: "/private/open?q=1",
				Outcome: robots.ParseBody, Status: 200}, 24 * time.Hour},
		{"NoRuleMatches", politetest.Robots{Body: body}, "https://a.example/news",
			robots.Decision{Allowed: true, Group: "*", AgentLine: 5, Path: "/news", Outcome: robots.ParseBody, Status: 200}, 24 * time.Hour},
		{"Absent", politetest.Robots{Status: 404}, "https://a.example/news",
			robots.Decision{Allowed: true, Path: "/news", Outcome: robots.AllowAll, Status: 404}, 24 * time.Hour},
		{"ServerError", politetest.Robots{Status: 503}, "https://a.example/news",
			robots.Decision{Allowed: false, Path: "/news", Outcome: robots.DisallowAll, Status: 503}, robots.DefaultRetryInterval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web, c, _, _ := setup(t, robots.Digest())
			web.Site("a.example").SetRobots(tc.robots)
			u := mustURL(t, tc.url)
			d, err := c.Explain(context.Background(), u)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Site, want.FetchedAt, want.Expires = "a.example", epoch, epoch.Add(tc.expires)
			if d != want {
				t.Fatalf("Explain(%s) =\n%+v\nwant\n%+v", u, d, want)
			}
			if allowed := c.Allow(context.Background(), u) == nil; allowed != d.Allowed {
				t.Fatalf("Allow says %v, Explain %v", allowed, d.Allowed)
			}
			var de *robots.DisallowedError
			if err := c.Allow(context.Background(), u); errors.As(err, &de) && (de.Rule != d.Rule || de.Line != d.Line || !de.RetryAt.Equal(d.Expires)) {
				t.Fatalf("DisallowedError %+v disagrees with Explain %+v", de, d)
			}
		})
	}
	t.Run("NotRead", func(t *testing.T) {
		t.Parallel()
		_, c, _, _ := setup(t, robots.Digest())
		if _, err := c.Explain(context.Background(), mustURL(t, "http://a.example/")); !errors.Is(err, robots.ErrNotHTTPS) {
			t.Fatalf("Explain(http) = %v; want ErrNotHTTPS", err)
		}
	})
}
