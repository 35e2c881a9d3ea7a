package crawl

import (
	"context"
	"net/netip"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// The identity the tests' crawler announces: a preset has none of its own.
const (
	testName    = "PoliteCrawlTestBot"
	testVersion = "1"
	testInfoURL = "https://crawler.example/about"
	testContact = "bot@crawler.example"
)

// testInterval is the per-host interval of the tests: the presets' second
// scaled down so that a crawl of many hosts takes a moment.
const testInterval = 50 * time.Millisecond

var loopback = netip.MustParsePrefix("127.0.0.0/8")

// testPolicy returns the preset's fetch policy with the test identity and
// the interval scaled down (keeping a band where the preset has one).
func testPolicy(t testing.TB, p Preset, interval time.Duration) fetch.Policy {
	t.Helper()
	fp, err := PolicySpec{Preset: p}.Fetch()
	if err != nil {
		t.Fatal(err)
	}
	fp.Name, fp.Version, fp.InfoURL, fp.Contact = testName, testVersion, testInfoURL, testContact
	banded := fp.IntervalMax > fp.Interval
	fp.Interval, fp.IntervalMax = interval, 0
	if banded {
		fp.IntervalMax = interval * 2
	}
	return fp
}

// newClient builds the chain over web, with opts after the web's own.
func newClient(t testing.TB, web *politetest.Web, p fetch.Policy, opts ...fetch.Option) *fetch.Client {
	t.Helper()
	c, err := fetch.New(p, append([]fetch.Option{fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
		Allow: []netip.Prefix{loopback}})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// auditPolicy is what the auditor checks of a crawl under p.
func auditPolicy(p fetch.Policy) politetest.Policy {
	ap := politetest.Policy{
		Interval:     p.Interval,
		MaxInFlight:  1,
		StrictRobots: p.Robots.Status != 0,
		UserAgent:    regexp.MustCompile("^" + regexp.QuoteMeta(p.UserAgent()) + "$"),
		RobotsAgent:  p.Name,
		Slack:        politetest.Slack(p.Interval / 2),
		HTTPSOnly:    !p.AllowHTTP,
	}
	ap.AllowedHeaders = []string{"User-Agent", "Accept", "Accept-Encoding"}
	if !p.NoConditional {
		ap.AllowedHeaders = append(ap.AllowedHeaders, "If-None-Match", "If-Modified-Since")
	}
	return ap
}

// siteSource is the source of one politetest site: its RSS feed, its
// WordPress backlog when backlog is set, full text, under preset.
func siteSource(site string, preset Preset, backlog bool) Source {
	s := Source{
		ID:       site,
		Name:     site,
		Trigger:  Trigger{Feeds: []string{"https://" + site + "/feed.xml"}},
		Admitted: []string{site},
		FullText: true,
		Policy:   PolicySpec{Preset: preset},
		Active:   true,
	}
	if backlog {
		s.Backlog = &Backlog{Kind: BacklogWordPress, Site: "https://" + site, PerPage: 5}
	}
	return s
}

// events collects a crawler's events.
type events struct {
	mu  sync.Mutex
	all []Event
}

func (e *events) on(ev Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) of(kind EventKind) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for _, ev := range e.all {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func mustPass(t *testing.T, c *Crawler, id string) *PassReport {
	t.Helper()
	rep, err := c.Pass(context.Background(), id)
	if err != nil {
		t.Fatalf("Pass(%s): %v", id, err)
	}
	return rep
}

func audit(t *testing.T, web *politetest.Web, p fetch.Policy) {
	t.Helper()
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Fatalf("auditor: %v", rep)
	}
}
