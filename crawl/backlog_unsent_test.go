package crawl

import (
	"context"
	"errors"
	"testing"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
)

// A backlog walk the chain never sent (its shared schedule refused every
// claim: our failure, not the publisher's) leaves the backlog due, so the
// next pass walks it, instead of waiting out BacklogInterval (a day) for a
// walk that never asked the publisher anything; a walk that reached the
// publisher moves on as before (S2).
func TestCrawler_S2_BacklogNotSentStaysDue(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("unsent-backlog.example")
	for range 3 {
		s.AddArticle(politetest.Article{})
	}
	p := testPolicy(t, StrictNews, testInterval)
	sched := &downSchedule{}
	sched.down.Store(true)
	clk := clock.NewManual(t0)
	src := siteSource(s.Name(), StrictNews, false)
	src.Identifier = IDFromURL
	src.Backlog = &Backlog{Kind: BacklogSitemap, URLs: []string{"https://" + s.Name() + "/sitemap.xml"}}
	c := &Crawler{Client: newClient(t, web, p, fetch.WithStores(fetch.Stores{Schedule: sched})), Clock: clk, Sources: []Source{src}}

	rep := mustPass(t, c, src.ID)
	if !rep.BacklogRead || !errors.Is(rep.Backlog.Err, errScheduleDown) {
		t.Fatalf("pass with the schedule down: backlog read %v, err %v; want it tried and unsent", rep.BacklogRead, rep.Backlog.Err)
	}
	sc, err := c.StateStore().Schedule(context.Background(), src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sc.NextBacklog.After(t0) || !sc.LastBacklog.IsZero() {
		t.Fatalf("schedule after an unsent backlog walk: %+v, want the backlog still due", sc)
	}
	if n := len(web.Requests()); n != 0 {
		t.Fatalf("%d requests reached the web with the schedule down", n)
	}

	sched.down.Store(false)
	rep = mustPass(t, c, src.ID)
	if !rep.BacklogRead || rep.Backlog.Err != nil {
		t.Fatalf("next pass: backlog read %v, err %v; want it walked", rep.BacklogRead, rep.Backlog.Err)
	}
	walked := false
	for _, q := range web.Requests() {
		walked = walked || q.Path == "/sitemap.xml"
	}
	if !walked {
		t.Fatal("the next pass did not read the sitemap")
	}
	sc, _ = c.StateStore().Schedule(context.Background(), src.ID)
	if !sc.NextBacklog.After(clk.Now()) || sc.LastBacklog.IsZero() {
		t.Fatalf("schedule after the walk: %+v, want the backlog moved on", sc)
	}
	audit(t, web, p)
}
