package main

// The strict news crawler's document (policy 000), as configs/strict-news.yaml
// runs it: news-1 has a full-text licence, news-2 has none.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/sharecheck"
)

// S1, S3: the robots.txt group naming the crawler's product token applies,
// not the "*" group (which here forbids everything); the article it
// disallows is never asked for and is kept as the feed tells it (S5). A
// robots.txt answering 403 puts the whole site off limits: nothing but
// robots.txt is requested there. Every request carries the config's
// User-Agent exactly, and robots.txt is cached for an hour.
func TestStrictNews_S1_S3_IdentityAndItsRobotsGroup(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "strict-news", 2, 3, nil)
	disallowed := s.info.Sites[0].Articles[1].Path
	s.site("news-1.example").SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /\n\nUser-agent: ARCEL-DailyDose-Bot\nDisallow: " + disallowed + "\n"})
	s.site("news-2.example").SetRobots(politetest.Robots{Status: http.StatusForbidden})
	if s.fp.UserAgent() != "ARCEL-DailyDose-Bot/1 (+https://arcel.example/for-publishers/our-crawler)" || s.fp.Robots.TTL != time.Hour {
		t.Fatalf("the config's policy: User-Agent %q, robots.txt TTL %v", s.fp.UserAgent(), s.fp.Robots.TTL)
	}
	reps := s.runOnce()
	if r := reps["news-1"]; r.Deposited != 2 || r.Refused != 1 {
		t.Errorf("news-1: %+v, want 2 deposited and the disallowed one refused", r)
	}
	if full, ex := depositKinds(s.deposits("news-1")); full != 2 || ex != 1 {
		t.Errorf("news-1: %d full deposits and %d excerpts, want 2 and the disallowed story's excerpt", full, ex)
	}
	if n := len(s.requests("news-1.example", disallowed)); n != 0 {
		t.Errorf("the disallowed article was requested %d times", n)
	}
	for _, q := range s.requests("news-2.example", "") {
		if q.Path != "/robots.txt" {
			t.Errorf("news-2's robots.txt answered 403, yet %s was requested", q.Path)
		}
	}
	if r := reps["news-2"]; r.TriggerRead && r.Trigger.Err == nil {
		t.Errorf("news-2: the trigger was read from a site whose robots.txt answered 403: %+v", r)
	}
	for _, q := range s.web.Requests() {
		if q.Header.Get("User-Agent") != s.fp.UserAgent() {
			t.Errorf("%s %s: User-Agent %q", q.Host, q.Path, q.Header.Get("User-Agent"))
		}
	}
	if n := len(s.requests("news-1.example", "/robots.txt")); n != 1 {
		t.Errorf("news-1's robots.txt read %d times in one pass, want 1", n)
	}
}

// S2: at most one request a second per site (the auditor holds every gap
// to 1 s); each feed read at its source's interval, 15 minutes, not
// before; an operator's refresh declined within 5 minutes of the last
// read, granted after them; and declined again once the site has refused
// us, with nothing sent.
func TestStrictNews_S2_FeedIntervalAndRefreshGuard(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "strict-news", 2, 1, nil)
	if s.fp.Interval != time.Second || !s.fp.PerSite || time.Duration(s.source("news-1").Interval) != 15*time.Minute {
		t.Fatalf("the config: interval %v, per site %v, feed interval %v", s.fp.Interval, s.fp.PerSite, s.source("news-1").Interval)
	}
	s.runOnce()
	feeds := func() int { return len(s.requests("news-1.example", "/feed.xml")) }
	ctx := context.Background()
	s.later(14 * time.Minute)
	if rep, err := s.c.Pass(ctx, "news-1"); err != nil || rep.TriggerRead {
		t.Fatalf("14 min on: %v, trigger read %v; want it left for its interval", err, rep.TriggerRead)
	}
	n := feeds()
	if _, err := s.c.Refresh(ctx, "news-1"); err != nil || feeds() != n+1 {
		t.Fatalf("a refresh 14 min after the last read: %v, %d feed reads; want it granted", err, feeds()-n)
	}
	if _, err := s.c.Refresh(ctx, "news-1"); !errors.Is(err, crawl.ErrRefreshDeclined) {
		t.Fatalf("a refresh right after a read: %v, want it declined (5 min guard)", err)
	}
	n = feeds()
	s.later(6 * time.Minute)
	if _, err := s.c.Refresh(ctx, "news-1"); err != nil {
		t.Fatalf("a refresh 6 min after the last read: %v", err)
	}
	if feeds() != n+1 {
		t.Fatalf("the granted refresh read the feed %d times", feeds()-n)
	}
	s.site("news-1.example").Misbehave("/feed.xml", politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: time.Hour})
	s.later(15 * time.Minute)
	if rep, err := s.c.Pass(ctx, "news-1"); err != nil || !rep.TriggerRead {
		t.Fatalf("15 min on: %v; want the feed read at its interval", err)
	}
	n = feeds()
	s.later(6 * time.Minute)
	if _, err := s.c.Refresh(ctx, "news-1"); !errors.Is(err, crawl.ErrRefreshDeclined) {
		t.Fatalf("a refresh after the site answered 429: %v, want it declined", err)
	}
	if feeds() != n {
		t.Errorf("a declined refresh sent %d feed requests", feeds()-n)
	}
}

// S4: a refusal (429 with Retry-After, a challenge page) is recorded and
// honoured: after news-1's first article answers 429, its other articles
// are not asked for while the site cools down (they are kept as excerpts,
// S5), the chain says until when, and the auditor finds no request inside
// an announced cool-down. news-2's feed serves a challenge page: it is
// recorded as a refusal, and its next read is refused before it is sent.
// No evasion: one identity throughout (the auditor's User-Agent rule).
func TestStrictNews_S4_RefusalsRecordedAndHonoured(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "strict-news", 2, 3, nil)
	n1 := s.site("news-1.example")
	for _, a := range s.info.Sites[0].Articles {
		n1.Misbehave(a.Path, politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: 2 * time.Hour})
	}
	s.site("news-2.example").Misbehave("/feed.xml", politetest.Behaviour{Kind: politetest.Challenge})
	reps := s.runOnce()
	read := 0
	for _, a := range s.info.Sites[0].Articles {
		read += len(s.requests("news-1.example", a.Path))
	}
	if read != 1 {
		t.Errorf("news-1: %d article requests, want 1 (the 429 cools the site down)", read)
	}
	if full, ex := depositKinds(s.deposits("news-1")); full != 0 || ex < 2 {
		t.Errorf("news-1: %d full deposits, %d excerpts; want none in full and the refused stories kept as excerpts (%+v)", full, ex, reps["news-1"])
	}
	ctx := context.Background()
	e, err := s.client.Explain(ctx, "https://news-1.example"+s.info.Sites[0].Articles[0].Path)
	if err != nil || e.Allowed || e.Refusal == nil || !errors.Is(e.Refusal, fetch.ErrCooldown) || time.Until(e.Refusal.Until) < 110*time.Minute {
		t.Fatalf("news-1 after a 429 with Retry-After 2 h: %+v, %v; want a cool-down of about 2 h", e, err)
	}
	before := len(s.requests("news-2.example", "/feed.xml"))
	s.later(15 * time.Minute)
	rep, err := s.c.Pass(ctx, "news-2")
	if err != nil || !rep.TriggerRead {
		t.Fatalf("news-2 15 min on: %v, %+v", err, rep)
	}
	if n := len(s.requests("news-2.example", "/feed.xml")); n != before {
		t.Errorf("news-2's feed asked again %d times inside the challenge's cool-down", n-before)
	}
	var re *fetch.RefusedError
	if !errors.As(rep.Trigger.Err, &re) || re.Reason != fetch.Cooldown {
		t.Errorf("news-2's trigger: %v, want the chain's cool-down refusal", rep.Trigger.Err)
	}
}

// S5, S6: news-1's licence allows full text: each article is deposited as
// read, with its proof. news-2 has none: its stories are kept only as the
// feed describes them (headline, description, image), labelled an excerpt,
// with a link to the original, and its pages are never requested.
func TestStrictNews_S5_S6_ExcerptsWhereThereIsNoLicence(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "strict-news", 2, 2, nil)
	s.runOnce()
	full := s.deposits("news-1")
	if len(full) != 2 {
		t.Fatalf("news-1: %d deposits, want 2", len(full))
	}
	for _, d := range full {
		if d.Excerpt != nil || len(d.Envelope) == 0 || d.Proof == nil || d.Article == nil {
			t.Errorf("news-1 %s: not a full deposit with its proof", d.Key)
		}
	}
	ex := s.deposits("news-2")
	if len(ex) != 2 {
		t.Fatalf("news-2: %d deposits, want 2 excerpts", len(ex))
	}
	pages := map[string]bool{}
	for _, a := range s.info.Sites[1].Articles {
		pages["https://news-2.example"+a.Path] = true
		if n := len(s.requests("news-2.example", a.Path)); n != 0 {
			t.Errorf("news-2 %s requested without a licence", a.Path)
		}
	}
	for _, d := range ex {
		e := d.Excerpt
		if e == nil || d.Envelope != nil {
			t.Fatalf("news-2 %s: not an excerpt", d.Key)
		}
		if e.Label != feed.ExcerptLabel || e.Headline == "" || e.Description == "" || e.Image == "" || !pages[e.Link] {
			t.Errorf("news-2 excerpt %+v: want labelled %q, headline, description, image and a link to the original", e, feed.ExcerptLabel)
		}
	}
}

// S7, with S3 for images: each story's share image is checked once through
// the config's own client, as the crawler (same identity), with the
// article page as Referer, its host's robots.txt obeyed: news-1's images
// are usable, with their dimensions and the URL to link to; news-1's
// story whose image is HTML sent as image/jpeg is not; news-2's robots.txt
// forbids /images/, so its images are not used and never requested. The
// crawl itself fetched no image. A second look at the same stories costs
// no request.
func TestStrictNews_S7_ShareImagesCheckedOnce(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "strict-news", 2, 2, nil)
	fake := s.site("news-1.example").AddArticle(politetest.Article{Image: "/images/fake-1.jpg"})
	s.site("news-2.example").SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /images/\n"})
	s.runOnce()
	for _, q := range s.web.Requests() {
		if strings.HasPrefix(q.Path, "/images/") {
			t.Fatalf("the crawl fetched %s%s", q.Host, q.Path)
		}
	}
	chk := &sharecheck.Checker{Client: s.client}
	ctx := context.Background()
	check := func() map[string]sharecheck.Result {
		out := map[string]sharecheck.Result{}
		for _, src := range []string{"news-1", "news-2"} {
			for _, d := range s.deposits(src) {
				img := sharecheck.Image{Page: d.URL}
				switch {
				case d.Article != nil:
					img.URL = d.Article.Image.Value
				case d.Excerpt != nil:
					img.URL = d.Excerpt.Image
				}
				if img.URL == "" {
					t.Fatalf("%s %s names no share image", src, d.Key)
				}
				out[d.URL] = chk.Check(ctx, img)
			}
		}
		return out
	}
	results := check()
	if len(results) != 5 {
		t.Fatalf("%d stories, want 5", len(results))
	}
	for page, res := range results {
		switch {
		case strings.HasPrefix(page, "https://news-2.example/"):
			if !errors.Is(res.Err, fetch.ErrRobots) {
				t.Errorf("%s: %v, want the robots.txt refusal", page, res.Err)
			}
		case strings.HasSuffix(page, fake.Path):
			if !errors.Is(res.Err, sharecheck.ErrNotImage) {
				t.Errorf("%s (HTML as image/jpeg): %v, want not an image", page, res.Err)
			}
		default:
			if !res.Usable() || res.Width == 0 || !strings.HasPrefix(res.FinalURL, "https://news-1.example/images/") {
				t.Errorf("%s: %+v, want a usable image to link to", page, res)
			}
		}
	}
	images := func() (n int) {
		for _, q := range s.web.Requests() {
			if strings.HasPrefix(q.Path, "/images/") {
				n++
				if q.Host != "news-1.example" || !strings.HasPrefix(q.Header.Get("Referer"), "https://news-1.example/") ||
					q.Header.Get("User-Agent") != s.fp.UserAgent() {
					t.Errorf("%s%s: Referer %q, User-Agent %q", q.Host, q.Path, q.Header.Get("Referer"), q.Header.Get("User-Agent"))
				}
			}
		}
		return n
	}
	if n := images(); n != 3 {
		t.Errorf("%d image requests, want 3 (news-1's three images, once each)", n)
	}
	check()
	if n := images(); n != 3 {
		t.Errorf("after a second look, %d image requests, want still 3", n)
	}
}

// S8: a source the service excludes is removed from the list (deactivated:
// never fetched again) and its stored content withdrawn, the other
// source's untouched.
func TestStrictNews_S8_ExcludedSourceRemovedAndWithdrawn(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "strict-news", 2, 2, nil)
	s.runOnce()
	kept := len(s.deposits("news-1"))
	if kept == 0 || len(s.deposits("news-2")) == 0 {
		t.Fatal("nothing deposited")
	}
	ctx := context.Background()
	if err := s.c.Deactivate("news-2"); err != nil {
		t.Fatal(err)
	}
	n, err := s.c.Withdraw(ctx, "news-2")
	if err != nil || n != 2 {
		t.Fatalf("Withdraw: %d, %v; want the 2 deposits withdrawn", n, err)
	}
	if len(s.deposits("news-2")) != 0 || len(s.deposits("news-1")) != kept {
		t.Errorf("after withdrawal: news-2 %d, news-1 %d (want 0 and %d)", len(s.deposits("news-2")), len(s.deposits("news-1")), kept)
	}
	before := len(s.requests("news-2.example", ""))
	s.later(15 * time.Minute)
	s.runOnce()
	if _, err := s.c.Pass(ctx, "news-2"); !errors.Is(err, crawl.ErrInactive) {
		t.Errorf("a pass of the excluded source: %v, want ErrInactive", err)
	}
	if n := len(s.requests("news-2.example", "")); n != before {
		t.Errorf("%d requests to the excluded source after its removal", n-before)
	}
}

// depositKinds counts full deposits and excerpts.
func depositKinds(ds []*crawl.Deposit) (full, excerpts int) {
	for _, d := range ds {
		switch {
		case d.Excerpt != nil:
			excerpts++
		case d.Envelope != nil:
			full++
		}
	}
	return full, excerpts
}

// S3: robots.txt is kept for one hour: 59 minutes on, the chain answers
// from its copy and sends nothing; past the hour it reads robots.txt again.
func TestStrictNews_S3_RobotsCachedOneHour(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "strict-news", 1, 1, func(s *suite) {
		s.cfg.Sources = s.cfg.Sources[:1]
		s.chainClock = true
	})
	s.runOnce()
	page := "https://news-1.example" + s.info.Sites[0].Articles[0].Path
	ctx := context.Background()
	s.nextPhase(59 * time.Minute)
	e, err := s.client.Explain(ctx, page)
	if err != nil || !e.Allowed || len(s.web.Requests()) != 0 {
		t.Fatalf("59 min on: %+v, %v, %d requests; want the cached copy, nothing sent", e, err, len(s.web.Requests()))
	}
	fetched := e.Robots.FetchedAt
	if d := e.Robots.Expires.Sub(fetched); d != time.Hour {
		t.Errorf("the copy stands for %v, want 1 h", d)
	}
	s.nextPhase(2 * time.Minute)
	if e, err = s.client.Explain(ctx, page); err != nil || !e.Robots.FetchedAt.After(fetched) {
		t.Fatalf("61 min on: %+v, %v; want robots.txt read again", e, err)
	}
	if reqs := s.web.Requests(); len(reqs) != 1 || reqs[0].Path != "/robots.txt" {
		t.Errorf("61 min on: %d requests, want robots.txt alone", len(reqs))
	}
}

// S4: refusals in a row back off 5 min doubling (10, 20, 40); after the
// fifth the site's articles are suspended, while its feed is still read; the articles
// are checked again once a day, and a success there resumes them. Each
// phase is at least an hour on, so the chain reads robots.txt first.
func TestStrictNews_S4_FiveInARowThenDailyRecheck(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "strict-news", 1, 1, func(s *suite) {
		s.cfg.Sources = s.cfg.Sources[:1]
		s.chainClock = true
	})
	art := s.info.Sites[0].Articles[0]
	page := "https://news-1.example" + art.Path
	site := s.site("news-1.example")
	site.Misbehave(art.Path, politetest.Behaviour{Kind: politetest.TooManyRequests})
	ctx := context.Background()
	explain := func() fetch.Explanation {
		t.Helper()
		e, err := s.client.Explain(ctx, page)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	asked := 0
	for strike := 1; strike <= 5; strike++ {
		if strike > 1 {
			s.nextPhase(61 * time.Minute)
		}
		s.runOnce()
		asked += len(s.requests("news-1.example", art.Path))
		if asked != strike {
			t.Fatalf("strike %d: the article asked %d times in all", strike, asked)
		}
		e := explain()
		if e.Ledger.Strikes != strike {
			t.Fatalf("after strike %d the ledger counts %d", strike, e.Ledger.Strikes)
		}
		if strike < 5 {
			want := 5 * time.Minute << (strike - 1)
			if d := e.Ledger.Until.Sub(s.clk.Now()); !errors.Is(e.Refusal, fetch.ErrCooldown) || d > want || d < want-time.Minute {
				t.Errorf("after strike %d: %v for %v, want a cool-down of %v", strike, e.Refusal, d, want)
			}
		} else if e.Allowed {
			t.Fatalf("after the fifth strike the article may be asked for again")
		}
	}
	s.nextPhase(2 * time.Hour) // past the fifth step's cool-down (80 min)
	if e := explain(); !errors.Is(e.Refusal, fetch.ErrSuspended) || e.Ledger.Until.Sub(s.clk.Now()) < 20*time.Hour {
		t.Fatalf("two hours after the fifth strike: %v, until %v; want the articles suspended for the day", e.Refusal, e.Ledger.Until)
	}
	r := s.runOnce()["news-1"]
	if n := len(s.requests("news-1.example", art.Path)); n != 0 || r.Refused != 1 {
		t.Errorf("suspended: the article asked %d times, report %+v", n, r)
	}
	if n := len(s.requests("news-1.example", "/feed.xml")); n != 1 {
		t.Errorf("suspended: the feed read %d times, want it still read", n)
	}
	site.Misbehave(art.Path, politetest.Behaviour{})
	s.nextPhase(24 * time.Hour)
	r = s.runOnce()["news-1"]
	if n := len(s.requests("news-1.example", art.Path)); n != 1 || r.Deposited != 1 {
		t.Errorf("a day on: the article asked %d times, report %+v; want the daily re-check, deposited", n, r)
	}
	if e := explain(); !e.Allowed || e.Ledger.Strikes != 0 {
		t.Errorf("after the re-check's success: %+v, want the site's articles resumed", e.Ledger)
	}
}

// P1, S2: politeness holds across processes: two crawlers, each with its
// own client opened on the one store (as two processes of the CLI would,
// with store.schedule: shared), crawl two sources of the same site at once
// (the same articles, announced by its RSS and its Atom feed); the store's
// shared schedule keeps every request to the site a second apart and one
// at a time (the auditor).
func TestStrictNews_P1_TwoProcessesOneBudget(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "strict-news", 1, 3, func(s *suite) {
		s.cfg.Sources = s.cfg.Sources[:1]
		s.cfg.Store.Schedule = "shared" // two processes crawl from the one file
		s.conns = 2                     // each process keeps its own connection
	})
	ctx := context.Background()
	client2, db2, err := openClient(ctx, s.cfg, s.dbPath, &s.nf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db2.Close() })
	t.Cleanup(func() { client2.Close() })
	atom := s.cfg.Sources[0]
	atom.ID, atom.Trigger.Feeds = "news-1-atom", []string{"https://news-1.example/atom.xml"}
	state2, deposits2 := db2.Crawl().State, db2.Crawl().Deposits
	other := &crawl.Crawler{Client: client2, Sources: []crawl.Source{atom}, State: state2, Deposits: deposits2, Clock: s.clk, Owner: "process-2"}
	var wg sync.WaitGroup
	var errOther error
	var otherReps []*crawl.PassReport
	wg.Go(func() { otherReps, errOther = other.RunOnce(ctx) })
	s.runOnce()
	wg.Wait()
	if errOther != nil {
		t.Fatal(errOther)
	}
	if n := len(s.deposits("news-1")); n != 3 || otherReps[0].Queued != 3 {
		t.Errorf("%d deposits of the first process, want 3; the other's pass %+v", n, otherReps[0])
	}
	reqs := s.requests("news-1.example", "")
	asked := 0
	for _, a := range s.info.Sites[0].Articles {
		asked += len(s.requests("news-1.example", a.Path))
	}
	if asked != 6 {
		t.Errorf("%d article requests, want each article asked by each process", asked)
	}
	// Each process keeps its connection while it crawls. One of them may
	// wait out several of the other's turns, and the chain closes a
	// connection idle for three intervals (5 s at least): a connection
	// beyond one per process must replace one that went quiet that long
	// before it.
	if extra := unreplaced(reqs, 2, 5*time.Second); len(extra) > 0 {
		var b strings.Builder
		for _, q := range reqs {
			fmt.Fprintf(&b, "\n\t#%d conn %d %s %s", q.Seq, q.Conn, q.Start.Format("15:04:05.000"), q.Path)
		}
		t.Errorf("connections %v opened while every earlier one was in use, want one per process:%s", extra, b.String())
	}
}

// unreplaced returns the connections carrying reqs that neither are one of
// the first procs opened nor replace a connection gone quiet (no request
// after) at least idle before their first request.
func unreplaced(reqs []politetest.Request, procs int, idle time.Duration) []int {
	type span struct {
		id          int
		first, last time.Time
	}
	var spans []*span
	byID := map[int]*span{}
	for _, q := range reqs {
		sp := byID[q.Conn]
		if sp == nil {
			sp = &span{id: q.Conn, first: q.Start}
			byID[q.Conn] = sp
			spans = append(spans, sp)
		}
		sp.last = q.Start
	}
	slices.SortFunc(spans, func(a, b *span) int { return a.first.Compare(b.first) })
	var extra []int
	replaced := map[int]bool{}
	for i, sp := range spans {
		if i < procs {
			continue
		}
		found := false
		for _, old := range spans[:i] {
			if !replaced[old.id] && !old.last.After(sp.first.Add(-idle)) {
				replaced[old.id], found = true, true
				break
			}
		}
		if !found {
			extra = append(extra, sp.id)
		}
	}
	return extra
}

// unreplaced flags a third connection opened while both processes' were in
// use, and passes one that replaces a connection quiet for the idle time.
func TestUnreplaced(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(conn int, sec float64) politetest.Request {
		return politetest.Request{Conn: conn, Start: t0.Add(time.Duration(sec * float64(time.Second)))}
	}
	quiet := []politetest.Request{at(1, 0), at(2, 1), at(1, 2), at(1, 3), at(1, 4), at(1, 5), at(3, 6.1)}
	if got := unreplaced(quiet, 2, 5*time.Second); len(got) != 0 {
		t.Errorf("connection 2 quiet 5.1 s then replaced: flagged %v", got)
	}
	busy := []politetest.Request{at(1, 0), at(2, 1), at(1, 2), at(2, 3), at(3, 4), at(1, 5)}
	if got := unreplaced(busy, 2, 5*time.Second); !slices.Equal(got, []int{3}) {
		t.Errorf("connection 3 opened while 1 and 2 were in use: flagged %v, want [3]", got)
	}
}
