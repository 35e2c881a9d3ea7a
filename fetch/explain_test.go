package fetch

import (
	"context"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/politetest"
)

// TestExplain says, for each layer, why a URL may or may not be read now, and
// sends nothing but the robots.txt fetch a Get would make first: robots.txt's
// group and rule with their lines, the URL as it would be requested, the next
// pacing slot, a cool-down with its Until, and a suspension whose due re-check
// it reports without taking.
func TestExplain(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("explained.example")
	s.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /private\nCrawl-delay: 2\n"})
	cool := web.Site("cooling.example")
	susp := web.Site("suspended.example")
	p := testPolicy(StrictNews(), time.Hour)
	p.PerSite = false
	c := newClient(t, web, p)
	ctx := context.Background()

	e, err := c.Explain(ctx, s.URL("/private/x?utm_source=mail&id=3"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Allowed || e.Refusal == nil || e.Refusal.Reason != Robots || e.Refusal.Until.IsZero() {
		t.Fatalf("disallowed URL: %+v", e)
	}
	if e.Robots.Rule != "Disallow: /private" || e.Robots.Line != 2 || e.Robots.Group != "*" || e.Robots.AgentLine != 1 {
		t.Fatalf("robots decision %+v", e.Robots)
	}
	if want := s.URL("/private/x?id=3"); e.URL != want || e.Host != "explained.example" || e.Key != "explained.example" {
		t.Fatalf("URL %q host %q key %q, want %q", e.URL, e.Host, e.Key, want)
	}
	if e.CrawlDelay != 2*time.Second {
		t.Fatalf("Crawl-delay %v", e.CrawlDelay)
	}
	e, err = c.Explain(ctx, s.URL("/public"))
	if err != nil {
		t.Fatal(err)
	}
	if !e.Allowed || e.Refusal != nil || !e.Robots.Allowed || !e.Ledger.Allowed {
		t.Fatalf("allowed URL: %+v", e)
	}
	if time.Until(e.NextSlot) < 59*time.Minute {
		t.Fatalf("next slot %v, want an interval after robots.txt's start", e.NextSlot)
	}

	now := time.Now()
	if _, err := c.ledger.Observe(ctx, "cooling.example", backoff.Outcome{Kind: backoff.Article, Status: 429, RetryAfter: "600"}, now); err != nil {
		t.Fatal(err)
	}
	e, err = c.Explain(ctx, cool.URL("/a"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Allowed || e.Refusal == nil || e.Refusal.Reason != Cooldown || e.Ledger.Reason != backoff.Cooldown || e.Ledger.Until.Before(now.Add(9*time.Minute)) {
		t.Fatalf("cooling host: %+v", e)
	}

	for i := range 5 { // suspended, with the daily re-check due now
		at := now.Add(-48*time.Hour + time.Duration(i)*3*time.Hour)
		if _, err := c.ledger.Observe(ctx, "suspended.example", backoff.Outcome{Kind: backoff.Article, Status: 403}, at); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		e, err = c.Explain(ctx, susp.URL("/a"))
		if err != nil {
			t.Fatal(err)
		}
		if !e.Allowed || e.Ledger.Reason != backoff.Recheck {
			t.Fatalf("suspended host with its re-check due: %+v", e)
		}
	}
	if e, _ := c.Explain(ctx, susp.URL("/feed.xml"), GetOptions{Kind: KindFeed}); !e.Allowed {
		t.Fatalf("feed of a suspended host: %+v", e)
	}
	for _, r := range web.Requests() {
		if r.Path != "/robots.txt" {
			t.Fatalf("Explain sent %s %s", r.Host, r.Path)
		}
	}
	if d := c.ledger.Check(ctx, "suspended.example", KindArticle, time.Now()); !d.Allowed || d.Reason != backoff.Recheck {
		t.Fatalf("the re-check was taken by Explain: %+v", d)
	}
}
