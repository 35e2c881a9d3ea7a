package main

// The digest engine's document (policy 001), as configs/digest.yaml runs it:
// two sources read by their feeds, kept as summaries (no full text).

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/digest"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// D1: robots.txt is read before any path of a host, and its Disallow,
// Allow and Crawl-delay obeyed: news-1 disallows everything for the bot
// but allows its Atom feed, with a Crawl-delay of 3 s. The RSS feed is
// never asked for, the Atom feed is, no sooner than 3 s after robots.txt,
// and Explain names the rule that refuses.
func TestDigest_D1_RobotsBeforeAnyPath(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "digest", 2, 1, func(s *suite) {
		s.source("news-1").Trigger.Feeds = []string{"https://news-1.example/feed.xml", "https://news-1.example/atom.xml"}
	})
	s.site("news-1.example").SetRobots(politetest.Robots{Body: "User-agent: *\nAllow: /\n\nUser-agent: NewsElsBot\nDisallow: /\nAllow: /atom.xml\nCrawl-delay: 3\n"})
	s.runOnce()
	for _, host := range []string{"news-1.example", "news-2.example"} {
		reqs := s.requests(host, "")
		if len(reqs) == 0 || reqs[0].Path != "/robots.txt" {
			t.Fatalf("%s: robots.txt not first: %v", host, reqs)
		}
	}
	if n := len(s.requests("news-1.example", "/feed.xml")); n != 0 {
		t.Errorf("the disallowed feed was requested %d times", n)
	}
	atom := s.requests("news-1.example", "/atom.xml")
	robots := s.requests("news-1.example", "/robots.txt")
	if len(atom) != 1 || atom[0].Start.Sub(robots[0].Start) < 3*time.Second-5*time.Millisecond {
		t.Fatalf("the allowed Atom feed: %d requests, want 1, 3 s or more after robots.txt", len(atom))
	}
	e, err := s.client.Explain(context.Background(), "https://news-1.example/feed.xml", fetch.GetOptions{Kind: fetch.KindFeed})
	if err != nil || e.Allowed || !errors.Is(e.Refusal, fetch.ErrRobots) || e.Robots.Group != "NewsElsBot" || e.Robots.Rule != "Disallow: /" || e.CrawlDelay != 3*time.Second {
		t.Errorf("Explain of the RSS feed: %+v, %v; want refused by the bot's \"Disallow: /\", Crawl-delay 3 s", e, err)
	}
}

// D2, D3: the config's policy paces each host at 2 to 5 s, one request in
// flight, one connection per host (the auditor checks the 2 s floor and
// the connections); every gap is within the band; the User-Agent names the
// bot, its version, its project page and its e-mail.
func TestDigest_D2_D3_PaceAndUserAgent(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "digest", 1, 1, func(s *suite) {
		s.source("news-1").Trigger.Feeds = []string{"https://news-1.example/feed.xml", "https://news-1.example/atom.xml"}
		s.cfg.Sources = s.cfg.Sources[:1]
	})
	if s.fp.Interval != 2*time.Second || s.fp.IntervalMax != 5*time.Second || s.fp.InFlight != 1 {
		t.Fatalf("the config's pace: %v to %v, %d in flight", s.fp.Interval, s.fp.IntervalMax, s.fp.InFlight)
	}
	s.runOnce()
	reqs := s.requests("news-1.example", "")
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want robots.txt and two feeds", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		gap := reqs[i].Start.Sub(reqs[i-1].Start)
		if gap < 2*time.Second-5*time.Millisecond || gap > 5*time.Second+2*time.Second { // the band, plus room for a loaded machine
			t.Errorf("gap %d: %v, want within 2 to 5 s", i, gap)
		}
	}
	if n := len(s.web.Connections()); n != 1 {
		t.Errorf("%d connections to the one host, want 1", n)
	}
	ua := reqs[0].Header.Get("User-Agent")
	for _, part := range []string{"NewsElsBot", "/1.0", "https://news.elsastry.com/bot", "bot@news.elsastry.com"} {
		if !strings.Contains(ua, part) {
			t.Errorf("User-Agent %q lacks %q", ua, part)
		}
	}
}

// D4: feed first, conditionally: the first read answers 200 and is parsed;
// the read at the next interval sends the validators, gets a 304 and parses
// nothing (no new reference, no new deposit).
func TestDigest_D4_ConditionalFeedReads(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "digest", 2, 2, nil)
	s.runOnce()
	before := len(s.deposits("news-1"))
	s.later(15 * time.Minute)
	reps := s.runOnce()
	r := reps["news-1"]
	if !r.TriggerRead || r.Trigger.NotModified != 1 || r.Trigger.Refs != 0 {
		t.Fatalf("the second read: %+v, want a 304 with nothing parsed", r)
	}
	feeds := s.requests("news-1.example", "/feed.xml")
	if len(feeds) != 2 || feeds[1].Status != http.StatusNotModified ||
		(feeds[1].Header.Get("If-None-Match") == "" && feeds[1].Header.Get("If-Modified-Since") == "") {
		t.Fatalf("feed reads %d, the second answered %d with validators %q/%q", len(feeds), feeds[len(feeds)-1].Status,
			feeds[len(feeds)-1].Header.Get("If-None-Match"), feeds[len(feeds)-1].Header.Get("If-Modified-Since"))
	}
	if n := len(s.deposits("news-1")); n != before {
		t.Errorf("deposits %d after the 304, want %d", n, before)
	}
}

// D5, D10: a 429 cools the host down for 30 to 60 minutes, and a 503 too;
// the feed is not asked again within 15 minutes (a later pass is refused
// by the chain, nothing sent): a block is respected, never worked around.
func TestDigest_D5_D10_RefusalsCoolTheHostDown(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "digest", 2, 1, nil)
	s.site("news-1.example").Misbehave("/feed.xml", politetest.Behaviour{Kind: politetest.TooManyRequests})
	s.site("news-2.example").Misbehave("/feed.xml", politetest.Behaviour{Kind: politetest.Unavailable})
	s.runOnce()
	ctx := context.Background()
	for _, host := range []string{"news-1.example", "news-2.example"} {
		e, err := s.client.Explain(ctx, "https://"+host+"/feed.xml", fetch.GetOptions{Kind: fetch.KindFeed})
		if err != nil || e.Allowed || !errors.Is(e.Refusal, fetch.ErrCooldown) {
			t.Fatalf("%s: %+v, %v; want a cool-down", host, e, err)
		}
		if d := time.Until(e.Refusal.Until); d < 29*time.Minute || d > 60*time.Minute {
			t.Errorf("%s: cooling down for %v, want 30 to 60 min", host, d)
		}
	}
	s.later(15 * time.Minute)
	reps := s.runOnce()
	for _, id := range []string{"news-1", "news-2"} {
		var re *fetch.RefusedError
		if !errors.As(reps[id].Trigger.Err, &re) || re.Reason != fetch.Cooldown {
			t.Errorf("%s 15 min on: %v, want the chain's cool-down refusal", id, reps[id].Trigger.Err)
		}
	}
	for _, host := range []string{"news-1.example", "news-2.example"} {
		if n := len(s.requests(host, "/feed.xml")); n != 1 {
			t.Errorf("%s: the feed asked %d times, want once", host, n)
		}
	}
}

// D6, D9: what the digest keeps of each story is the feed's: canonical
// link, date and summary, with a link back; never a body (no page is read,
// nothing deposited in full); and no sub-resource is loaded: the crawl
// asks for robots.txt and feeds only.
func TestDigest_D6_D9_SummariesOnlyNoSubresources(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "digest", 2, 2, nil)
	s.runOnce()
	for i, id := range []string{"news-1", "news-2"} {
		ds := s.deposits(id)
		if len(ds) != 2 {
			t.Fatalf("%s: %d deposits, want 2", id, len(ds))
		}
		for _, d := range ds {
			e := d.Excerpt
			if d.Envelope != nil || e == nil || e.Link == "" || e.Published.IsZero() || e.Description == "" || e.Headline == "" {
				t.Errorf("%s %s: %+v; want the feed's link, date and summary, no body", id, d.Key, d)
			}
		}
		for _, a := range s.info.Sites[i].Articles {
			if n := len(s.requests(s.info.Sites[i].Name, a.Path)); n != 0 {
				t.Errorf("%s: the page %s was read", id, a.Path)
			}
		}
	}
	for _, q := range s.web.Requests() {
		if q.Path != "/robots.txt" && q.Path != "/feed.xml" {
			t.Errorf("%s%s: not robots.txt or a feed", q.Host, q.Path)
		}
	}
}

// D13: a robots.txt that turns to "User-agent: NewsElsBot / Disallow: /"
// stops ingestion at the next robots.txt refresh (24 h under the config):
// a day on, robots.txt is read again first, the feed is not asked for, and
// nothing new is kept.
func TestDigest_D13_DisallowAllStopsAtTheNextRefresh(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "digest", 1, 2, func(s *suite) {
		s.cfg.Sources = s.cfg.Sources[:1]
		s.chainClock = true
	})
	s.runOnce()
	kept := len(s.deposits("news-1"))
	if kept != 2 {
		t.Fatalf("%d deposits, want 2", kept)
	}
	if s.fp.Robots.TTL != 24*time.Hour {
		t.Fatalf("robots.txt TTL %v, want the config's 24 h", s.fp.Robots.TTL)
	}
	s.site("news-1.example").SetRobots(politetest.Robots{Body: "User-agent: NewsElsBot\nDisallow: /\n"})
	s.site("news-1.example").AddArticle(politetest.Article{})
	s.nextPhase(24 * time.Hour)
	r := s.runOnce()["news-1"]
	reqs := s.requests("news-1.example", "")
	if len(reqs) != 1 || reqs[0].Path != "/robots.txt" {
		t.Fatalf("a day on: requests %v, want robots.txt alone", reqs)
	}
	if !errors.Is(r.Trigger.Err, fetch.ErrRobots) {
		t.Errorf("the trigger a day on: %v, want the robots.txt refusal", r.Trigger.Err)
	}
	if n := len(s.deposits("news-1")); n != kept {
		t.Errorf("%d deposits after Disallow: /, want still %d", n, kept)
	}
}

// D11, D6: the day's digest built from what the crawl kept: a section per
// source's category (Tech, Finance), each card with its publisher's brand,
// headline, age, at most two sentences of summary labelled as the feed's,
// and "Read full story on <brand> →" linking to the article on its own
// site; a reader who prefers Finance sees only Finance.
func TestDigest_D6_D11_DailyCardsFromTheCrawl(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "digest", 2, 2, nil)
	s.runOnce()
	var pubs []digest.Publisher
	for _, src := range s.cfg.Sources {
		pubs = append(pubs, digest.PublisherOf(src))
	}
	ctx := context.Background()
	stories, err := digest.Stories(ctx, s.c.Deposits, pubs, time.Time{})
	if err != nil || len(stories) != 4 {
		t.Fatalf("%d stories, %v; want 4", len(stories), err)
	}
	var b digest.Builder
	year := digest.Preferences{Window: 366 * 24 * time.Hour} // the simulated articles are dated early in 2026
	d, err := b.Build(ctx, time.Now(), stories, year)
	if err != nil {
		t.Fatal(err)
	}
	brands := map[string]string{"Tech": "News One", "Finance": "News Two"}
	hosts := map[string]string{"Tech": "https://news-1.example/", "Finance": "https://news-2.example/"}
	if len(d.Sections) != 2 || d.Cards() != 4 {
		t.Fatalf("%d sections, %d cards; want Tech and Finance, 4 cards", len(d.Sections), d.Cards())
	}
	for _, sec := range d.Sections {
		for _, c := range sec.Cards {
			if c.Brand != brands[sec.Category] || !strings.HasPrefix(c.URL, hosts[sec.Category]) || c.Headline == "" || c.Age == "" ||
				len(c.Summary) == 0 || len(c.Summary) > 2 || !c.Excerpt || c.ReadMore() != "Read full story on "+brands[sec.Category]+"\u00a0→" {
				t.Errorf("%s card %+v", sec.Category, c)
			}
		}
	}
	year.Categories = []string{"Finance"}
	if d, err = b.Build(ctx, time.Now(), stories, year); err != nil || len(d.Sections) != 1 || d.Sections[0].Category != "Finance" {
		t.Errorf("a Finance reader's digest: %+v, %v", d, err)
	}
}
