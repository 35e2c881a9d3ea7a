package main

// The demo's crawl, on package crawl: one source per site of a politetest
// web (its RSS feed as trigger, full text), one of them with its WordPress
// backlog, crawled in three rounds of a simulated day: at start-up (robots.txt,
// feed, backlog, every article), a quarter of an hour later (every feed
// again: unchanged ones answer 304, D4), and a day later (feeds again, and
// the backlog's next walk, which stops at its first page, V4). Then a
// summary and the auditor's verdict.
//
// Two clocks: the crawler's schedule runs on a simulated clock that the
// demo moves on between rounds (15 minutes, then 24 hours), while every
// request is paced in real time by the fetch chain, at DefaultCrawlInterval
// per site (the policy's 1 s scaled down) — the chain's pacer is the only
// thing that spaces requests.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/clock"
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// DefaultCrawlInterval is the demo's per-site interval: the policy's 1 s
// scaled down ten times so that fifty sites are crawled in seconds.
const DefaultCrawlInterval = 100 * time.Millisecond

// CrawlConfig tunes RunCrawl. The zero value is the demo.
type CrawlConfig struct {
	// Interval is the per-site interval. 0: DefaultCrawlInterval.
	Interval time.Duration
	// Slack is the auditor's tolerance for timing jitter. 0:
	// politetest.Slack of a fifth of Interval.
	Slack time.Duration
	// Backlog names the site whose WordPress backlog is walked. "": the
	// first well-behaved site.
	Backlog string
	// InfoURL is the crawler's information page in its User-Agent. "":
	// DemoInfoURL.
	InfoURL string
	// Store, when set, keeps every piece of state and every deposit (see
	// demo_store.go); nil: all in memory, forgotten with the process.
	Store *stores
}

// The demo crawler's identity: a preset is a policy, not an identity.
const (
	DemoName    = "PoliteDemoBot"
	DemoVersion = "1"
	DemoInfoURL = "https://politefetch.example/demo-crawler"
)

// CrawlSummary is what one crawl did, with the auditor's verdict.
type CrawlSummary struct {
	Sites, RudeSites int
	Interval         time.Duration
	Elapsed          time.Duration

	FeedsParsed      int // start-up reads answered 200 and parsed
	FeedsNotModified int // later reads answered 304: no parse (D4)
	FeedsFailed      int // start-up reads refused by us or by the server, or unreadable
	Announced        int // distinct articles the feeds and the backlog announced

	Backlog BacklogSummary

	// The start-up round's articles.
	ArticlesRead    int // deposited: final 200s received in full (V12)
	ArticlesFailed  int // answered, but not a complete 200, or unreadable
	ArticlesRefused int // not sent: refused by us (robots, cool-down, …)
	Excerpts        int // refused stories kept as their feed tells them (S5)

	// RefusedByUs counts the start-up round's requests we did not send, by
	// reason (robots, cooldown, suspended, …); RefusedByServer the server's
	// refusals by status (429, 503, 403 …).
	RefusedByUs     map[string]int
	RefusedByServer map[string]int

	CooledDown []string // sites cooling down at the end
	Suspended  []string // sites whose articles are suspended at the end

	Requests int                // requests the web received
	Audit    *politetest.Report // the auditor's verdict

	Store *StoreSummary // what the file held and gained; nil: in memory
}

// BacklogSummary is what the backlog walks did: a start-up walk knowing
// nothing, then the walk a day later knowing every reference seen, which the
// stop rule ends early (V4).
type BacklogSummary struct {
	Site      string
	Pages     int // pages the start-up walk read
	Refs      int // references it yielded, newest first
	New       int // of them, references not seen before
	NextPages int // pages the walk a day later read
}

// RunCrawl crawls the sites of info on web with a crawl.Crawler over a fetch
// client built on the strict news crawler's policy with the interval scaled
// down, printing a progress line per site and then the summary to out. It
// returns the summary; the crawl was polite when Summary.Audit.OK(). An
// error means the crawl could not run at all.
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
	opts := []fetch.Option{
		fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
			Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}),
	}
	if cfg.Store != nil {
		opts = append(opts, stateOptions(cfg.Store)...)
	}
	client, err := fetch.New(pol, opts...)
	if err != nil {
		return nil, err
	}
	defer client.Close()

	backlog := cfg.Backlog
	if backlog == "" {
		for _, s := range info.Sites {
			if !s.Rude && s.CrawlDelay == 0 && s.Robots != "disallow" {
				backlog = s.Name
				break
			}
		}
	}
	var sources []crawl.Source
	for _, s := range info.Sites {
		src := crawl.Source{
			ID:       s.Name,
			Name:     s.Name,
			Trigger:  crawl.Trigger{Feeds: []string{"https://" + s.Name + "/feed.xml"}},
			Admitted: []string{s.Name},
			FullText: true,
			Policy:   crawl.PolicySpec{Preset: crawl.StrictNews},
			Active:   true,
		}
		if s.Name == backlog {
			src.Backlog = &crawl.Backlog{Kind: crawl.BacklogWordPress, Site: "https://" + s.Name, PerPage: 3}
		}
		sources = append(sources, src)
	}

	sum := &CrawlSummary{
		Sites: len(info.Sites), RudeSites: len(info.Rude()), Interval: cfg.Interval,
		RefusedByUs: map[string]int{}, RefusedByServer: map[string]int{},
		Backlog: BacklogSummary{Site: backlog},
	}
	t := &tally{sum: sum, out: out, sites: len(info.Sites)}
	day := clock.NewManual(time.Now()) // the demo's simulated day: moved by the demo between passes, never by the wall clock
	c := &crawl.Crawler{Client: client, Sources: sources, Clock: day, OnEvent: t.event}
	var robotsKnown map[string]bool
	if cfg.Store != nil {
		sum.Store = &StoreSummary{Path: cfg.Store.Path()}
		var resume time.Time
		robotsKnown, resume, err = storeStart(ctx, cfg.Store, sources, sum.Store)
		if err != nil {
			return nil, err
		}
		if resume.After(day.Now()) {
			day.Set(resume) // the simulated day goes on where the file left it
		}
		c.State, c.Deposits = cfg.Store.Crawl().State, cfg.Store.Crawl().Deposits
		fmt.Fprintf(out, "store %s: %d references and %d deposits known, robots.txt of %d of the %d sites\n",
			sum.Store.Path, sum.Store.Known, sum.Store.Deposits, sum.Store.RobotsKnown, len(info.Sites))
	}
	fmt.Fprintf(out, "crawling %d sites (%d rude) as %s, one request per site every %v (%s)\n",
		len(info.Sites), len(info.Rude()), pol.UserAgent(), cfg.Interval, pacingNote(cfg.Interval))

	wpPages := func() int {
		n := 0
		for _, r := range web.Requests() {
			if r.Host == backlog && strings.HasPrefix(r.Path, "/wp-json/") {
				n++
			}
		}
		return n
	}
	for i, step := range []time.Duration{0, 15 * time.Minute, 24 * time.Hour} {
		day.Set(day.Now().Add(step))
		t.round = i
		_, err := c.RunOnce(ctx)
		if _, timed := ctx.Deadline(); timed && err == nil && t.ranLate() {
			err = context.DeadlineExceeded // reads refused for coming after the deadline: cut short
		}
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("-timeout ran out before the crawl ended: %w", err)
			}
			return nil, err
		}
		switch i {
		case 0:
			sum.Backlog.Pages = wpPages()
		case 2:
			sum.Backlog.NextPages = wpPages() - sum.Backlog.Pages
		}
	}

	for _, s := range info.Sites {
		e, err := client.Explain(ctx, "https://"+s.Name+"/")
		if err != nil {
			continue
		}
		d := e.Ledger // as an article's Get would meet it, with no re-check taken
		switch {
		case d.Allowed:
		case d.Reason == backoff.Suspended:
			sum.Suspended = append(sum.Suspended, s.Name)
		case d.Reason == backoff.Cooldown:
			sum.CooledDown = append(sum.CooledDown, s.Name)
		}
	}
	sum.Requests = len(web.Requests())
	slack := cfg.Slack
	if slack <= 0 {
		slack = politetest.Slack(cfg.Interval / 5)
	}
	if cfg.Store != nil {
		sum.Audit = auditResumed(web, info, CrawlAuditPolicy(pol, slack), robotsKnown, sum.Store)
		n, err := storeDeposits(ctx, cfg.Store, sources)
		if err != nil {
			return nil, fmt.Errorf("store %s: %w", sum.Store.Path, err)
		}
		sum.Store.NewDeposits = n - sum.Store.Deposits
	} else {
		sum.Audit = web.Audit(CrawlAuditPolicy(pol, slack))
	}
	sum.Elapsed = time.Since(start)
	sum.Print(out)
	return sum, nil
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

// tally turns the crawler's events into the summary and the progress lines.
type tally struct {
	mu    sync.Mutex
	sum   *CrawlSummary
	out   io.Writer
	sites int
	round int
	done  int
	// late: a read was refused at once because its turn at the host would
	// come after its deadline (fetch.ErrPacingDeadline)
	late bool
}

func (t *tally) event(e crawl.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sum
	if e.Err != nil && errors.Is(e.Err, fetch.ErrPacingDeadline) {
		t.late = true
	}
	if e.Kind == crawl.EventNotModified {
		s.FeedsNotModified++
	}
	if t.round > 0 {
		return // the later rounds show 304s and the backlog's stop; the counts are the start-up's
	}
	switch e.Kind {
	case crawl.EventTriggerRead:
		s.FeedsParsed++
	case crawl.EventTriggerFailed:
		s.FeedsFailed++
		t.refusal(e.Err)
	case crawl.EventDeposited:
		s.ArticlesRead++
	case crawl.EventExcerpted:
		s.Excerpts++
	case crawl.EventRefused:
		s.ArticlesRefused++
		t.refusal(e.Err)
	case crawl.EventFailed:
		s.ArticlesFailed++
		if serverRefusal(e.Status) {
			s.RefusedByServer[fmt.Sprint(e.Status)]++
		}
	case crawl.EventPassEnded:
		if e.Pass != nil {
			t.progress(e.Pass)
		}
	}
}

// ranLate reports whether a read was refused for its deadline.
func (t *tally) ranLate() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.late
}

// refusal counts a refusal, ours or the server's.
func (t *tally) refusal(err error) {
	var re *fetch.RefusedError
	var se *feed.StatusError
	switch {
	case errors.As(err, &re):
		t.sum.RefusedByUs[re.Reason.String()]++
	case errors.As(err, &se) && serverRefusal(se.StatusCode):
		t.sum.RefusedByServer[fmt.Sprint(se.StatusCode)]++
	}
}

func serverRefusal(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	}
	return false
}

// progress prints one site's line after its start-up pass.
func (t *tally) progress(p *crawl.PassReport) {
	var parts []string
	switch {
	case p.Trigger.Err != nil:
		parts = append(parts, "feed "+brief(p.Trigger.Err))
	case p.Trigger.NotModified > 0 && p.Trigger.Refs == 0:
		parts = append(parts, "feed 304, unchanged since the validators kept")
	default:
		parts = append(parts, fmt.Sprintf("feed %d items", p.Trigger.Refs))
	}
	t.sum.Announced += p.Trigger.New + p.Backlog.New
	if p.BacklogRead {
		t.sum.Backlog.Refs, t.sum.Backlog.New = p.Backlog.Refs, p.Backlog.New
		parts = append(parts, fmt.Sprintf("backlog %d refs (%d new)", p.Backlog.Refs, p.Backlog.New))
	}
	if p.Queued > 0 {
		line := fmt.Sprintf("articles %d/%d deposited", p.Deposited, p.Queued)
		if p.Failed > 0 {
			line += fmt.Sprintf(", %d failed", p.Failed)
		}
		if p.Refused > 0 {
			line += fmt.Sprintf(", %d refused by us", p.Refused)
		}
		parts = append(parts, line)
	}
	t.done++
	fmt.Fprintf(t.out, "[%2d/%d] %-18s %s\n", t.done, t.sites, p.Source, strings.Join(parts, " · "))
}

// brief says in a few words why a read failed.
func brief(err error) string {
	var re *fetch.RefusedError
	var se *feed.StatusError
	switch {
	case errors.As(err, &re):
		return "refused by us (" + re.Reason.String() + ")"
	case errors.As(err, &se):
		if se.RetryAfter != "" {
			return fmt.Sprintf("%d (Retry-After %s)", se.StatusCode, se.RetryAfter)
		}
		return fmt.Sprint(se.StatusCode)
	case errors.Is(err, context.DeadlineExceeded):
		return "not read: -timeout ran out"
	case errors.Is(err, context.Canceled):
		return "not read: interrupted"
	}
	return "not read: " + strings.TrimPrefix(err.Error(), "feed: ")
}

// pacingNote says how the interval compares with the policy's 1 s.
func pacingNote(d time.Duration) string {
	switch {
	case d < time.Second:
		return "the policy's 1 s scaled down"
	case d == time.Second:
		return "the policy's 1 s"
	}
	return "longer than the policy's 1 s"
}

// Print writes the summary.
func (s *CrawlSummary) Print(out io.Writer) {
	fmt.Fprintf(out, "\nsummary after %v (pacing %v per site, %s)\n", s.Elapsed.Round(10*time.Millisecond), s.Interval, pacingNote(s.Interval))
	fmt.Fprintf(out, "  sites            %d (%d rude)\n", s.Sites, s.RudeSites)
	resumed := s.Store != nil && s.Store.Known > 0
	if resumed {
		fmt.Fprintf(out, "  feeds            %d parsed, %d failed at start-up; %d × 304 over the three rounds, to the validators the store kept (no body, no parse)\n", s.FeedsParsed, s.FeedsFailed, s.FeedsNotModified)
	} else {
		fmt.Fprintf(out, "  feeds            %d parsed, %d failed at start-up; read again +15 min and +24 h: %d × 304 (no body, no parse)\n", s.FeedsParsed, s.FeedsFailed, s.FeedsNotModified)
	}
	if resumed && s.Backlog.Pages == 0 {
		fmt.Fprintf(out, "  backlog          %s: walked by an earlier run, not due at start-up; a day later %s, the rest known\n",
			s.Backlog.Site, plural(s.Backlog.NextPages, "page"))
	} else {
		fmt.Fprintf(out, "  backlog          %s: start-up walk %d refs in %s (%d new); a day later %s, the rest known\n",
			s.Backlog.Site, s.Backlog.Refs, plural(s.Backlog.Pages, "page"), s.Backlog.New, plural(s.Backlog.NextPages, "page"))
	}
	if resumed {
		// A reference refused by the chain is not settled, so it is asked
		// again on every pass (and refused again, nothing sent).
		fmt.Fprintf(out, "  articles         %d deposited in full, %d failed, of %d newly announced; %d known, refused by us again (nothing sent); %d kept as excerpts\n", s.ArticlesRead, s.ArticlesFailed, s.Announced, s.ArticlesRefused, s.Excerpts)
	} else {
		fmt.Fprintf(out, "  articles         %d deposited in full, %d refused by us, %d failed, of %d announced; %d refused kept as excerpts\n", s.ArticlesRead, s.ArticlesRefused, s.ArticlesFailed, s.Announced, s.Excerpts)
	}
	fmt.Fprintf(out, "  refused by us    %s\n", tallyLine(s.RefusedByUs))
	fmt.Fprintf(out, "  refused by them  %s\n", tallyLine(s.RefusedByServer))
	fmt.Fprintf(out, "  cooling down     %s\n", list(s.CooledDown))
	fmt.Fprintf(out, "  suspended        %s\n", list(s.Suspended))
	if st := s.Store; st != nil {
		fmt.Fprintf(out, "  store            %s: known from the store: %d references, %d deposits; this run: %d new deposits, %d × 304\n",
			st.Path, st.Known, st.Deposits, st.NewDeposits, s.FeedsNotModified)
		for _, f := range st.Forbidden {
			fmt.Fprintf(out, "                   disallowed by the robots.txt the store kept, yet asked: %s\n", f)
		}
		if st.RobotsExcused > 0 {
			fmt.Fprintf(out, "                   robots.txt of %d sites from the store, read and audited in an earlier run: this run's auditor never saw it asked\n", st.RobotsExcused)
		}
	}
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

func tallyLine(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	names = slices.Clone(names)
	sort.Strings(names)
	return fmt.Sprintf("%d: %s", len(names), strings.Join(names, ", "))
}
