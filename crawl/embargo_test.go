package crawl

import (
	"context"
	"testing"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
)

// An article announced with an embargo is read only once it lifts, at its
// address, on the first pass after (V8).
func TestCrawler_V8_EmbargoedArticleReadOnceItLifts(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("embargo.example")
	now := s.AddArticle(politetest.Article{ID: 1, Published: t0.Add(-time.Hour)})
	later := s.AddArticle(politetest.Article{ID: 2, Published: t0.Add(2 * time.Hour)})
	clk := clock.NewManual(t0)
	src := siteSource(s.Name(), StrictNews, false)
	src.Embargo = true
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), Clock: clk, Sources: []Source{src}}
	rep := mustPass(t, c, src.ID)
	if rep.Deposited != 1 || rep.Embargoed != 1 {
		t.Fatalf("first pass %+v, want 1 deposited, 1 embargoed", rep)
	}
	if n := articleRequests(web, s.Name(), []politetest.Article{later}); n != 0 {
		t.Fatalf("embargoed article read %d times before it lifted", n)
	}
	sc, _ := c.StateStore().Schedule(context.Background(), src.ID)
	if !sc.Embargo.Equal(later.Published) {
		t.Fatalf("schedule's embargo %v, want %v", sc.Embargo, later.Published)
	}
	clk.Set(later.Published.Add(-time.Second))
	if rep = mustPass(t, c, src.ID); rep.Embargoed != 1 || rep.Deposited != 0 {
		t.Fatalf("a second before it lifts: %+v", rep)
	}
	clk.Set(later.Published)
	if rep = mustPass(t, c, src.ID); rep.Deposited != 1 || rep.Embargoed != 0 {
		t.Fatalf("once lifted: %+v", rep)
	}
	if articleRequests(web, s.Name(), []politetest.Article{later}) != 1 || articleRequests(web, s.Name(), []politetest.Article{now}) != 1 {
		t.Fatal("each article is read exactly once")
	}
}
