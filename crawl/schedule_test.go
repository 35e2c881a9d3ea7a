package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
)

var t0 = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)

// feedReads counts the web's reads of host's feed.
func feedReads(web *politetest.Web, host string) int {
	n := 0
	for _, r := range web.Requests() {
		if r.Host == host && r.Path == "/feed.xml" {
			n++
		}
	}
	return n
}

// An operator's refresh within the guard (5 minutes) of the last read is
// declined and sends nothing; after it, the trigger is read at once (S2).
func TestCrawler_S2_RefreshGuard(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 2, Seed: 8})
	site := info.Sites[0].Name
	clk := clock.NewManual(t0)
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), Clock: clk,
		Sources: []Source{siteSource(site, StrictNews, false)}}
	mustPass(t, c, site)
	clk.Advance(4*time.Minute + 59*time.Second)
	_, err := c.Refresh(context.Background(), site)
	var re *RefreshError
	if !errors.As(err, &re) || !errors.Is(err, ErrRefreshDeclined) || !re.Next.Equal(t0.Add(15*time.Minute)) {
		t.Fatalf("Refresh within the guard: %v, want declined until the next read at +15m", err)
	}
	if n := feedReads(web, site); n != 1 {
		t.Fatalf("%d feed reads, want 1: a declined refresh sends nothing", n)
	}
	clk.Advance(time.Second)
	rep, err := c.Refresh(context.Background(), site)
	if err != nil || !rep.TriggerRead {
		t.Fatalf("Refresh after the guard: %+v, %v", rep, err)
	}
	if n := feedReads(web, site); n != 2 {
		t.Fatalf("%d feed reads, want 2", n)
	}
	sc, _ := c.StateStore().Schedule(context.Background(), site)
	if !sc.NextTrigger.Equal(t0.Add(20 * time.Minute)) {
		t.Fatalf("next read %v, want 15 minutes after the refresh", sc.NextTrigger)
	}
}

// A site that refused the last trigger read (429) is left alone until its
// next scheduled read, whatever the operator asks (S2).
func TestCrawler_S2_RefreshDeclinedAfterARefusal(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("busy.example")
	s.AddArticle(politetest.Article{})
	s.Misbehave("/feed.xml", politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: time.Second})
	clk := clock.NewManual(t0)
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), Clock: clk,
		Sources: []Source{siteSource(s.Name(), StrictNews, false)}}
	rep := mustPass(t, c, s.Name())
	if rep.Trigger.Err == nil {
		t.Fatalf("the 429 was not reported: %+v", rep)
	}
	clk.Advance(10 * time.Minute)
	_, err := c.Refresh(context.Background(), s.Name())
	var re *RefreshError
	if !errors.As(err, &re) || !re.Next.Equal(t0.Add(15*time.Minute)) {
		t.Fatalf("Refresh after a refusal: %v, want declined until +15m", err)
	}
	if n := feedReads(web, s.Name()); n != 1 {
		t.Fatalf("%d feed reads, want 1", n)
	}
}

// Run reads each trigger every 15 minutes and walks the backlog at start-up
// and then every 24 hours (V7), on the injected clock.
func TestCrawler_V7_RunSchedules(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 2, ArticlesPerHost: 3, Seed: 9})
	clk := clock.NewManual(t0)
	ended := make(chan *PassReport, 16)
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), Clock: clk,
		OnEvent: func(e Event) {
			if e.Kind == EventPassEnded {
				ended <- e.Pass
			}
		}}
	slower := siteSource(info.Sites[1].Name, StrictNews, false)
	slower.Interval = Duration(30 * time.Minute)
	c.Sources = append(c.Sources, siteSource(info.Sites[0].Name, StrictNews, true), slower)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	wait := func(n int) map[string]*PassReport {
		t.Helper()
		got := map[string]*PassReport{}
		for range n {
			select {
			case r := <-ended:
				if r.Err != nil {
					t.Fatalf("pass of %s: %v", r.Source, r.Err)
				}
				got[r.Source] = r
			case <-time.After(30 * time.Second):
				t.Fatal("no pass ended")
			}
		}
		return got
	}
	a, b := info.Sites[0].Name, info.Sites[1].Name
	first := wait(2)
	if !first[a].TriggerRead || !first[a].BacklogRead || first[a].Deposited != 3 || !first[b].TriggerRead || first[b].Deposited != 3 {
		t.Fatalf("start-up passes: %+v %+v", first[a], first[b])
	}
	clk.Advance(15 * time.Minute) // a's trigger is due; b's (30 min) is not
	r := wait(1)
	if r[a] == nil || !r[a].TriggerRead || r[a].BacklogRead || r[a].Trigger.NotModified != 1 {
		t.Fatalf("+15m: %+v, want a's trigger read (304), no backlog", r)
	}
	clk.Advance(15 * time.Minute) // +30m: both triggers due
	if r := wait(2); r[a] == nil || r[b] == nil || r[a].BacklogRead {
		t.Fatalf("+30m: %+v", r)
	}
	clk.Set(t0.Add(24 * time.Hour)) // the backlog is due again
	r = wait(2)
	if !r[a].BacklogRead || !r[a].TriggerRead || r[b].BacklogRead {
		t.Fatalf("+24h: %+v %+v, want a's backlog walked again", r[a], r[b])
	}
	if n := feedReads(web, a); n != 4 {
		t.Errorf("%d feed reads of %s in 24 h of clock, want 4 (0, 15m, 30m, 24h)", n, a)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	select {
	case r := <-ended:
		t.Fatalf("a pass ran after the last due time: %+v", r)
	default:
	}
	audit(t, web, testPolicy(t, StrictNews, testInterval))
}

// An article refused by the publisher is kept as the feed's excerpt,
// labelled, and stays pending for the next pass (S5).
func TestCrawler_S5_RefusedArticleKeptAsExcerpt(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("refuses.example")
	a := s.AddArticle(politetest.Article{ID: 1})
	s.AddArticle(politetest.Article{ID: 2})
	s.Misbehave(a.Path, politetest.Behaviour{Kind: politetest.Forbidden})
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)),
		Sources: []Source{siteSource(s.Name(), StrictNews, false)}}
	rep := mustPass(t, c, s.Name())
	deps, _ := c.Deposited().List(context.Background(), s.Name(), time.Time{})
	var excerpts, full int
	for _, d := range deps {
		switch {
		case d.Excerpt != nil && d.Key == "1":
			excerpts++
		case d.Envelope != nil:
			full++
		}
	}
	if excerpts != 1 || full != 1 {
		t.Fatalf("report %+v; %d excerpts of the refused article, %d full deposits; want 1 and 1", rep, excerpts, full)
	}
	r, _, _ := c.StateStore().Ref(context.Background(), s.Name(), "1")
	if r.Outcome != Pending {
		t.Fatalf("refused article settled as %v, want pending for the next pass", r.Outcome)
	}
}

// A page that states a paywall is never deposited (D12).
func TestCrawler_D12_GatedArticleExcluded(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("paywall.example")
	a := s.AddArticle(politetest.Article{ID: 4})
	s.AddArticle(politetest.Article{ID: 5})
	s.Handle(a.Path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Members only</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Members only","identifier":"4","isAccessibleForFree":false}</script>
</head><body><article><p>Subscribe to read the rest of this story, which is for members.</p></article></body></html>`)
	}))
	c := &Crawler{Client: newClient(t, web, testPolicy(t, Digest, testInterval)),
		Sources: []Source{siteSource(s.Name(), Digest, false)}}
	rep := mustPass(t, c, s.Name())
	if rep.Excluded != 1 || rep.Deposited != 1 {
		t.Fatalf("report %+v, want 1 excluded, 1 deposited", rep)
	}
	deps, _ := c.Deposited().List(context.Background(), s.Name(), time.Time{})
	if len(deps) != 1 || deps[0].Key != "5" {
		t.Fatalf("deposits %v, want only 5's", deps)
	}
	r, _, _ := c.StateStore().Ref(context.Background(), s.Name(), "4")
	if r.Outcome != Excluded {
		t.Fatalf("gated article: %v", r.Outcome)
	}
}

// Articles read through the public WordPress REST API: one post document
// per article, its id agreeing with the feed's (V2, V3).
func TestCrawler_V2_ReadThroughThePublicAPI(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 3, Seed: 10})
	site := info.Sites[0]
	src := siteSource(site.Name, Vault, false)
	src.Read = Read{Method: ReadPublicAPI, URL: "https://" + site.Name + "/wp-json/wp/v2/posts/{id}"}
	p := testPolicy(t, Vault, testInterval)
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{src}}
	rep := mustPass(t, c, src.ID)
	if rep.Deposited != 3 || rep.Mismatched != 0 {
		t.Fatalf("report %+v", rep)
	}
	if n := articleRequests(web, site.Name, site.Articles); n != 0 {
		t.Fatalf("%d pages read: the API was to be read", n)
	}
	deps, _ := c.Deposited().List(context.Background(), src.ID, time.Time{})
	for _, d := range deps {
		if d.Article == nil || len(d.Article.IDs) == 0 || d.Article.IDs[0].Value != d.Key || d.MediaType != "application/json" {
			t.Fatalf("deposit %s: %+v", d.URL, d.Article)
		}
	}
	audit(t, web, p)
}

// A slow host never holds up the others: the fast hosts' articles are all
// deposited before the slow host's second (frontier).
func TestCrawler_SlowHostHoldsUpNoOther(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	slow := web.Site("slow.example")
	var sources []Source
	for i := range 3 {
		s := web.Site(fmt.Sprintf("fast-%d.example", i))
		for k := range 3 {
			s.AddArticle(politetest.Article{ID: 10*(i+1) + k}) // one CMS, ids distinct across its hosts
		}
		sources = append(sources, siteSource(s.Name(), StrictNews, false))
	}
	for k := range 3 {
		a := slow.AddArticle(politetest.Article{ID: 100 + k})
		slow.Misbehave(a.Path, politetest.Behaviour{Kind: politetest.SlowFirstByte, Delay: 400 * time.Millisecond})
	}
	// One source over all four hosts.
	src := siteSource(slow.Name(), StrictNews, false)
	src.Admitted = []string{"slow.example", "fast-0.example", "fast-1.example", "fast-2.example"}
	for _, s := range sources {
		src.Trigger.Feeds = append(src.Trigger.Feeds, s.Trigger.Feeds...)
	}
	var ev events
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), Sources: []Source{src}, OnEvent: ev.on}
	rep := mustPass(t, c, src.ID)
	if rep.Deposited != 12 {
		t.Fatalf("report %+v", rep)
	}
	fast, slowSeen := 0, 0
	for _, e := range ev.of(EventDeposited) {
		if e.Host == "slow.example" {
			slowSeen++
			continue
		}
		if slowSeen >= 2 {
			t.Fatalf("a fast host's deposit came after the slow host's second")
		}
		fast++
	}
	if fast != 9 {
		t.Fatalf("%d fast deposits", fast)
	}
}

// ReadTrigger reads the trigger and records what it announces, reading no
// article; it is declined within the guard as Refresh is (S2).
func TestCrawler_S2_ReadTriggerOnly(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 3, Seed: 13})
	site := info.Sites[0]
	clk := clock.NewManual(t0)
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), Clock: clk,
		Sources: []Source{siteSource(site.Name, StrictNews, false)}}
	rep, err := c.ReadTrigger(context.Background(), site.Name)
	if err != nil || !rep.TriggerRead || rep.Trigger.New != 3 || rep.Queued != 0 {
		t.Fatalf("ReadTrigger = %+v, %v", rep, err)
	}
	if n := articleRequests(web, site.Name, site.Articles); n != 0 {
		t.Fatalf("%d articles read by ReadTrigger", n)
	}
	if _, err := c.ReadTrigger(context.Background(), site.Name); !errors.Is(err, ErrRefreshDeclined) {
		t.Fatalf("a second ReadTrigger at once: %v, want declined", err)
	}
	if rep = mustPass(t, c, site.Name); rep.TriggerRead || rep.Deposited != 3 {
		t.Fatalf("the pass after: %+v, want the 3 articles and no trigger read", rep)
	}
}

// The trigger may be a public API call instead of a feed: its first page
// announces the articles, each read at its own address (V1).
func TestCrawler_V1_PublicAPICallAsTrigger(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 4, Seed: 14})
	site := info.Sites[0]
	src := siteSource(site.Name, Vault, false)
	spec := feed.WordPress("https://"+site.Name, 10)
	src.Trigger = Trigger{API: &spec}
	p := testPolicy(t, Vault, testInterval)
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{src}}
	rep := mustPass(t, c, src.ID)
	if rep.Trigger.Refs != 4 || rep.Deposited != 4 {
		t.Fatalf("report %+v", rep)
	}
	if n := feedReads(web, site.Name); n != 0 {
		t.Fatalf("%d feed reads with an API trigger", n)
	}
	audit(t, web, p)
}

// A sitemap backlog: under IDFromURL every article it lists is read; under
// IDFromCMS it meets the trigger's references by address and adds none of
// its own (V3, V4).
func TestCrawler_V4_SitemapBacklog(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 2, ArticlesPerHost: 4, Seed: 15})
	site, other := info.Sites[0], info.Sites[1]
	byURL := siteSource(site.Name, StrictNews, false)
	byURL.Identifier = IDFromURL
	byURL.Backlog = &Backlog{Kind: BacklogSitemap, Site: "https://" + site.Name}
	byCMS := siteSource(other.Name, StrictNews, false)
	byCMS.Backlog = &Backlog{Kind: BacklogSitemap, Site: "https://" + other.Name}
	p := testPolicy(t, StrictNews, testInterval)
	// The crawl's clock within two days of the articles' dates, so that the
	// walk re-reads them (the newest 48 hours always are).
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{byURL, byCMS},
		Clock: clock.NewManual(site.Articles[0].Published.Add(time.Hour))}
	reps, err := c.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reps {
		if r.Err != nil || !r.BacklogRead || r.Backlog.Refs == 0 || r.Deposited != 4 || r.Mismatched != 0 {
			t.Fatalf("%s: %+v", r.Source, r)
		}
		if r.Backlog.New != 0 {
			t.Errorf("%s: the sitemap added %d references the feed had not announced", r.Source, r.Backlog.New)
		}
	}
	audit(t, web, p)
}
