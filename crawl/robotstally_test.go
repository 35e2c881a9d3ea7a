package crawl

import (
	"context"
	"testing"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// The crawl's tally counts robots.txt fetches apart from the reads of feeds
// and articles (#23 §1: "crawl: 18 reads" where the web saw 36 requests):
// through CountRobots, each robots.txt request the web saw is one
// RobotsReads of the source whose read made it, and Reads and TriggerReads
// still count only the articles and the feed.
func TestCrawler_TallyCountsRobotsTxtApart(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("robotstally.example")
	for range 3 {
		s.AddArticle(politetest.Article{})
	}
	st := new(MemoryState)
	p := testPolicy(t, Vault, testInterval)
	client := newClient(t, web, p, fetch.WithStores(fetch.Stores{Robots: CountRobots(new(robots.MemoryStore), st)}))
	c := &Crawler{Client: client, State: st, Sources: []Source{siteSource(s.Name(), Vault, false)}}
	if rep := mustPass(t, c, s.Name()); rep.Deposited != 3 {
		t.Fatalf("pass %+v, want 3 deposited", rep)
	}
	got, _ := st.Tally(context.Background(), s.Name())
	robotsTxt := 0
	for _, r := range web.Requests() {
		if r.Path == "/robots.txt" {
			robotsTxt++
		}
	}
	if robotsTxt == 0 || got.RobotsReads != robotsTxt {
		t.Fatalf("tally %+v: %d robots.txt reads, the web saw %d", got, got.RobotsReads, robotsTxt)
	}
	if got.Reads != 3 || got.TriggerReads != 1 {
		t.Fatalf("tally %+v, want 3 article reads and 1 trigger read beside robots.txt", got)
	}
	audit(t, web, p)
}
