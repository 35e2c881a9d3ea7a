package crawl_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// A crawler over two sources of a simulated web: one read in full, one
// without a full-text licence, kept as its feed's excerpts.
func ExampleCrawler() {
	web, err := politetest.Start()
	if err != nil {
		panic(err)
	}
	defer web.Close()
	for _, name := range []string{"daily.example", "weekly.example"} {
		site := web.Site(name)
		for range 3 {
			site.AddArticle(politetest.Article{})
		}
	}

	pol := fetch.StrictNews()
	pol.Name, pol.Version, pol.InfoURL = "ExampleBot", "1", "https://crawler.example/about"
	pol.Interval = 10 * time.Millisecond // the simulated web's scale; the preset asks for 1 s
	client, err := fetch.New(pol, fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext,
		RootCAs: web.RootCAs(), Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	if err != nil {
		panic(err)
	}
	defer client.Close()

	c := &crawl.Crawler{
		Client: client,
		Sources: []crawl.Source{{
			ID: "daily", Name: "The Daily",
			Trigger:  crawl.Trigger{Feeds: []string{"https://daily.example/feed.xml"}},
			Backlog:  &crawl.Backlog{Kind: crawl.BacklogWordPress, Site: "https://daily.example"},
			Admitted: []string{"daily.example"},
			FullText: true,
			Policy:   crawl.PolicySpec{Preset: crawl.StrictNews},
			Active:   true,
		}, {
			ID: "weekly", Name: "The Weekly",
			Trigger:  crawl.Trigger{Feeds: []string{"https://weekly.example/feed.xml"}},
			Admitted: []string{"weekly.example"},
			Policy:   crawl.PolicySpec{Preset: crawl.StrictNews},
			Active:   true,
		}},
	}
	// One pass of each source; Run(ctx) would go on at each source's
	// interval until ctx ends.
	reports, err := c.RunOnce(context.Background())
	if err != nil {
		panic(err)
	}
	for _, r := range reports {
		fmt.Printf("%s: %d deposited, %d excerpts\n", r.Source, r.Deposited, r.Excerpted)
	}
	// A refresh right after a read is declined (S2).
	_, err = c.Refresh(context.Background(), "daily")
	fmt.Println(errors.Is(err, crawl.ErrRefreshDeclined))
	// Output:
	// daily: 3 deposited, 0 excerpts
	// weekly: 0 deposited, 3 excerpts
	// true
}

// An invalid source says which field is at fault.
func ExampleSource_Validate() {
	s := crawl.Source{
		ID: "daily", Name: "The Daily",
		Trigger:  crawl.Trigger{Feeds: []string{"http://daily.example/feed.xml"}},
		Admitted: []string{"daily.example"},
		Policy:   crawl.PolicySpec{Preset: crawl.StrictNews},
	}
	var se *crawl.SourceError
	if err := s.Validate(); errors.As(err, &se) {
		fmt.Println(se.Field)
		fmt.Println(err)
	}
	// Output:
	// trigger.feeds[0]
	// crawl: invalid source daily: trigger.feeds[0]: "http://daily.example/feed.xml": https only
}
