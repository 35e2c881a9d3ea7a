package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/politetest"
)

func refusal(t *testing.T, err error, want Reason) *RefusedError {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) || re.Reason != want || !errors.Is(err, want.sentinel()) {
		t.Fatalf("err = %v, want a %s refusal", err, want)
	}
	return re
}

// requested reports whether the web saw any request for host (and path, if set).
func requested(web *politetest.Web, host, path string) bool {
	for _, r := range web.Requests() {
		if r.Host == host && (path == "" || r.Path == path) {
			return true
		}
	}
	return false
}

// TestRedirect_V10 covers the redirect policy: loops and long chains stop at the
// limit (three for images, S7), http and unadmitted hosts are refused, a hop that
// adds an undeclared parameter stops the read, a declared one is followed; every
// hop passes robots and the pacer for its own host (the auditor checks it).
func TestRedirect_V10(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("redir.example")
	web.Site("www.redir.example")
	web.Site("other.example")
	s.Misbehave("/loop", politetest.Behaviour{Kind: politetest.RedirectLoop})
	s.Misbehave("/http", politetest.Behaviour{Kind: politetest.RedirectToHTTP})
	s.Misbehave("/www", politetest.Behaviour{Kind: politetest.RedirectToHost})
	s.Misbehave("/other", politetest.Behaviour{Kind: politetest.RedirectToHost, Host: "other.example"})
	s.Misbehave("/utm", politetest.Behaviour{Kind: politetest.RedirectAddParam})
	s.Misbehave("/ref", politetest.Behaviour{Kind: politetest.RedirectAddParam, Param: "ref=1"})
	s.Misbehave("/three", politetest.Behaviour{Kind: politetest.RedirectChain, Hops: 3})
	s.Misbehave("/four", politetest.Behaviour{Kind: politetest.RedirectChain, Hops: 4})
	p := testPolicy(StrictNews(), auditInterval)
	p.Admitted = []string{"*.redir.example"}
	p.Params = []string{"ref", "loop", "hop"} // loop and hop: the web's own redirect markers
	c := newClient(t, web, p)
	ctx := context.Background()
	for _, tc := range []struct {
		path string
		opts []GetOptions
		want Reason // 0: followed to a 200
	}{
		{"/loop", nil, TooManyRedirects},
		{"/http", nil, NotHTTPS},
		{"/www", nil, 0},
		{"/other", nil, HostNotAdmitted},
		{"/utm", nil, UndeclaredParam},
		{"/ref", nil, 0},
		{"/three", []GetOptions{{Kind: KindImage}}, 0},
		{"/four", []GetOptions{{Kind: KindImage}}, TooManyRedirects},
		{"/four", nil, 0}, // the page limit is five

	} {
		res, err := c.Get(ctx, s.URL(tc.path), tc.opts...)
		if tc.want != 0 {
			refusal(t, err, tc.want)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if len(res.Hops) < 2 || res.Hops[len(res.Hops)-1].URL != res.FinalURL {
			t.Errorf("%s: hops %+v final %s", tc.path, res.Hops, res.FinalURL)
		}
	}
	if requested(web, "other.example", "") {
		t.Error("a request reached other.example, which the source does not admit")
	}
	if !requested(web, "www.redir.example", "/robots.txt") {
		t.Error("robots.txt of the redirect target was not read")
	}
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Fatal(rep)
	}
}

// TestSSRF_V10_BlockedRanges: a host resolving to any non-public address is
// refused with BlockedAddr before any connection, including IPv4-mapped and NAT64
// forms of private addresses (V10).
func TestSSRF_V10_BlockedRanges(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	p := testPolicy(Vault(), time.Millisecond)
	c := newClient(t, web, p)
	for _, a := range []string{
		"0.0.0.1", "10.0.0.8", "100.64.0.1", "169.254.169.254", "172.16.0.1", "172.31.255.254",
		"192.0.0.8", "192.168.1.1", "198.18.0.1", "198.19.255.1", "192.0.2.1", "198.51.100.7",
		"203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::ffff:10.0.0.8", "::ffff:192.168.0.1", "::ffff:169.254.169.254",
		"64:ff9b::a00:8", "64:ff9b::c0a8:101", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1",
		"100::1", "2001::1", "2001:db8::1", "2002:a00:8::1", "2001:1ff::1",
	} {
		name := "x" + strings.NewReplacer(":", "x", ".", "d").Replace(a) + "y.example"
		web.Site(name).ResolveTo(netip.MustParseAddr(a))
		_, err := c.Get(context.Background(), "https://"+name+"/")
		refusal(t, err, BlockedAddr)
		if requested(web, name, "") {
			t.Errorf("%s (%s): a request reached the web", name, a)
		}
	}
	if n := len(web.Connections()); n != 0 {
		t.Fatalf("%d connections were opened", n)
	}
}

// TestSSRF_V10_LoopbackWithoutAllowList: without the tests' allow-list, loopback
// itself is refused.
func TestSSRF_V10_LoopbackWithoutAllowList(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	web.Site("plain.example")
	c, err := New(testPolicy(Vault(), time.Millisecond), WithNetwork(Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs()}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Get(context.Background(), "https://plain.example/")
	refusal(t, err, BlockedAddr)
	if len(web.Requests()) != 0 {
		t.Fatal("a request reached the web")
	}
}

// rebinding answers a public address first, then a private one: DNS rebinding.
type rebinding struct {
	web   *politetest.Web
	calls int
}

func (r *rebinding) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.calls++
	if r.calls == 1 {
		// The web's dialer sends this address to loopback: nothing leaves the machine.
		return []netip.Addr{netip.MustParseAddr("8.8.8.8")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("10.0.0.8")}, nil
}

// TestSSRF_V10_Rebinding: a name that resolved to a public address and then
// rebinds to a private one is refused on the next connection; a redirect to a
// host resolving to a private address is refused too.
func TestSSRF_V10_Rebinding(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("rebind.example")
	a := s.AddArticle(politetest.Article{})
	p := testPolicy(Vault(), time.Millisecond)
	c := newClient(t, web, p, WithNetwork(Network{Resolver: &rebinding{web: web}, DNSTTL: time.Nanosecond}))
	ctx := context.Background()
	if _, err := c.Get(ctx, s.URL(a.Path)); err != nil {
		t.Fatalf("first read: %v", err)
	}
	c.base.CloseIdleConnections()
	_, err := c.Get(ctx, s.URL(a.Path))
	refusal(t, err, BlockedAddr)

	web2 := politetest.NewWeb(t)
	src := web2.Site("public.example")
	src.Misbehave("/go", politetest.Behaviour{Kind: politetest.RedirectToHost, Host: "intranet.example"})
	web2.Site("intranet.example").ResolveTo(netip.MustParseAddr("10.1.2.3"))
	c2 := newClient(t, web2, p)
	_, err = c2.Get(ctx, src.URL("/go"))
	refusal(t, err, BlockedAddr)
	if requested(web2, "intranet.example", "") {
		t.Fatal("the redirect reached the private host")
	}
}

// TestHostile_V10_V12: hostile responses are refused with their typed reason
// within the bounds: a gzip bomb, an oversize and an endless body, a trickling
// body past the time limit, a truncated body, an unknown coding, a missing media
// type, oversize headers, a slow first byte.
func TestHostile_V10_V12(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("hostile.example")
	a := s.AddArticle(politetest.Article{})
	s.Misbehave("/bomb", politetest.Behaviour{Kind: politetest.GzipBomb, Size: 4 << 20})
	s.Misbehave("/big", politetest.Behaviour{Kind: politetest.Oversize, Size: 4 << 20})
	page := func(b politetest.Behaviour) string {
		p := s.AddArticle(politetest.Article{}).Path
		s.Misbehave(p, b)
		return p
	}
	trickle := page(politetest.Behaviour{Kind: politetest.Trickle, Delay: 20 * time.Millisecond})
	cut := page(politetest.Behaviour{Kind: politetest.Truncate})
	enc := page(politetest.Behaviour{Kind: politetest.UnknownEncoding})
	notype := page(politetest.Behaviour{Kind: politetest.NoContentType})
	slow := page(politetest.Behaviour{Kind: politetest.SlowFirstByte, Delay: 5 * time.Second})
	s.Misbehave("/gone", politetest.Behaviour{Kind: politetest.ServerError, Status: 404})
	s.Handle("/endless", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		buf := make([]byte, 32<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	}))
	s.Handle("/headers", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Huge", strings.Repeat("a", 100<<10))
		w.Write([]byte("x"))
	}))
	p := testPolicy(Digest(), time.Millisecond)
	p.MaxWire, p.MaxDecoded = 1<<20, 1<<20
	p.Timeout, p.FirstByte = 3*time.Second, 2*time.Second
	c := newClient(t, web, p)
	ctx := context.Background()
	for _, tc := range []struct {
		path string
		want error // nil: a transport error without a Result
	}{
		{"/bomb", ErrDecodedTooLarge},
		{"/big", ErrWireTooLarge},
		{"/endless", ErrWireTooLarge},
		{trickle, ErrTruncated},
		{cut, ErrTruncated},
		{enc, ErrUnknownCoding},
		{notype, ErrNoMediaType},
		{"/gone", ErrNotOK},
		{a.Path, nil},
		{"/headers", nil},
		{slow, nil},
	} {
		res, err := c.Get(ctx, s.URL(tc.path))
		switch {
		case tc.path == a.Path:
			if err != nil || !res.Complete() {
				t.Errorf("%s: the plain article is not complete: %v", tc.path, err)
			}
		case tc.want == nil:
			if err == nil || res != nil {
				t.Errorf("%s: got %v, %v; want an error and no Result", tc.path, res, err)
			}
		default:
			if res == nil {
				t.Errorf("%s: no Result (err %v)", tc.path, err)
				continue
			}
			if got := res.Depositable(); !errors.Is(got, tc.want) || res.Complete() {
				t.Errorf("%s: Depositable = %v, want %v", tc.path, got, tc.want)
			}
			if err != nil && !errors.Is(err, tc.want) {
				t.Errorf("%s: err = %v, want %v", tc.path, err, tc.want)
			}
			if res.Body != nil && tc.want != ErrNoMediaType && tc.want != ErrNotOK {
				t.Errorf("%s: a body of %d bytes was passed on", tc.path, len(res.Body))
			}
		}
	}
}

// TestHostile_V10_GzipBombMemoryBounded: a 64 MiB gzip bomb read with a 1 MiB cap
// allocates a few MiB, not 64. (Not parallel: it measures the heap.)
func TestHostile_V10_GzipBombMemoryBounded(t *testing.T) {
	web := politetest.NewWeb(t)
	s := web.Site("bomb.example")
	s.Misbehave("/bomb", politetest.Behaviour{Kind: politetest.GzipBomb, Size: 64 << 20})
	p := testPolicy(Vault(), time.Millisecond)
	p.MaxDecoded = 1 << 20
	c := newClient(t, web, p)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := c.Get(context.Background(), s.URL("/bomb"))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrDecodedTooLarge) {
		t.Fatalf("err = %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Fatalf("reading the bomb allocated %d MiB", got>>20)
	}
}

// TestConditional_D4: the digest engine's second read of an unchanged feed goes
// out with If-None-Match/If-Modified-Since and comes back 304 with no body; the
// vault sends neither header (V9).
func TestConditional_D4(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		p       Policy
		want304 bool
	}{{"digest", Digest(), true}, {"vault", Vault(), false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web := politetest.NewWeb(t)
			s := web.Site("feeds.example")
			s.AddArticle(politetest.Article{})
			c := newClient(t, web, testPolicy(tc.p, time.Millisecond))
			ctx := context.Background()
			first, err := c.Get(ctx, s.URL("/feed.xml"), GetOptions{Kind: KindFeed})
			if err != nil || !first.Complete() {
				t.Fatalf("%s: first read: %v", tc.name, err)
			}
			second, err := c.Get(ctx, s.URL("/feed.xml"), GetOptions{Kind: KindFeed})
			if err != nil {
				t.Fatal(err)
			}
			if second.NotModified != tc.want304 || (tc.want304 && (second.Body != nil || second.Status != 304 || second.Proof != nil)) {
				t.Fatalf("%s: second read: status %d NotModified %v body %d", tc.name, second.Status, second.NotModified, len(second.Body))
			}
			reqs := web.Requests()
			last := reqs[len(reqs)-1]
			if got := last.Header.Get("If-None-Match") != ""; got != tc.want304 {
				t.Fatalf("%s: If-None-Match sent = %v", tc.name, got)
			}
		})
	}
}

// TestLedger_D5_S4_ServerRefusals: a 429 comes back as a Result, after which the
// host is refused by us with Cooldown for at least 15 minutes (D5); a challenge
// page cools the host down under the strict policy (S4); the auditor sees no
// request during the announced cool-downs.
func TestLedger_D5_S4_ServerRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		p    Policy
		b    politetest.Behaviour
		min  time.Duration
	}{
		{"digest 429", Digest(), politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: time.Second}, 15 * time.Minute},
		{"digest 503", Digest(), politetest.Behaviour{Kind: politetest.Unavailable, RetryAfter: time.Hour, RetryAfterDate: true}, 59 * time.Minute},
		{"strict challenge", StrictNews(), politetest.Behaviour{Kind: politetest.Challenge}, 5 * time.Minute},
		{"strict 401", StrictNews(), politetest.Behaviour{Kind: politetest.Unauthorized}, 5 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web := politetest.NewWeb(t)
			s := web.Site("rude.example")
			a := s.AddArticle(politetest.Article{})
			b := s.AddArticle(politetest.Article{})
			s.Misbehave(a.Path, tc.b)
			p := testPolicy(tc.p, auditInterval)
			c := newClient(t, web, p)
			ctx := context.Background()
			start := time.Now()
			res, err := c.Get(ctx, s.URL(a.Path))
			if err != nil || res.Complete() || res.Status < 400 {
				t.Fatalf("%s: refusal came back as %v, %v", tc.name, res, err)
			}
			_, err = c.Get(ctx, s.URL(b.Path))
			re := refusal(t, err, Cooldown)
			if re.Until.Sub(start) < tc.min {
				t.Errorf("%s: cool-down until %v, want at least %v", tc.name, re.Until.Sub(start), tc.min)
			}
			if rep := web.Audit(auditPolicy(p)); !rep.OK() {
				t.Fatalf("%s: %s", tc.name, rep)
			}
		})
	}
}

// TestLedger_S4_SuspendedArticlesFeedsGoOn: after five refusals in a row the
// strict policy suspends the host's articles (refused with Suspended until the
// daily re-check) while its feed keeps its schedule (S4).
func TestLedger_S4_SuspendedArticlesFeedsGoOn(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("suspended.example")
	a := s.AddArticle(politetest.Article{})
	p := testPolicy(StrictNews(), time.Millisecond)
	c := newClient(t, web, p)
	ctx := context.Background()
	now := time.Now()
	for i := range 5 { // five refusals, long enough ago for the cool-downs to have ended
		at := now.Add(-20*time.Hour + time.Duration(i)*3*time.Hour)
		if _, err := c.ledger.Observe(ctx, "suspended.example", backoff.Outcome{Kind: backoff.Article, Status: 403}, at); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.Get(ctx, s.URL(a.Path))
	re := refusal(t, err, Suspended)
	if re.Until.Before(now) {
		t.Fatalf("suspended until %v, in the past", re.Until)
	}
	res, err := c.Get(ctx, s.URL("/feed.xml"), GetOptions{Kind: KindFeed})
	if err != nil || !res.Complete() {
		t.Fatalf("feed of a suspended host: %v", err)
	}
	if requested(web, "suspended.example", a.Path) {
		t.Fatal("the suspended article was requested")
	}
}

// TestRobots_S3_V11: a disallowed path is refused before any request to it; a
// robots.txt answering 403 disallows the whole site under the strict policy (S3)
// and is treated as absent by the vault (V11); a 5xx disallows the vault until
// the retry, 15 minutes on (V11); robots.txt is refused like any other request
// while its host cools down.
func TestRobots_S3_V11(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	dis := web.Site("disallow.example")
	dis.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /private/\n"})
	dis.Handle("/private/x", http.NotFoundHandler())
	forbidden := web.Site("robots403.example")
	forbidden.SetRobots(politetest.Robots{Status: 403})
	fa := forbidden.AddArticle(politetest.Article{})
	down := web.Site("robots503.example")
	down.SetRobots(politetest.Robots{Status: 503})
	cooling := web.Site("cooling.example")

	strict := newClient(t, web, testPolicy(StrictNews(), time.Millisecond))
	vault := newClient(t, web, testPolicy(Vault(), time.Millisecond))
	ctx := context.Background()

	_, err := vault.Get(ctx, dis.URL("/private/x"))
	refusal(t, err, Robots)
	if requested(web, "disallow.example", "/private/x") {
		t.Error("the disallowed path was requested")
	}
	_, err = strict.Get(ctx, forbidden.URL(fa.Path))
	refusal(t, err, Robots)
	if res, err := vault.Get(ctx, forbidden.URL(fa.Path)); err != nil || !res.Complete() {
		t.Errorf("vault with robots.txt 403: %v", err)
	}
	start := time.Now()
	_, err = vault.Get(ctx, down.URL("/"))
	re := refusal(t, err, Robots)
	if d := re.Until.Sub(start); d < 14*time.Minute || d > 16*time.Minute {
		t.Errorf("robots.txt 503: refused until +%v, want +15m", d)
	}

	if _, err := vault.ledger.Observe(ctx, "cooling.example", backoff.Outcome{Status: 429, RetryAfter: "600"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := strict.ledger.Observe(ctx, "cooling.example", backoff.Outcome{Status: 429, RetryAfter: "600"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = strict.Get(ctx, cooling.URL("/"))
	refusal(t, err, Cooldown)
	if requested(web, "cooling.example", "") {
		t.Fatal("robots.txt was requested from a host cooling down")
	}
}

// TestPacing_V7_CrawlDelayOnTheWire: a Crawl-delay longer than the interval spaces
// the requests as it asks, measured at the server.
func TestPacing_V7_CrawlDelayOnTheWire(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("delay.example")
	s.SetRobots(politetest.Robots{Body: "User-agent: *\nCrawl-delay: 0.3\n"})
	var paths []string
	for range 4 {
		paths = append(paths, s.AddArticle(politetest.Article{}).Path)
	}
	p := testPolicy(Vault(), 5*time.Millisecond)
	c := newClient(t, web, p)
	for _, path := range paths {
		if _, err := c.Get(context.Background(), s.URL(path)); err != nil {
			t.Fatal(err)
		}
	}
	reqs := web.Requests()
	slack := auditSlack(300 * time.Millisecond)
	for i := 2; i < len(reqs); i++ {
		if gap := reqs[i].Start.Sub(reqs[i-1].Start); gap < 300*time.Millisecond-slack {
			t.Errorf("requests %d and %d started %v apart, Crawl-delay is 300ms", i-1, i, gap)
		}
	}
	ap := auditPolicy(p)
	ap.Slack = slack
	if rep := web.Audit(ap); !rep.OK() {
		t.Fatal(rep)
	}
}

// TestHostKey_P1_OneHostOneKey: Example.COM:443, example.com. and example.com
// share one robots.txt fetch and one pacing budget.
func TestHostKey_P1_OneHostOneKey(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("onekey.example")
	var paths []string
	for range 3 {
		paths = append(paths, s.AddArticle(politetest.Article{}).Path)
	}
	p := testPolicy(Digest(), auditInterval)
	c := newClient(t, web, p)
	for i, host := range []string{"OneKey.EXAMPLE:443", "onekey.example.", "onekey.example"} {
		res, err := c.Get(context.Background(), "https://"+host+paths[i])
		if err != nil || !res.Complete() {
			t.Fatalf("%s: %v", host, err)
		}
		if want := "https://onekey.example" + paths[i]; res.FinalURL != want {
			t.Errorf("final URL %s, want %s", res.FinalURL, want)
		}
	}
	// An internationalised name is asked for by its A-label.
	idn := web.Site("xn--bcher-kva.example")
	ia := idn.AddArticle(politetest.Article{})
	res, err := c.Get(context.Background(), "https://BÜCHER.example"+ia.Path)
	if err != nil || res.FinalURL != "https://xn--bcher-kva.example"+ia.Path {
		t.Fatalf("IDN: %v, %v", res, err)
	}
	robotsReads := 0
	for _, r := range web.Requests() {
		if r.Path == "/robots.txt" && r.Host == "onekey.example" {
			robotsReads++
		}
	}
	if robotsReads != 1 {
		t.Errorf("robots.txt read %d times, want once", robotsReads)
	}
	ap := auditPolicy(p)
	if rep := web.Audit(ap); !rep.OK() {
		t.Fatal(rep)
	}
}
