package feed_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
)

// The tests of this file read through the real fetch client, as a crawler
// built on package feed does: each reader and walker is given the client's
// Doer for its kind, and the chain (robots.txt, pacing, the ledger,
// conditional GET, decoding) does the rest, over TLS on loopback.

// auditInterval paces the audited tests: arrival stamps can lag tens of
// milliseconds on a loaded machine, so the interval is long enough for the
// auditor's slack to cover them.
const auditInterval = 100 * time.Millisecond

// fixedNow is the instant the walks measure their window from.
var fixedNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// newChain returns a fetch client under the strict news policy (S1-S6),
// pacing each host at interval, that reaches web and only web.
func newChain(t *testing.T, web *politetest.Web, interval time.Duration, opts ...fetch.Option) *fetch.Client {
	t.Helper()
	p := fetch.StrictNews()
	p.Name, p.Version, p.InfoURL = "FeedTestBot", "1.0", "https://crawler.example/about"
	p.Interval = interval
	opts = append([]fetch.Option{fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})}, opts...)
	c, err := fetch.New(p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// skipClock is the client's clock in tests that cross hours: a manual clock
// on which a wait of at most skip (the pacer's, for one interval) passes at
// once, moving the clock on by that much, while longer waits (time-outs)
// fire only when the test advances the clock past them. So nothing depends
// on how fast the machine is, and a time-out never fires early.
type skipClock struct {
	*clock.Manual
	skip time.Duration
}

func (c skipClock) After(d time.Duration) <-chan time.Time {
	ch := c.Manual.After(d)
	if d > 0 && d <= c.skip {
		c.Advance(d)
	}
	return ch
}

// At is After for a wait given as an instant (the pacer's turn).
func (c skipClock) At(t time.Time) <-chan time.Time {
	ch := c.Manual.At(t)
	if d := t.Sub(c.Now()); d > 0 && d <= c.skip {
		c.Advance(d)
	}
	return ch
}

// TestChain_S4_SuspendedHostFeedStillRead: a host that refused five
// articles in a row is suspended for articles (S4), yet its feed, read
// through the client's Doer for feeds, is still read on its schedule, every
// fifteen minutes of the client's clock, and so is its sitemap (read as a
// sitemap), while every article Get, and a page read for feed discovery, is
// refused without being sent.
func TestChain_S4_SuspendedHostFeedStillRead(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("news-1.example")
	var paths []string
	for range 8 {
		a := site.AddArticle(politetest.Article{})
		site.Misbehave(a.Path, politetest.Behaviour{Kind: politetest.Forbidden})
		paths = append(paths, a.Path)
	}
	const interval = time.Second
	clk := skipClock{clock.NewManual(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)), interval}
	c := newChain(t, web, interval, fetch.WithClock(clk))
	ctx := context.Background()
	get := func(path string) (*fetch.Result, error) { return c.Get(ctx, site.URL(path)) }

	// Five refusals in a row, each after the cool-down the one before
	// started (at most six hours under the strict news policy).
	for i := range 5 {
		res, err := get(paths[i])
		if err != nil || res.Status != 403 {
			t.Fatalf("article %d: %v, %v; want a 403", i+1, res, err)
		}
		clk.Advance(7 * time.Hour)
	}

	r := &feed.Reader{Client: c.Doer(fetch.KindFeed), RefsOnly: true}
	const rounds = 4
	for round := range rounds {
		res, err := r.Read(ctx, site.URL("/feed.xml"))
		if err != nil {
			t.Fatalf("round %d: feed of a suspended host: %v, want it read", round+1, err)
		}
		if round == 0 && (res.NotModified || len(res.Feed.Items) == 0) {
			t.Fatalf("round 1: the feed came back NotModified %v with %v", res.NotModified, res.Feed)
		}
		_, err = get(paths[5+round%3])
		var refused *fetch.RefusedError
		if !errors.As(err, &refused) || refused.Reason != fetch.Suspended {
			t.Fatalf("round %d: article Get: %v, want a suspension refusal", round+1, err)
		}
		clk.Advance(15 * time.Minute)
	}

	// The backlog is read on its schedule too: the sitemap, as a sitemap.
	sm := &feed.SitemapWalker{Client: c.Doer(fetch.KindSitemap), URLs: []string{site.URL("/sitemap.xml")}}
	refs := 0
	for _, err := range sm.Walk(ctx, feed.Stop{}) {
		if err != nil {
			t.Fatalf("sitemap of a suspended host: %v, want it read", err)
		}
		refs++
	}
	if refs != len(paths) {
		t.Errorf("sitemap of a suspended host yielded %d refs, want %d", refs, len(paths))
	}

	// A page is not a feed: discovery, read as an article, is refused.
	var refused *fetch.RefusedError
	if _, err := feed.Discover(ctx, c.Doer(fetch.KindArticle), site.URL("/")); !errors.As(err, &refused) || refused.Reason != fetch.Suspended {
		t.Errorf("discovery on a suspended host: %v, want a suspension refusal", err)
	}

	feeds, articles := 0, 0
	for _, q := range web.Requests() {
		switch {
		case q.Path == "/feed.xml":
			feeds++
		case slices.Contains(paths, q.Path):
			articles++
		case q.Path == "/":
			t.Errorf("the home page was requested despite the suspension")
		}
	}
	if feeds != rounds || articles != 5 {
		t.Errorf("on the wire: %d feed reads and %d articles, want %d and 5 (none after the suspension)", feeds, articles, rounds)
	}
	// The client's clock ran hours ahead of the web's: intervals are the
	// pacer's, audited in fetch; here robots.txt first, in flight, headers.
	if rep := web.Audit(politetest.Policy{StrictRobots: true, Ignore: []politetest.Rule{politetest.RuleInterval}}); !rep.OK() {
		t.Fatal(rep)
	}
}

// TestChain_D4_NotModifiedCostsNoParse: through the client's Doer for
// feeds, the second read of an unchanged feed carries the validators the
// chain kept from the first, is answered 304 and costs no parse; a second
// walk of unchanged sitemaps reads nothing again and yields nothing twice.
func TestChain_D4_NotModifiedCostsNoParse(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("news-1.example")
	for i := range 5 {
		site.AddArticle(politetest.Article{ID: 100 + i, Published: fixedNow.Add(-time.Duration(i+1) * time.Hour)})
	}
	c := newChain(t, web, auditInterval)
	ctx := context.Background()
	doer := c.Doer(fetch.KindFeed)

	parses := 0
	r := &feed.Reader{Client: doer, OnParse: func(string) { parses++ }}
	var got []bool
	for range 2 {
		res, err := r.Read(ctx, site.URL("/feed.xml"))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.NotModified)
		if res.NotModified != (res.Feed == nil) {
			t.Errorf("NotModified %v with feed %v", res.NotModified, res.Feed)
		}
	}
	if !slices.Equal(got, []bool{false, true}) || parses != 1 {
		t.Errorf("two feed reads: NotModified %v, parses %d; want [false true], 1", got, parses)
	}

	sm := &feed.SitemapWalker{Client: c.Doer(fetch.KindSitemap), URLs: []string{site.URL("/sitemap.xml")}}
	var counts []int
	for range 2 {
		n := 0
		for _, err := range sm.Walk(ctx, feed.Stop{Now: fixedNow}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		counts = append(counts, n)
	}
	if !slices.Equal(counts, []int{5, 0}) {
		t.Errorf("two sitemap walks yielded %v refs, want [5 0]", counts)
	}

	var statuses []int
	for _, q := range web.Requests() {
		if q.Path == "/feed.xml" || q.Path == "/sitemap.xml" {
			statuses = append(statuses, q.Status)
			if q.Status == 304 && q.Header.Get("If-None-Match") == "" && q.Header.Get("If-Modified-Since") == "" {
				t.Errorf("%s answered 304 without validators sent", q.Path)
			}
		}
	}
	if !slices.Equal(statuses, []int{200, 304, 200, 304}) {
		t.Errorf("statuses on the wire %v, want [200 304 200 304]", statuses)
	}
	if rep := web.Audit(politetest.Policy{Interval: auditInterval, Slack: politetest.Slack(auditInterval / 2)}); !rep.OK() {
		t.Fatal(rep)
	}
}

// TestChain_V3_V4_ReadsAudited reads a simulated publisher through the
// chain, each read as its kind: the feed, the WordPress backlog with a
// known set (V4: the walk stops at a page wholly known beyond 48 hours), and
// the sitemaps robots.txt names. Identifiers agree between feed and API
// (V3), and the auditor reports zero violations at the policy's interval.
func TestChain_V3_V4_ReadsAudited(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("news-1.example")
	const n = 25
	for i := range n {
		// One article every 6 hours, the newest 1 hour before fixedNow.
		site.AddArticle(politetest.Article{ID: 100 + i, Published: fixedNow.Add(-time.Hour - time.Duration(n-1-i)*6*time.Hour)})
	}
	c := newChain(t, web, auditInterval)
	ctx := context.Background()
	res, err := (&feed.Reader{Client: c.Doer(fetch.KindFeed), RefsOnly: true}).Read(ctx, site.URL("/feed.xml"))
	if err != nil {
		t.Fatal(err)
	}
	feedIDs := map[string]string{} // link → id
	for _, it := range res.Feed.Items {
		feedIDs[it.Link] = it.ID
	}
	if len(feedIDs) == 0 {
		t.Fatal("feed has no items")
	}

	// The walk: articles older than 48 h (ids 100..116) are known.
	var known feed.KnownSet
	for i := range 17 {
		known.Add(feed.Ref{ID: strconv.Itoa(100 + i)})
	}
	wp := &feed.APIWalker{Client: c.Doer(fetch.KindAPI), Spec: feed.WordPress(site.URL(""), 5)}
	var got []string
	for ref, err := range wp.Walk(ctx, feed.Stop{Known: &known, Now: fixedNow}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ref.ID)
		if id, ok := feedIDs[ref.URL]; ok && id != ref.ID {
			t.Errorf("V3: %s has id %q in the feed and %q in the API", ref.URL, id, ref.ID)
		}
	}
	// Newest first: 124..117 unknown (the last 48 h hold 124..117), then
	// page 4 (ids 109..105) wholly known and old: the walk stops there.
	var want []string
	for id := 124; id >= 117; id-- {
		want = append(want, strconv.Itoa(id))
	}
	if !slices.Equal(got, want) {
		t.Errorf("walk ids %v, want %v", got, want)
	}
	pages := 0
	for _, q := range web.Requests() {
		if q.Path == "/wp-json/wp/v2/posts" {
			pages++
		}
	}
	if pages != 3 {
		t.Errorf("API pages read %d, want 3 (the third wholly known beyond 48 h)", pages)
	}

	sm := &feed.SitemapWalker{Client: c.Doer(fetch.KindSitemap), Site: site.URL("")}
	count := 0
	for _, err := range sm.Walk(ctx, feed.Stop{Now: fixedNow}) {
		if err != nil {
			t.Fatal(err)
		}
		count++
	}
	if count != n {
		t.Errorf("sitemap walk yielded %d refs, want %d", count, n)
	}

	if rep := web.Audit(politetest.Policy{Interval: auditInterval, Slack: politetest.Slack(auditInterval / 2)}); !rep.OK() {
		t.Fatal(rep)
	}
}

// TestChain_V4_RefusalsApplyToBacklog: through the chain, a backlog walk
// obeys robots.txt (a disallowed API is refused and nothing is sent, V11 "a
// prohibition covers feed, backlog list and articles") and the ledger (after
// a 429 on the sitemap index, the host is left alone, S4), and the auditor
// reports zero violations.
func TestChain_V4_RefusalsApplyToBacklog(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	closed := web.Site("closed.example")
	closed.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /wp-json/\n"})
	closed.AddArticle(politetest.Article{})
	busy := web.Site("busy.example")
	busy.AddArticle(politetest.Article{})
	busy.Misbehave("/sitemap_index.xml", politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: 2 * time.Minute})
	c := newChain(t, web, 20*time.Millisecond)
	ctx := context.Background()

	// robots.txt forbids the API: the walk yields the chain's refusal.
	api := &feed.APIWalker{Client: c.Doer(fetch.KindAPI), Spec: feed.WordPress(closed.URL(""), 10)}
	var errs []error
	for _, err := range api.Walk(ctx, feed.Stop{}) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var refused *fetch.RefusedError
	if len(errs) != 1 || !errors.As(errs[0], &refused) || refused.Reason != fetch.Robots {
		t.Errorf("walk of a disallowed API: errors %v, want one robots refusal", errs)
	}

	// A 429 on the sitemap index: then the news sitemap is not asked for.
	sm := &feed.SitemapWalker{Client: c.Doer(fetch.KindSitemap), URLs: []string{busy.URL("/sitemap_index.xml"), busy.URL("/news-sitemap.xml")}}
	errs = errs[:0]
	for _, err := range sm.Walk(ctx, feed.Stop{}) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var se *feed.StatusError
	if len(errs) != 2 || !errors.As(errs[0], &se) || se.StatusCode != 429 || !errors.As(errs[1], &refused) || refused.Reason != fetch.Cooldown {
		t.Errorf("walk after a 429: errors %v, want a 429 then a cool-down refusal", errs)
	}

	for _, r := range web.Requests() {
		if strings.HasPrefix(r.Path, "/wp-json/") || r.Path == "/news-sitemap.xml" {
			t.Errorf("request sent despite a refusal: %s %s", r.Host, r.Target)
		}
	}
	// Pacing is the chain's own concern, audited in fetch's tests; this test
	// audits robots.txt first and obeyed, cool-downs, one in flight.
	if rep := web.Audit(politetest.Policy{StrictRobots: true, Ignore: []politetest.Rule{politetest.RuleInterval}}); !rep.OK() {
		t.Fatal(rep)
	}
}
