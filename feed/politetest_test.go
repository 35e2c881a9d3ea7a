package feed

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// politeDoer is a minimal polite client for feed's own tests, independent
// of package fetch: per host it reads robots.txt first, keeps one request in
// flight, and starts requests at least interval apart. (It does not parse
// robots.txt: the sites it is used on allow everything.)
type politeDoer struct {
	c        *http.Client
	ua       string
	interval time.Duration

	mu    sync.Mutex
	hosts map[string]*politeHost
}

type politeHost struct {
	mu     sync.Mutex
	robots bool
	last   time.Time
}

func newPoliteDoer(web *politetest.Web, interval time.Duration) *politeDoer {
	tr := web.Transport()
	tr.MaxConnsPerHost = 1
	return &politeDoer{c: &http.Client{Transport: tr}, ua: "FeedTestBot/1 (+https://crawler.example/about)", interval: interval, hosts: map[string]*politeHost{}}
}

func (d *politeDoer) host(h string) *politeHost {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hosts[h] == nil {
		d.hosts[h] = &politeHost{}
	}
	return d.hosts[h]
}

// wait holds until the host's interval has passed since its last start.
func (d *politeDoer) wait(ctx context.Context, h *politeHost) error {
	if !h.last.IsZero() {
		if gap := time.Until(h.last.Add(d.interval)); gap > 0 {
			t := time.NewTimer(gap)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	h.last = time.Now()
	return nil
}

// send sends req with the identity; the interval then runs from when the
// answer's headers arrived (arrival times at the server lag our send times by
// a TLS handshake on a new connection).
func (d *politeDoer) send(h *politeHost, req *http.Request) (*http.Response, error) {
	req.Header.Set("User-Agent", d.ua)
	resp, err := d.c.Do(req)
	h.last = time.Now()
	return resp, err
}

// Do sends req politely. The host stays locked until the body is read, as
// feed's reads are sequential and read every body in full before the next.
func (d *politeDoer) Do(req *http.Request) (*http.Response, error) {
	h := d.host(req.URL.Host)
	h.mu.Lock()
	defer h.mu.Unlock()
	ctx := req.Context()
	if !h.robots {
		if err := d.wait(ctx, h); err != nil {
			return nil, err
		}
		rr, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+req.URL.Host+"/robots.txt", nil)
		resp, err := d.send(h, rr)
		if err != nil {
			return nil, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		h.robots = true
	}
	if err := d.wait(ctx, h); err != nil {
		return nil, err
	}
	return d.send(h, req)
}

// TestPolitetest_V3_V4_D4 reads a simulated publisher through a polite
// client: the feed twice (the second read a 304 without a parse, D4), the
// WordPress backlog with a known set (V4), and the sitemaps named in
// robots.txt. Identifiers agree between feed and API (V3), and the auditor
// reports zero violations.
func TestPolitetest_V3_V4_D4(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("news-1.example")
	const n = 25
	for i := range n {
		// One article every 6 hours, the newest 1 hour before fixedNow.
		site.AddArticle(politetest.Article{ID: 100 + i, Published: fixedNow.Add(-time.Hour - time.Duration(n-1-i)*6*time.Hour)})
	}
	const interval = 100 * time.Millisecond // arrival stamps can lag tens of ms on a loaded machine
	doer := newPoliteDoer(web, interval)
	ctx := context.Background()

	parses := 0
	r := &Reader{Client: doer, RefsOnly: true, OnParse: func(string) { parses++ }}
	first, err := r.Read(ctx, site.URL("/feed.xml"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Read(ctx, site.URL("/feed.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if first.NotModified || !second.NotModified || parses != 1 {
		t.Errorf("feed reads: NotModified %v then %v, parses %d; want false, true, 1", first.NotModified, second.NotModified, parses)
	}
	feedIDs := map[string]string{} // link → id
	for _, it := range first.Feed.Items {
		feedIDs[it.Link] = it.ID
	}
	if len(feedIDs) == 0 {
		t.Fatal("feed has no items")
	}

	// The walk: articles older than 48 h (ids 100..116) are known.
	var known KnownSet
	for i := range 17 {
		known.Add(Ref{ID: strconv.Itoa(100 + i)})
	}
	wp := &APIWalker{Client: doer, Spec: WordPress(site.URL(""), 5)}
	var got []string
	for ref, err := range wp.Walk(ctx, Stop{Known: &known, Now: fixedNow}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ref.ID)
		if id, ok := feedIDs[ref.URL]; ok && id != ref.ID {
			t.Errorf("V3: %s has id %q in the feed and %q in the API", ref.URL, id, ref.ID)
		}
	}
	// Newest first: 124..117 unknown (the last 48 h hold 124..117), then
	// page 4 (ids 109..105) wholly known and old: the walk stops there.
	var want []string
	for id := 124; id >= 117; id-- {
		want = append(want, strconv.Itoa(id))
	}
	if !slices.Equal(got, want) {
		t.Errorf("walk ids %v, want %v", got, want)
	}
	pages := 0
	for _, q := range web.Requests() {
		if q.Path == "/wp-json/wp/v2/posts" {
			pages++
		}
	}
	if pages != 3 {
		t.Errorf("API pages read %d, want 3 (the third wholly known beyond 48 h)", pages)
	}

	sm := &SitemapWalker{Client: doer, Site: site.URL("")}
	count := 0
	for ref, err := range sm.Walk(ctx, Stop{Now: fixedNow}) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := feedIDs[ref.URL]; !ok && count < 5 {
			t.Logf("sitemap ref not in feed: %s", ref.URL)
		}
		count++
	}
	if count != n {
		t.Errorf("sitemap walk yielded %d refs, want %d", count, n)
	}

	if rep := web.Audit(politetest.Policy{Interval: interval, Slack: auditSlack(interval)}); !rep.OK() {
		t.Fatal(rep)
	}
}

// auditSlack is the auditor's tolerance: politetest.ExactSlack where starts
// are kernel stamps, else half the interval (see politetest.Slack).
func auditSlack(interval time.Duration) time.Duration { return politetest.Slack(interval / 2) }
