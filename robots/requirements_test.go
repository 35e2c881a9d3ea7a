package robots_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// TestParse_R1_500KiBBoundary: R1's limit is 500 KiB, 512,000 bytes, to the
// byte: a rule whose line ends at byte 512,000 (its line break the next
// byte) stands; the same rule one byte longer, cut by the limit, is dropped,
// and so is every line after it.
func TestParse_R1_500KiBBoundary(t *testing.T) {
	t.Parallel()
	const limit = 512000 // 500 KiB, written out: not robots.MaxBodySize
	if robots.MaxBodySize != limit {
		t.Errorf("MaxBodySize = %d, want 500 KiB (%d)", robots.MaxBodySize, limit)
	}
	body := func(rule string) []byte {
		var b strings.Builder
		b.WriteString("User-agent: *\nDisallow: /first\n")
		for b.Len()+62+len(rule) < limit {
			b.WriteString("#" + strings.Repeat("x", 60) + "\n")
		}
		b.WriteString("#" + strings.Repeat("y", limit-len(rule)-b.Len()-2) + "\n")
		b.WriteString(rule)
		if b.Len() != limit {
			t.Fatalf("built %d bytes before the line break, want %d", b.Len(), limit)
		}
		b.WriteString("\nDisallow: /beyond\n")
		return []byte(b.String())
	}
	r := robots.Parse(body("Disallow: /last"))
	if r.Allowed("x", "/first") || r.Allowed("x", "/last") {
		t.Error("a rule ending at byte 512,000 was dropped")
	}
	if !r.Allowed("x", "/beyond") {
		t.Error("a rule after byte 512,000 was read")
	}
	// One byte more before it: the rule's last byte is byte 512,001,
	// beyond the limit, and its line is dropped.
	const rule = "Disallow: /last"
	b := body(rule)
	start := limit - len(rule) // the rule's first byte; a line break before it
	long := string(b[:start-1]) + "y\n" + rule + "\nDisallow: /beyond\n"
	r = robots.Parse([]byte(long))
	if r.Allowed("x", "/first") {
		t.Error("/first lost")
	}
	if !r.Allowed("x", "/last") || !r.Allowed("x", "/beyond") {
		t.Error("the line the 512,000-byte limit cuts was read")
	}
}

// TestStrictNews_S3_401403429DisallowTheSite: under the strict news policy a
// robots.txt answering 401, 403 or 429 disallows the whole site, as an
// unreachable one does, and the answer is kept for the retry interval; the
// RFC's own reading of a 401 (allow all) is not the strict one.
func TestStrictNews_S3_401403429DisallowTheSite(t *testing.T) {
	t.Parallel()
	if robots.RFC9309.Decide(401, nil) != robots.AllowAll {
		t.Fatal("RFC 9309 reads a 401 robots.txt as absent")
	}
	for _, st := range []int{401, 403, 429, 500, 503} {
		t.Run(fmt.Sprint(st), func(t *testing.T) {
			t.Parallel()
			if got := robots.Strict.Decide(st, nil); got != robots.DisallowAll {
				t.Fatalf("Strict.Decide(%d) = %v", st, got)
			}
			web, c, _, _ := setup(t, robots.StrictNews())
			web.Site("a.example").SetRobots(politetest.Robots{Status: st})
			err := c.Allow(context.Background(), mustURL(t, "https://a.example/article"))
			var de *robots.DisallowedError
			if !errors.As(err, &de) || de.Outcome != robots.DisallowAll || de.Status != st {
				t.Fatalf("robots.txt %d: %v, want the site disallowed", st, err)
			}
			if want := epoch.Add(robots.DefaultRetryInterval); !de.RetryAt.Equal(want) {
				t.Fatalf("retry at %v, want %v", de.RetryAt, want)
			}
		})
	}
}

// TestStrictNews_S3_CachedOneHour: the strict news policy keeps a robots.txt
// one hour: not asked again before, asked again at the hour.
func TestStrictNews_S3_CachedOneHour(t *testing.T) {
	t.Parallel()
	if got := robots.StrictNews().TTL; got != time.Hour {
		t.Fatalf("StrictNews().TTL = %v, want 1h", got)
	}
	web, c, clk, _ := setup(t, robots.StrictNews())
	web.Site("a.example").SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /x\n"})
	ctx := context.Background()
	u := mustURL(t, "https://a.example/page")
	for _, step := range []time.Duration{0, 59 * time.Minute, time.Minute - time.Nanosecond} {
		clk.Advance(step)
		if err := c.Allow(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if n := robotsFetches(web, "a.example"); n != 1 {
		t.Fatalf("robots.txt fetched %d times within the hour", n)
	}
	clk.Advance(time.Nanosecond)
	if err := c.Allow(ctx, u); err != nil {
		t.Fatal(err)
	}
	if n := robotsFetches(web, "a.example"); n != 2 {
		t.Fatalf("robots.txt fetched %d times by the hour, want 2", n)
	}
}

// refuseHostRT refuses, as not sent, every request to host, as the fetch
// chain does for a target it will not ask (a non-public address).
type refuseHostRT struct {
	host string
	next http.RoundTripper
}

func (r refuseHostRT) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == r.host {
		return nil, fmt.Errorf("%w: %s is not a public address", robots.ErrNotSent, r.host)
	}
	return r.next.RoundTrip(req)
}

// TestCache_R1_V10_RedirectToARefusedTarget: a robots.txt redirecting to a
// target the Transport will not request is the host's answer, recorded as
// an unreachable robots.txt under the policy's status rules (the site
// disallowed) and asked again only after the retry interval: five requests
// ask once.
func TestCache_R1_V10_RedirectToARefusedTarget(t *testing.T) {
	t.Parallel()
	web, c, clk, p := setup(t, robots.Vault())
	c.Transport = refuseHostRT{host: "inside.example", next: p}
	web.Site("a.example").Handle("/robots.txt", http.RedirectHandler("https://inside.example/robots.txt", http.StatusFound))
	ctx := context.Background()
	u := mustURL(t, "https://a.example/page")
	for i := range 5 {
		err := c.Allow(ctx, u)
		var de *robots.DisallowedError
		if !errors.As(err, &de) || de.Outcome != robots.DisallowAll || !errors.Is(err, robots.ErrRedirectNotRequested) {
			t.Fatalf("Allow %d: %v, want the site disallowed by the refused redirect", i, err)
		}
		if errors.Is(err, robots.ErrNotSent) {
			t.Fatalf("Allow %d: the recorded redirect reads as a request not sent: %v", i, err)
		}
		if want := epoch.Add(15 * time.Minute); !de.RetryAt.Equal(want) {
			t.Fatalf("retry at %v, want %v", de.RetryAt, want)
		}
	}
	if n := robotsFetches(web, "a.example"); n != 1 {
		t.Fatalf("robots.txt asked %d times, want once", n)
	}
	clk.Advance(15 * time.Minute)
	_ = c.Allow(ctx, u)
	if n := robotsFetches(web, "a.example"); n != 2 {
		t.Fatalf("robots.txt asked %d times after the retry interval, want 2", n)
	}
}
