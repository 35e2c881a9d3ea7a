package feed_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// Reading a feed through the fetch client's Doer for feeds: robots.txt,
// pacing and the refusal ledger apply, and the chain's conditional GET makes
// the second read a 304, which costs no parse (D4). Trigger mode (V1) keeps
// references only. The simulated web stands in for the publisher.
func ExampleReader_Read() {
	web, err := politetest.Start()
	if err != nil {
		panic(err)
	}
	defer web.Close()
	site := web.Site("news.example")
	site.AddArticle(politetest.Article{ID: 123, Published: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)})

	pol := fetch.StrictNews()
	pol.Name, pol.Version, pol.InfoURL = "ExampleBot", "1.0", "https://crawler.example/about"
	pol.Interval = 10 * time.Millisecond // the document says 1 s; shortened for the example
	c, err := fetch.New(pol,
		fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
			Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})) // the simulated web is on loopback
	if err != nil {
		panic(err)
	}
	defer c.Close()

	parses := 0
	r := &feed.Reader{Client: c.Doer(fetch.KindFeed), RefsOnly: true, OnParse: func(string) { parses++ }}
	ctx := context.Background()
	res, err := r.Read(ctx, site.URL("/feed.xml"))
	if err != nil {
		panic(err)
	}
	for _, it := range res.Feed.Items {
		ref := it.Ref()
		fmt.Printf("id=%s published=%v title=%q\n", ref.ID, ref.Published, it.Title)
	}
	res, err = r.Read(ctx, site.URL("/feed.xml"))
	if err != nil {
		panic(err)
	}
	fmt.Println("not modified:", res.NotModified, "parses:", parses)
	// Output:
	// id=123 published=2026-11-30 08:00:00 +0000 UTC title=""
	// not modified: true parses: 1
}
