package main

// The demo's crawl: every feed of a politetest web read through the fetch
// chain (twice, to show conditional GET), one backlog walked, every announced
// article fetched, then a summary and the auditor's verdict.
//
// Time is scaled down for the demo: the strict news crawler's policy asks for
// one request per second per site; the demo paces each site at
// DefaultCrawlInterval (100 ms) instead, and the auditor checks that interval.
//
// The chain's pacer spaces the starts of requests as it writes them, and on
// Linux the auditor times each request by the kernel's receive stamp of its
// bytes, so the pacer alone keeps every interval. Where the kernel cannot
// stamp (politetest.ExactStarts() is false) the auditor times requests as
// the web gets round to them, which on a loaded machine can lag a write by
// tens of milliseconds; there the crawl also waits, per site, the interval
// (or the site's Crawl-delay) after each answer before its next request, so
// that no request can arrive within the interval of the previous one.
// Everything else (robots.txt first and obeyed, one request in flight per
// site, refusals honoured, cool-downs of minutes) is the policy as written.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// DefaultCrawlInterval is the demo's per-site interval: the policy's 1 s
// scaled down twenty times so that fifty sites are crawled in seconds.
const DefaultCrawlInterval = 100 * time.Millisecond

// CrawlConfig tunes RunCrawl. The zero value is the demo.
type CrawlConfig struct {
	// Interval is the per-site interval. 0: DefaultCrawlInterval.
	Interval time.Duration
	// Workers is how many sites are crawled at once (each site still gets
	// one request at a time). 0: DefaultCrawlWorkers.
	Workers int
	// Slack is the auditor's tolerance for timing jitter. 0: 2 ms where
	// the web times starts by the kernel's receive time (Linux), else a
	// fifth of Interval (the web's handlers start late under load).
	Slack time.Duration
	// Backlog names the site whose WordPress backlog is walked. "": the
	// first well-behaved site.
	Backlog string
	// InfoURL is the crawler's information page in its User-Agent. "":
	// DemoInfoURL.
	InfoURL string
}

// DefaultCrawlWorkers is how many sites the demo crawls at once.
const DefaultCrawlWorkers = 10

// DemoInfoURL is the information page the demo crawler names.
const DemoInfoURL = "https://politefetch.example/demo-crawler"

// The demo crawler's product token and version: a preset is a policy, not an
// identity, so the demo names its own crawler.
const (
	DemoName    = "PolitefetchDemoBot"
	DemoVersion = "1"
)

// CrawlSummary is what one crawl did, with the auditor's verdict.
type CrawlSummary struct {
	Sites, RudeSites int
	Interval         time.Duration
	Elapsed          time.Duration

	FeedsParsed      int // first reads answered 200 and parsed
	FeedsNotModified int // second reads answered 304: no parse (D4)
	FeedsFailed      int // reads refused by us or by the server, or unreadable
	Announced        int // distinct articles the feeds announced

	Backlog BacklogSummary

	ArticlesRead    int // final 200s received in full (V12)
	ArticlesFailed  int // answered, but not a complete 200, or unreadable
	ArticlesRefused int // not sent: refused by us (robots, cool-down, …)

	// Refusals counts the requests we did not send, by reason (robots,
	// cool-down, suspended, …), and the server's refusals by kind (429,
	// 503, challenge, 403 …).
	RefusedByUs     map[string]int
	RefusedByServer map[string]int

	CooledDown []string // sites cooling down at the end
	Suspended  []string // sites whose articles are suspended at the end

	Requests int                // requests the web received
	Audit    *politetest.Report // the auditor's verdict
}

// BacklogSummary is what the backlog walks did: a start-up walk knowing
// nothing, then a later pass knowing every reference seen, which the stop
// rule ends early (V4).
type BacklogSummary struct {
	Site       string
	TotalPages int    // the page count the API announced
	Pages      int    // pages read by the start-up walk
	Refs       int    // references it yielded, newest first
	New        int    // of them, references the feed had not announced
	NextPages  int    // pages read by the later pass
	Stopped    string // why the later pass ended
}

// RunCrawl crawls the sites of info on web through a fetch client built on
// the strict news crawler's policy with the interval scaled down, printing a
// progress line per site and then the summary to out. It returns the
// summary; the crawl was polite when Summary.Audit.OK(). An error means the
// crawl could not run at all.
func RunCrawl(ctx context.Context, web *politetest.Web, info *politetest.ScenarioInfo, cfg CrawlConfig, out io.Writer) (*CrawlSummary, error) {
	start := time.Now()
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultCrawlInterval
	}
	if cfg.InfoURL == "" {
		cfg.InfoURL = DemoInfoURL
	}
	pol := fetch.StrictNews()
	pol.Name, pol.Version, pol.InfoURL = DemoName, DemoVersion, cfg.InfoURL
	pol.Interval, pol.IntervalMax = cfg.Interval, 0
	client, err := fetch.New(pol,
		fetch.WithResolver(web), fetch.WithDial(web.DialContext), fetch.WithRootCAs(web.RootCAs()),
		fetch.WithAllowPrefixes(netip.MustParsePrefix("127.0.0.0/8")))
	if err != nil {
		return nil, err
	}
	defer client.Close()

	cr := &crawlRun{
		client: client,
		out:    out,
		sum: &CrawlSummary{
			Sites: len(info.Sites), RudeSites: len(info.Rude()), Interval: cfg.Interval,
			RefusedByUs: map[string]int{}, RefusedByServer: map[string]int{},
		},
	}
	backlog := cfg.Backlog
	if backlog == "" {
		for _, s := range info.Sites {
			if !s.Rude && s.CrawlDelay == 0 {
				backlog = s.Name
				break
			}
		}
	}
	fmt.Fprintf(out, "crawling %d sites (%d rude) as %s, one request per site every %v (the policy's 1 s scaled down)\n",
		len(info.Sites), len(info.Rude()), pol.UserAgent(), cfg.Interval)

	workers := cfg.Workers
	if workers <= 0 {
		workers = DefaultCrawlWorkers
	}
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for _, s := range info.Sites {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cr.site(ctx, s.Name, s.Name == backlog, cfg.Interval)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	now := time.Now()
	for _, s := range info.Sites {
		d := client.Ledger().Check(ctx, s.Name, backoff.Article, now)
		switch {
		case d.Allowed:
		case d.Reason == backoff.Suspended:
			cr.sum.Suspended = append(cr.sum.Suspended, s.Name)
		case d.Reason == backoff.Cooldown:
			cr.sum.CooledDown = append(cr.sum.CooledDown, s.Name)
		}
	}
	cr.sum.Requests = len(web.Requests())
	slack := cfg.Slack
	if slack <= 0 {
		slack = politetest.Slack(cfg.Interval / 5)
	}
	cr.sum.Audit = web.Audit(CrawlAuditPolicy(pol, slack))
	cr.sum.Elapsed = time.Since(start)
	cr.sum.Print(out)
	return cr.sum, nil
}

// CrawlAuditPolicy is what the auditor checks for the crawl's policy: its
// interval (less slack for arrival jitter), one request in flight, strict
// robots.txt (401/403/429 close the site, S3), exactly the identity and
// conditional headers, its User-Agent, and https only unless the policy
// allows http.
func CrawlAuditPolicy(p fetch.Policy, slack time.Duration) politetest.Policy {
	return politetest.Policy{
		Interval:       p.Interval,
		MaxInFlight:    1,
		StrictRobots:   true,
		UserAgent:      regexp.MustCompile("^" + regexp.QuoteMeta(p.UserAgent()) + "$"),
		RobotsAgent:    p.Name,
		Slack:          slack,
		HTTPSOnly:      !p.AllowHTTP,
		AllowedHeaders: []string{"User-Agent", "Accept", "Accept-Encoding", "If-None-Match", "If-Modified-Since"},
	}
}

// crawlRun holds one crawl's client and tallies.
type crawlRun struct {
	client *fetch.Client
	out    io.Writer

	mu   sync.Mutex
	sum  *CrawlSummary
	done int
}

// crawlSiteLog is one site's progress, printed as one line when it is done.
type crawlSiteLog struct {
	parts []string
}

func (l *crawlSiteLog) add(format string, args ...any) {
	l.parts = append(l.parts, fmt.Sprintf(format, args...))
}

// site crawls one site: feed, backlog (for one site), articles, feed again.
func (cr *crawlRun) site(ctx context.Context, name string, walkBacklog bool, interval time.Duration) {
	var log crawlSiteLog
	feedURL := "https://" + name + "/feed.xml"
	g := &crawlGate{gap: interval, off: politetest.ExactStarts()}
	// robots.txt first, on its own, so that the gap after its answer holds
	// before the feed is asked for; then the gap is the Crawl-delay if longer.
	if u, err := url.Parse(feedURL); err == nil {
		_ = cr.client.Robots().Allow(ctx, u)
		g.last = time.Now()
		if d, ok := cr.client.Robots().CrawlDelay(ctx, u); ok && d > g.gap {
			g.gap = d
		}
	}
	reader := &feed.Reader{Client: cr.doer(fetch.KindFeed, g), RefsOnly: true}

	var refs []feed.Ref
	res, err := reader.Read(ctx, feedURL)
	if err != nil {
		cr.count(func(s *CrawlSummary) { s.FeedsFailed++ })
		log.add("feed %s", cr.why(err))
	} else {
		for _, it := range res.Feed.Items {
			refs = append(refs, it.Ref())
		}
		cr.count(func(s *CrawlSummary) { s.FeedsParsed++; s.Announced += len(refs) })
		log.add("feed %d items", len(refs))
	}

	if walkBacklog {
		b := cr.backlog(ctx, name, refs, g)
		refs = append(refs, b.extra...)
		log.add("backlog %d refs in %s (%d not in the feed), next pass: %s", b.sum.Refs, crawlPlural(b.sum.Pages, "page"), b.sum.New, b.sum.Stopped)
	}

	if len(refs) > 0 {
		read, failed, refused := 0, 0, map[string]int{}
		for _, r := range refs {
			if ctx.Err() != nil {
				break
			}
			res, err := cr.get(ctx, g, r.URL, fetch.AsKind(fetch.KindArticle))
			switch {
			case err != nil:
				var re *fetch.RefusedError
				if errors.As(err, &re) {
					refused[re.Reason.String()]++
					cr.count(func(s *CrawlSummary) { s.ArticlesRefused++; s.RefusedByUs[re.Reason.String()]++ })
				} else {
					failed++
					cr.count(func(s *CrawlSummary) { s.ArticlesFailed++ })
				}
			case res.Complete():
				read++
				cr.count(func(s *CrawlSummary) { s.ArticlesRead++ })
			default:
				failed++
				cr.count(func(s *CrawlSummary) { s.ArticlesFailed++ })
			}
		}
		line := fmt.Sprintf("articles %d/%d read", read, len(refs))
		if failed > 0 {
			line += fmt.Sprintf(", %d failed", failed)
		}
		for _, k := range crawlSortedKeys(refused) {
			line += fmt.Sprintf(", %d refused (%s)", refused[k], k)
		}
		log.add("%s", line)
	}

	// The second read of the feed: unchanged feeds answer 304 and cost no
	// parse (D4); refused sites stay refused.
	res, err = reader.Read(ctx, feedURL)
	switch {
	case err != nil:
		log.add("again: %s", cr.why(err))
	case res.NotModified:
		cr.count(func(s *CrawlSummary) { s.FeedsNotModified++ })
		log.add("again: 304")
	default:
		log.add("again: changed")
	}

	cr.mu.Lock()
	cr.done++
	fmt.Fprintf(cr.out, "[%2d/%d] %-18s %s\n", cr.done, cr.sum.Sites, name, strings.Join(log.parts, " · "))
	cr.mu.Unlock()
}

type crawlBacklog struct {
	sum   BacklogSummary
	extra []feed.Ref // refs the feed did not announce
}

// backlog walks name's WordPress post list twice, newest first, three posts
// a page: at start-up, knowing nothing, to the end of the list; then as a
// later pass would, knowing every reference seen, so that it stops at the
// first page wholly known and older than 48 hours (V4) — or, as the chain
// sends the validators of the start-up walk, at a first page answered 304.
func (cr *crawlRun) backlog(ctx context.Context, name string, announced []feed.Ref, g *crawlGate) crawlBacklog {
	var known feed.KnownSet
	for _, r := range announced {
		known.Add(r)
	}
	var b crawlBacklog
	b.sum.Site = name
	walk := func(k feed.Known, yield func(feed.Ref)) (pages int, stopped string) {
		doer := cr.doer(fetch.KindFeed, g)
		status := 0
		counting := crawlDoerFunc(func(req *http.Request) (*http.Response, error) {
			pages++
			resp, err := doer.Do(req)
			if err == nil {
				status = resp.StatusCode
				fmt.Sscan(resp.Header.Get("X-WP-TotalPages"), &b.sum.TotalPages)
			}
			return resp, err
		})
		w := &feed.APIWalker{Client: counting, Spec: feed.WordPress("https://"+name, 3)}
		for ref, err := range w.Walk(ctx, feed.Stop{Known: k}) {
			if err != nil {
				return pages, cr.why(err)
			}
			yield(ref)
		}
		switch {
		case status == http.StatusNotModified:
			return pages, fmt.Sprintf("page %d unchanged (304, D4), so the rest is known (V4)", pages)
		case pages < b.sum.TotalPages:
			return pages, fmt.Sprintf("page %d of %d wholly known and older than 48 h (V4)", pages, b.sum.TotalPages)
		}
		return pages, "end of the list"
	}
	b.sum.Pages, _ = walk(nil, func(ref feed.Ref) {
		b.sum.Refs++
		if !known.Known(ref) {
			b.sum.New++
			b.extra = append(b.extra, ref)
			known.Add(ref)
		}
	})
	b.sum.NextPages, b.sum.Stopped = walk(&known, func(feed.Ref) {})
	cr.count(func(s *CrawlSummary) { s.Backlog = b.sum })
	return b
}

// why says, briefly, why a read failed, and counts the refusal.
func (cr *crawlRun) why(err error) string {
	var re *fetch.RefusedError
	var se *feed.StatusError
	switch {
	case errors.As(err, &re):
		cr.count(func(s *CrawlSummary) { s.RefusedByUs[re.Reason.String()]++ })
		if re.Until.IsZero() {
			return "refused by us (" + re.Reason.String() + ")"
		}
		return fmt.Sprintf("refused by us (%s for %v)", re.Reason, time.Until(re.Until).Round(time.Minute))
	case errors.As(err, &se):
		if se.RetryAfter != "" {
			return fmt.Sprintf("%d (Retry-After %s)", se.StatusCode, se.RetryAfter)
		}
		return fmt.Sprint(se.StatusCode)
	}
	return err.Error()
}

// observe counts the server's refusals among every response.
func (cr *crawlRun) observe(res *fetch.Result) {
	kind := ""
	if p, ok := backoff.DetectChallenge(res.Status, res.Header, res.Body); ok {
		kind = "challenge (" + p + ")"
	} else {
		switch res.Status {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests, http.StatusServiceUnavailable:
			kind = fmt.Sprint(res.Status)
		}
	}
	if kind != "" {
		cr.count(func(s *CrawlSummary) { s.RefusedByServer[kind]++ })
	}
}

func (cr *crawlRun) count(f func(*CrawlSummary)) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	f(cr.sum)
}

// doer returns a feed.Doer over the fetch client's Get, so feed and backlog
// reads go through the whole chain as the given kind (the ledger suspends
// articles, not feeds: S4), bounded, decoded and with their validators (D4).
func (cr *crawlRun) doer(kind fetch.Kind, g *crawlGate) feed.Doer {
	return crawlDoerFunc(func(req *http.Request) (*http.Response, error) {
		opts := []fetch.GetOption{fetch.AsKind(kind)}
		if a := req.Header.Get("Accept"); a != "" {
			opts = append(opts, fetch.WithAccept(a))
		}
		res, err := cr.get(req.Context(), g, req.URL.String(), opts...)
		if err != nil {
			return nil, err
		}
		final, perr := url.Parse(res.FinalURL)
		if perr != nil || res.FinalURL == "" {
			final = req.URL
		}
		return &http.Response{
			Status:        fmt.Sprintf("%d %s", res.Status, http.StatusText(res.Status)),
			StatusCode:    res.Status,
			Proto:         "HTTP/1.1",
			ProtoMajor:    1,
			ProtoMinor:    1,
			Header:        res.Header.Clone(),
			Body:          io.NopCloser(bytes.NewReader(res.Body)),
			ContentLength: int64(len(res.Body)),
			Request:       &http.Request{Method: http.MethodGet, URL: final, Header: http.Header{}},
		}, nil
	})
}

// get waits for the site's gate, sends one Get through the chain, and
// counts the server's refusals. A refusal we made sent nothing, so it does
// not restart the gap.
func (cr *crawlRun) get(ctx context.Context, g *crawlGate, u string, opts ...fetch.GetOption) (*fetch.Result, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	res, err := cr.client.Get(ctx, u, opts...)
	var re *fetch.RefusedError
	if !errors.As(err, &re) {
		g.last = time.Now()
	}
	if res != nil {
		cr.observe(res)
	}
	return res, err
}

// crawlGate spaces one site's requests from the end of the previous answer
// where the auditor cannot time requests exactly (see the file comment); off,
// it leaves the spacing to the chain's pacer. A site's requests are
// sequential, so it has no lock.
type crawlGate struct {
	gap  time.Duration
	last time.Time
	off  bool
}

func (g *crawlGate) wait(ctx context.Context) error {
	d := time.Until(g.last.Add(g.gap))
	if g.off || g.last.IsZero() || d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// crawlDoerFunc adapts a function to feed.Doer.
type crawlDoerFunc func(*http.Request) (*http.Response, error)

func (f crawlDoerFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }

// Print writes the summary.
func (s *CrawlSummary) Print(out io.Writer) {
	fmt.Fprintf(out, "\nsummary after %v (pacing %v per site, the policy's 1 s scaled down)\n", s.Elapsed.Round(10*time.Millisecond), s.Interval)
	fmt.Fprintf(out, "  sites            %d (%d rude)\n", s.Sites, s.RudeSites)
	fmt.Fprintf(out, "  feeds            %d parsed, %d failed; second read: %d × 304 saved (no body, no parse)\n", s.FeedsParsed, s.FeedsFailed, s.FeedsNotModified)
	fmt.Fprintf(out, "  backlog          %s: start-up walk %d refs in %s (%d not in the feed); next pass read %s: %s\n",
		s.Backlog.Site, s.Backlog.Refs, crawlPlural(s.Backlog.Pages, "page"), s.Backlog.New, crawlPlural(s.Backlog.NextPages, "page"), s.Backlog.Stopped)
	fmt.Fprintf(out, "  articles         %d read in full, %d refused by us, %d failed, of %d announced\n", s.ArticlesRead, s.ArticlesRefused, s.ArticlesFailed, s.Announced+s.Backlog.New)
	fmt.Fprintf(out, "  refused by us    %s\n", crawlTally(s.RefusedByUs))
	fmt.Fprintf(out, "  refused by them  %s\n", crawlTally(s.RefusedByServer))
	fmt.Fprintf(out, "  cooling down     %s\n", crawlList(s.CooledDown))
	fmt.Fprintf(out, "  suspended        %s\n", crawlList(s.Suspended))
	if s.Audit == nil {
		return
	}
	verdict := fmt.Sprintf("%d violations", len(s.Audit.Violations))
	if s.Audit.OK() {
		verdict = "0 violations: polite"
	}
	fmt.Fprintf(out, "  auditor          %s (%d requests to %d hosts)\n", verdict, s.Audit.Requests, s.Audit.Hosts)
	if !s.Audit.OK() {
		fmt.Fprintln(out, s.Audit)
	}
}

func crawlPlural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func crawlTally(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range crawlSortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func crawlList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	names = slices.Clone(names)
	sort.Strings(names)
	return fmt.Sprintf("%d: %s", len(names), strings.Join(names, ", "))
}

func crawlSortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
