package sqlite

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// v12Crawler is a crawler of one site's source over web, keeping its state
// in state and its deposits in deps, under the vault policy.
func v12Crawler(t *testing.T, web *politetest.Web, site string, state, deps *DB, onEvent func(crawl.Event)) *crawl.Crawler {
	t.Helper()
	p, err := crawl.PolicySpec{Preset: crawl.Vault}.Fetch()
	if err != nil {
		t.Fatal(err)
	}
	p.Name, p.Version, p.InfoURL, p.Contact = "V12TestBot", "1", "https://crawler.example/about", "bot@crawler.example"
	p.Interval, p.IntervalMax, p.Timeout = 20*time.Millisecond, 0, 5*time.Second
	client, err := fetch.New(p, fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return &crawl.Crawler{Client: client, State: state.CrawlState(), Deposits: deps.Deposits(), OnEvent: onEvent,
		Sources: []crawl.Source{{
			ID: site, Name: site, Trigger: crawl.Trigger{Feeds: []string{"https://" + site + "/feed.xml"}},
			Admitted: []string{site}, FullText: true, Policy: crawl.PolicySpec{Preset: crawl.Vault}, Active: true,
		}}}
}

func articleReads(web *politetest.Web, site *politetest.Site) int {
	paths := map[string]bool{}
	for _, a := range site.Articles() {
		paths[a.Path] = true
	}
	n := 0
	for _, r := range web.Requests() {
		if r.Host == site.Name() && paths[r.Path] {
			n++
		}
	}
	return n
}

// TestCrawl_V12_TenFailedDepositsStopThePass: with the deposits in a file
// that is full (its size capped at what it holds, PRAGMA max_page_count),
// every deposit fails with ErrFull, and after ten in a row the pass stops,
// having read no article past the tenth. Once the file has room, the next
// pass deposits all fifteen: nothing was lost (V12, document 003).
func TestCrawl_V12_TenFailedDepositsStopThePass(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("full.example")
	for range 15 {
		site.AddArticle(politetest.Article{})
	}
	dir := t.TempDir()
	state, err := Open(ctx, filepath.Join(dir, "state.db"), &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer state.Close()
	deps, err := Open(ctx, filepath.Join(dir, "deposits.db"), &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer deps.Close()
	var pages int
	if err := deps.w.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := deps.w.Exec(fmt.Sprintf("PRAGMA max_page_count=%d", pages)); err != nil {
		t.Fatal(err)
	}
	// What room the capped pages still have is filled, with ever smaller
	// deposits of another source, until not even the smallest fits.
	filled := 0
	for _, size := range []int{4096, 1024, 256, 64, 16} {
		for {
			d := &crawl.Deposit{Source: "filler", Key: fmt.Sprint(filled), URL: "https://filler.example/", ReadAt: time.Now(),
				Envelope: bytes.Repeat([]byte{byte(filled)}, size)}
			d.Digest = d.Sum()
			if _, err := deps.Deposits().Put(ctx, d); err != nil {
				if !errors.Is(err, ErrFull) {
					t.Fatal(err)
				}
				break
			}
			filled++
		}
	}
	var failures []error
	stopped := 0
	c := v12Crawler(t, web, site.Name(), state, deps, func(e crawl.Event) {
		switch e.Kind {
		case crawl.EventFailed:
			failures = append(failures, e.Err) // the depositor's goroutine alone
		case crawl.EventPassStopped:
			stopped++
		}
	})
	rep, err := c.Pass(ctx, site.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Stopped || rep.Failed != 10 || rep.Deposited != 0 || stopped != 1 {
		t.Fatalf("pass over a full deposit file: %+v (%d stop events), want stopped after 10 failed deposits", rep, stopped)
	}
	if n := articleReads(web, site); n != 10 {
		t.Fatalf("%d articles read, want 10: none past the tenth failure", n)
	}
	for _, err := range failures {
		if !errors.Is(err, ErrFull) {
			t.Fatalf("a failure %v, want the deposit file's ErrFull", err)
		}
	}
	if _, err := deps.w.Exec("PRAGMA max_page_count=1073741823"); err != nil {
		t.Fatal(err)
	}
	rep, err = c.Pass(ctx, site.Name())
	if err != nil || rep.Stopped || rep.Deposited != 15 {
		t.Fatalf("pass once the file has room: %+v, %v; want all 15 deposited", rep, err)
	}
}

// TestCrawl_V12_PublishersFailuresDoNotStopThePass: fifteen articles
// answered 500, over a real file, are each failed, and the pass reads them
// all: the publisher's answers are not our deposit failures (V12).
func TestCrawl_V12_PublishersFailuresDoNotStopThePass(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("broken.example")
	for range 15 {
		a := site.AddArticle(politetest.Article{})
		site.Misbehave(a.Path, politetest.Behaviour{Kind: politetest.ServerError})
	}
	db := openTest(t, nil)
	c := v12Crawler(t, web, site.Name(), db, db, nil)
	rep, err := c.Pass(ctx, site.Name())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stopped || rep.Failed != 15 || rep.Deposited != 0 {
		t.Fatalf("pass over 15 answers of 500: %+v, want 15 failed, not stopped", rep)
	}
	if n := articleReads(web, site); n != 15 {
		t.Fatalf("%d articles read, want all 15", n)
	}
}
