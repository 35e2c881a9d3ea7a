package sharecheck_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/internal/leaktest"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/sharecheck"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// interval is the tests' per-site interval: the strict news policy's 1 s
// scaled down, so that the auditor still checks every gap.
const interval = 20 * time.Millisecond

// bed is a politetest web and a strict news Checker over it.
type bed struct {
	web  *politetest.Web
	pol  fetch.Policy
	chk  *sharecheck.Checker
	site *politetest.Site
}

// newBed returns a bed whose Checker has maxBytes and cacheSize (0: defaults).
func newBed(t *testing.T, maxBytes int64, cacheSize int) *bed {
	t.Helper()
	web := politetest.NewWeb(t)
	pol := fetch.StrictNews()
	pol.Name, pol.Version, pol.InfoURL = "ShareCheckBot", "1", "https://crawler.example/about"
	pol.Interval = interval
	c, err := fetch.New(pol, fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext,
		RootCAs: web.RootCAs(), Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	chk := &sharecheck.Checker{Client: c, MaxBytes: maxBytes, CacheSize: cacheSize}
	b := &bed{web: web, pol: pol, chk: chk, site: web.Site("news.example")}
	t.Cleanup(func() {
		if rep := web.Audit(b.audit()); !rep.OK() {
			t.Errorf("auditor:\n%s", rep)
		}
	})
	return b
}

// benchBed returns a site's URL maker and a Checker over a strict news
// client at a 1 ms interval (the benchmarks time cached answers).
func benchBed(b *testing.B) (func(path string) string, *sharecheck.Checker) {
	web := politetest.NewWeb(b)
	pol := fetch.StrictNews()
	pol.Name, pol.Version, pol.InfoURL = "ShareCheckBot", "1", "https://crawler.example/about"
	pol.Interval = time.Millisecond
	c, err := fetch.New(pol, fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext,
		RootCAs: web.RootCAs(), Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return web.Site("news.example").URL, &sharecheck.Checker{Client: c}
}

// audit is what the auditor holds the check to: the strict news policy at
// the tests' interval, its identity, its headers.
func (b *bed) audit() politetest.Policy {
	return politetest.Policy{
		Interval:       interval,
		StrictRobots:   true,
		UserAgent:      regexp.MustCompile("^" + regexp.QuoteMeta(b.pol.UserAgent()) + "$"),
		RobotsAgent:    b.pol.Name,
		AllowedHeaders: []string{"User-Agent", "Accept", "Accept-Encoding", "Referer", "If-None-Match", "If-Modified-Since"},
		HTTPSOnly:      true,
		Slack:          politetest.Slack(interval / 2),
	}
}

// requests returns the requests the web received for path on host.
func (b *bed) requests(host, path string) []politetest.Request {
	var out []politetest.Request
	for _, q := range b.web.Requests() {
		if q.Host == host && q.Path == path {
			out = append(out, q)
		}
	}
	return out
}

const page = "https://news.example/2026/12/01/story"

// S7: each of the four formats is usable, judged by its bytes, with its
// dimensions; it was read once, as the crawler (same User-Agent), with the
// article page as Referer and an image Accept, after the host's robots.txt.
func TestCheck_S7_AcceptedFormats(t *testing.T) {
	t.Parallel()
	b := newBed(t, 0, 0)
	for _, tc := range []struct {
		path, media string
		w, h        int
	}{
		{"/images/1.jpg", "image/jpeg", 16, 9},
		{"/images/2.png", "image/png", 16, 9},
		{"/images/3.webp", "image/webp", 1, 1},
		{"/images/4.gif", "image/gif", 16, 9},
	} {
		res := b.chk.Check(context.Background(), sharecheck.Image{URL: b.site.URL(tc.path), Page: page, Credit: "Photo: A. Lens"})
		if !res.Usable() {
			t.Fatalf("%s: not usable: %v", tc.path, res.Err)
		}
		if res.MediaType != tc.media || res.Width != tc.w || res.Height != tc.h {
			t.Errorf("%s: %s %d×%d, want %s %d×%d", tc.path, res.MediaType, res.Width, res.Height, tc.media, tc.w, tc.h)
		}
		if res.FinalURL != b.site.URL(tc.path) || res.Credit != "Photo: A. Lens" || res.Bytes == 0 {
			t.Errorf("%s: final %q credit %q bytes %d", tc.path, res.FinalURL, res.Credit, res.Bytes)
		}
		reqs := b.requests("news.example", tc.path)
		if len(reqs) != 1 {
			t.Fatalf("%s: %d requests, want 1", tc.path, len(reqs))
		}
		h := reqs[0].Header
		if h.Get("Referer") != page || h.Get("User-Agent") != b.pol.UserAgent() || h.Get("Accept") != fetch.ImageAccept {
			t.Errorf("%s: Referer %q, User-Agent %q, Accept %q", tc.path, h.Get("Referer"), h.Get("User-Agent"), h.Get("Accept"))
		}
	}
	if all := b.web.Requests(); len(all) == 0 || all[0].Path != "/robots.txt" {
		t.Errorf("robots.txt was not read first")
	}
}

// S7: an HTML page sent as image/jpeg (politetest's fake image) is not an
// image: the bytes decide, never the Content-Type. So does a PNG whose
// header is cut short.
func TestCheck_S7_WrongBytesRefused(t *testing.T) {
	t.Parallel()
	b := newBed(t, 0, 0)
	res := b.chk.Check(context.Background(), sharecheck.Image{URL: b.site.URL("/images/fake-1.jpg"), Page: page})
	var ue *sharecheck.UnusableError
	if res.Usable() || !errors.As(res.Err, &ue) || ue.Reason != sharecheck.NotImage || !errors.Is(res.Err, sharecheck.ErrNotImage) {
		t.Fatalf("fake JPEG: %v, want NotImage", res.Err)
	}
	if res.MediaType != "" || res.Width != 0 {
		t.Errorf("fake JPEG: %s %d×%d", res.MediaType, res.Width, res.Height)
	}
	b.site.Handle("/images/cut.png", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00"))
	}))
	res = b.chk.Check(context.Background(), sharecheck.Image{URL: "/images/cut.png", Page: b.site.URL("/story")})
	if !errors.Is(res.Err, sharecheck.ErrCorrupt) || res.MediaType != "image/png" {
		t.Fatalf("cut PNG (relative URL): %v %q, want Corrupt image/png", res.Err, res.MediaType)
	}
}

// S3, S7: the image host's robots.txt is obeyed as for pages: a Disallow
// covering the image, a robots.txt that cannot be reached and one that
// answers 403 each mean the image is not used, and it is never requested.
func TestCheck_S3_S7_RobotsRefusal(t *testing.T) {
	t.Parallel()
	b := newBed(t, 0, 0)
	for _, tc := range []struct {
		host   string
		robots politetest.Robots
	}{
		{"disallow.example", politetest.Robots{Body: "User-agent: ShareCheckBot\nDisallow: /images/\n\nUser-agent: *\nAllow: /\n"}},
		{"unreachable.example", politetest.Robots{Failure: politetest.FailReset}},
		{"forbidden.example", politetest.Robots{Status: http.StatusForbidden}},
		{"broken.example", politetest.Robots{Status: http.StatusServiceUnavailable}},
	} {
		s := b.web.Site(tc.host)
		s.SetRobots(tc.robots)
		res := b.chk.Check(context.Background(), sharecheck.Image{URL: s.URL("/images/1.jpg"), Page: page})
		var re *fetch.RefusedError
		if res.Usable() || !errors.Is(res.Err, sharecheck.ErrRefused) || !errors.Is(res.Err, fetch.ErrRobots) || !errors.As(res.Err, &re) {
			t.Errorf("%s: %v, want a robots refusal", tc.host, res.Err)
		}
		if n := len(b.requests(tc.host, "/images/1.jpg")); n != 0 {
			t.Errorf("%s: the image was requested %d times", tc.host, n)
		}
	}
}

// redirects makes path/N redirect to path/N-1, and path/0 to the image.
func redirects(s *politetest.Site, prefix, image string) {
	s.Handle(prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path[len(prefix):], "%d", &n)
		if n == 0 {
			http.Redirect(w, r, image, http.StatusFound)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("%s%d", prefix, n-1), http.StatusFound)
	}))
}

// S7: three redirects are followed and the final URL is the one to link
// to; a fourth is not, and the image is not used.
func TestCheck_S7_AtMostThreeRedirects(t *testing.T) {
	t.Parallel()
	b := newBed(t, 0, 0)
	s := b.site
	redirects(s, "/r/", "/images/5.png")
	res := b.chk.Check(context.Background(), sharecheck.Image{URL: s.URL("/r/2"), Page: page}) // 3 redirects
	if !res.Usable() || res.FinalURL != s.URL("/images/5.png") || res.MediaType != "image/png" {
		t.Fatalf("three redirects: %v, final %q", res.Err, res.FinalURL)
	}
	if h := b.requests("news.example", "/images/5.png"); len(h) != 1 || h[0].Header.Get("Referer") != page {
		t.Errorf("the final hop: %d requests, Referer %v", len(h), h)
	}
	res = b.chk.Check(context.Background(), sharecheck.Image{URL: s.URL("/r/3"), Page: page}) // 4 redirects
	if res.Usable() || !errors.Is(res.Err, sharecheck.ErrRedirects) || !errors.Is(res.Err, fetch.ErrTooManyRedirects) {
		t.Fatalf("four redirects: %v, want Redirects", res.Err)
	}
	if n := len(b.requests("news.example", "/images/5.png")); n != 1 {
		t.Errorf("the image behind four redirects was requested")
	}
}

// S7: an image larger than MaxBytes is not used, and no more than the cap
// is read.
func TestCheck_S7_OversizeRefused(t *testing.T) {
	t.Parallel()
	b := newBed(t, 16<<10, 0)
	b.site.Misbehave("/images/huge.jpg", politetest.Behaviour{Kind: politetest.Oversize, Size: 1 << 20})
	res := b.chk.Check(context.Background(), sharecheck.Image{URL: b.site.URL("/images/huge.jpg"), Page: page})
	if res.Usable() || !errors.Is(res.Err, sharecheck.ErrTooLarge) || !errors.Is(res.Err, fetch.ErrWireTooLarge) {
		t.Fatalf("oversize: %v, want TooLarge", res.Err)
	}
	if res.Bytes > 16<<10 {
		t.Errorf("read %d bytes past a 16 KiB cap", res.Bytes)
	}
}

// S7: an image on a host that does not resolve is not used; a relative
// URL without a page, or an http one, neither.
func TestCheck_S7_UnknownHostAndBadURLs(t *testing.T) {
	t.Parallel()
	b := newBed(t, 0, 0)
	res := b.chk.Check(context.Background(), sharecheck.Image{URL: "https://nowhere.example/a.jpg", Page: page})
	if res.Usable() || !errors.Is(res.Err, sharecheck.ErrUnknownHost) {
		t.Errorf("unknown host: %v, want UnknownHost", res.Err)
	}
	res = b.chk.Check(context.Background(), sharecheck.Image{URL: "/images/1.jpg"})
	if !errors.Is(res.Err, sharecheck.ErrInvalidURL) || !errors.Is(res.Err, sharecheck.ErrNotAbsolute) {
		t.Errorf("relative without a page: %v", res.Err)
	}
	res = b.chk.Check(context.Background(), sharecheck.Image{URL: "http://news.example/images/1.jpg", Page: page})
	if !errors.Is(res.Err, sharecheck.ErrRefused) || !errors.Is(res.Err, fetch.ErrNotHTTPS) {
		t.Errorf("http: %v, want a NotHTTPS refusal", res.Err)
	}
	res = b.chk.Check(context.Background(), sharecheck.Image{URL: b.site.URL("/images/none.bmp"), Page: page})
	var ue *sharecheck.UnusableError
	if !errors.As(res.Err, &ue) || ue.Reason != sharecheck.Status || ue.Status != http.StatusNotFound {
		t.Errorf("404: %v, want Status 404", res.Err)
	}
	if (&sharecheck.Checker{}).Check(context.Background(), sharecheck.Image{URL: page}).Err == nil {
		t.Errorf("a Checker without a Client checked an image")
	}
}

// S7: an image URL is downloaded once, however many stories name it and
// however many check it at once; each gets its own credit.
func TestCheck_S7_OncePerURL(t *testing.T) {
	t.Parallel()
	b := newBed(t, 0, 0)
	u := b.site.URL("/images/7.jpg")
	var wg sync.WaitGroup
	results := make([]sharecheck.Result, 16)
	for i := range results {
		wg.Go(func() {
			results[i] = b.chk.Check(context.Background(), sharecheck.Image{URL: u, Page: page, Credit: fmt.Sprint("credit ", i)})
		})
	}
	wg.Wait()
	for i, res := range results {
		if !res.Usable() || res.Width != 16 || res.Credit != fmt.Sprint("credit ", i) {
			t.Errorf("check %d: %+v", i, res)
		}
	}
	// Again later, from another story, and with a fragment: no new request.
	if res := b.chk.Check(context.Background(), sharecheck.Image{URL: u + "#top", Page: page + "-2"}); !res.Usable() {
		t.Errorf("later check: %v", res.Err)
	}
	// A refusal is remembered as well.
	f := b.site.URL("/images/fake-7.jpg")
	for range 3 {
		b.chk.Check(context.Background(), sharecheck.Image{URL: f, Page: page})
	}
	if n, m := len(b.requests("news.example", "/images/7.jpg")), len(b.requests("news.example", "/images/fake-7.jpg")); n != 1 || m != 1 {
		t.Errorf("%d and %d requests, want one each", n, m)
	}
	if b.chk.Len() != 2 {
		t.Errorf("Len %d, want 2", b.chk.Len())
	}
}

// The cache is bounded: past CacheSize the least recently asked URL is
// forgotten (and read again when asked again); a check whose context ends
// first is not remembered.
func TestCheck_CacheBoundedAndCancelNotKept(t *testing.T) {
	t.Parallel()
	b := newBed(t, 0, 2)
	ctx := context.Background()
	for _, p := range []string{"/images/1.jpg", "/images/2.png", "/images/1.jpg", "/images/3.gif"} {
		b.chk.Check(ctx, sharecheck.Image{URL: b.site.URL(p), Page: page})
	}
	if b.chk.Len() != 2 {
		t.Fatalf("Len %d, want 2", b.chk.Len())
	}
	// Forgotten, so read again, in full: the bytes were never kept, so the
	// read is not conditional (a 304 would leave nothing to judge).
	if res := b.chk.Check(ctx, sharecheck.Image{URL: b.site.URL("/images/2.png"), Page: page}); !res.Usable() || res.Width != 16 {
		t.Errorf("/images/2.png read again: %+v, want usable", res)
	}
	if reqs := b.requests("news.example", "/images/2.png"); len(reqs) == 2 && reqs[1].Header.Get("If-None-Match") != "" {
		t.Errorf("the second read of an image was conditional")
	}
	if n := len(b.requests("news.example", "/images/2.png")); n != 2 {
		t.Errorf("/images/2.png: %d requests, want 2 (forgotten once)", n)
	}
	if n := len(b.requests("news.example", "/images/1.jpg")); n != 1 {
		t.Errorf("/images/1.jpg: %d requests, want 1 (asked recently, kept)", n)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	res := b.chk.Check(cancelled, sharecheck.Image{URL: b.site.URL("/images/9.webp"), Page: page})
	if res.Usable() || !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("cancelled: %v", res.Err)
	}
	if res := b.chk.Check(ctx, sharecheck.Image{URL: b.site.URL("/images/9.webp"), Page: page}); !res.Usable() {
		t.Errorf("after a cancelled check: %v, want the image read and usable", res.Err)
	}
}

func TestReason_Strings(t *testing.T) {
	t.Parallel()
	for r := sharecheck.InvalidURL; r <= sharecheck.Corrupt; r++ {
		if s := r.String(); s == "" || s[0] == 'r' && s != "refused" {
			t.Errorf("Reason(%d) = %q", r, s)
		}
	}
	if s := sharecheck.Reason(0).String(); s != "reason(0)" {
		t.Errorf("zero Reason: %q", s)
	}
	e := &sharecheck.UnusableError{URL: "https://a.example/x.jpg", Reason: sharecheck.Status, Status: 404, Err: fetch.ErrNotOK}
	if got, want := e.Error(), "sharecheck: image https://a.example/x.jpg not used: not a 200 (404): fetch: final status is not 200"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// A Result is kept with its story as JSON: the reason in words, no Err, and
// an unusable image stays unusable once read back.
func TestResult_JSONKeepsTheReason(t *testing.T) {
	t.Parallel()
	b := newBed(t, 0, 0)
	for _, tc := range []struct {
		path   string
		reason sharecheck.Reason
		words  string
	}{
		{"/images/1.jpg", 0, ""},
		{"/images/fake-2.jpg", sharecheck.NotImage, `"Reason":"not an image"`},
	} {
		res := b.chk.Check(context.Background(), sharecheck.Image{URL: b.site.URL(tc.path), Page: page, Credit: "Photo: A. Lens"})
		if res.Reason != tc.reason {
			t.Fatalf("%s: reason %v, want %v", tc.path, res.Reason, tc.reason)
		}
		data, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if tc.words != "" && !strings.Contains(string(data), tc.words) || tc.words == "" && strings.Contains(string(data), "Reason") {
			t.Errorf("%s: %s", tc.path, data)
		}
		var back sharecheck.Result
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if back.Usable() != res.Usable() || back.Reason != res.Reason || back.Width != res.Width || back.FinalURL != res.FinalURL || back.Credit != res.Credit {
			t.Errorf("%s: read back %+v from %+v", tc.path, back, res)
		}
	}
	var r sharecheck.Reason
	if err := r.UnmarshalText([]byte("no such")); err == nil {
		t.Error("an unknown reason was read")
	}
}

// Answers expire: one about the image itself after MaxAge, one that may
// change soon (a 503 here) after Recheck, so a long-running crawler neither
// trusts a day-old answer nor turns a passing failure into a lasting one.
func TestCheck_S7_AnswersExpire(t *testing.T) {
	t.Parallel()
	b := newBed(t, 0, 0)
	m := clock.NewManual(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	b.chk.Clock, b.chk.MaxAge, b.chk.Recheck = m, 24*time.Hour, 10*time.Minute
	var served atomic.Int32
	b.site.Handle("/flaky/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		http.Redirect(w, r, "/images/3.gif", http.StatusFound)
	}))
	ctx := context.Background()
	good, flaky := b.site.URL("/images/1.jpg"), b.site.URL("/flaky/1.gif")
	check := func(u string) sharecheck.Result {
		return b.chk.Check(ctx, sharecheck.Image{URL: u, Page: page})
	}
	if res := check(flaky); res.Usable() || !errors.Is(res.Err, sharecheck.ErrStatus) {
		t.Fatalf("first flaky check: %+v, want a 503", res)
	}
	check(good)
	m.Advance(9 * time.Minute)
	if res := check(flaky); res.Usable() {
		t.Errorf("flaky within Recheck: usable, want the 503 remembered")
	}
	m.Advance(2 * time.Minute)
	if res := check(flaky); !res.Usable() {
		t.Errorf("flaky after Recheck: %v, want it read again and usable", res.Err)
	}
	if n := len(b.requests("news.example", "/flaky/1.gif")); n != 2 {
		t.Errorf("flaky: %d requests, want 2", n)
	}
	m.Advance(23 * time.Hour)
	check(good)
	if n := len(b.requests("news.example", "/images/1.jpg")); n != 1 {
		t.Errorf("good within MaxAge: %d requests, want 1", n)
	}
	m.Advance(time.Hour)
	if res := check(good); !res.Usable() {
		t.Errorf("good after MaxAge: %v", res.Err)
	}
	if n := len(b.requests("news.example", "/images/1.jpg")); n != 2 {
		t.Errorf("good after MaxAge: %d requests, want 2 (read again)", n)
	}
}
