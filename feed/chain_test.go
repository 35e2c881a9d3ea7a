package feed_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// TestChain_V4_RefusalsApplyToBacklog: through the fetch chain's client, a
// backlog walk obeys robots.txt (a disallowed API is refused and nothing is
// sent, V11 "a prohibition covers feed, backlog list and articles") and the
// ledger (after a 429 on the sitemap, the host is left alone, S4), and the
// auditor reports zero violations.
func TestChain_V4_RefusalsApplyToBacklog(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	closed := web.Site("closed.example")
	closed.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /wp-json/\n"})
	closed.AddArticle(politetest.Article{})
	busy := web.Site("busy.example")
	busy.AddArticle(politetest.Article{})
	busy.Misbehave("/sitemap_index.xml", politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: 2 * time.Minute})

	p := fetch.StrictNews()
	p.InfoURL = "https://crawler.example/about"
	p.Interval = 20 * time.Millisecond
	c, err := fetch.New(p, fetch.WithResolver(web), fetch.WithDial(web.DialContext), fetch.WithRootCAs(web.RootCAs()),
		fetch.WithAllowPrefixes(netip.MustParsePrefix("127.0.0.0/8")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()

	// robots.txt forbids the API: the walk yields the chain's refusal.
	api := &feed.APIWalker{Client: c.HTTPClient(), Spec: feed.WordPress(closed.URL(""), 10)}
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
	sm := &feed.SitemapWalker{Client: c.HTTPClient(), URLs: []string{busy.URL("/sitemap_index.xml"), busy.URL("/news-sitemap.xml")}}
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
