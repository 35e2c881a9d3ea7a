package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// A service adopting the client: a preset policy, one Get, and the two kinds of
// answer — a Result from the server, or our own typed refusal. The simulated web
// stands in for the publishers.
func Example() {
	web, err := politetest.Start()
	if err != nil {
		panic(err)
	}
	defer web.Close()
	site := web.Site("news.example")
	site.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /private/\n"})
	article := site.AddArticle(politetest.Article{})

	pol := fetch.Vault() // a policy; the identity is yours to give
	pol.Name, pol.Version = "ExampleConnector", "1.0"
	pol.InfoURL, pol.Contact = "https://connector.example/about", "crawler@connector.example"
	pol.Interval = 10 * time.Millisecond // the document says 1 s; shortened for the example
	c, err := fetch.New(pol,
		fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
			Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})) // the simulated web is on loopback
	if err != nil {
		panic(err)
	}
	defer c.Close()

	ctx := context.Background()
	res, err := c.Get(ctx, site.URL(article.Path)+"?utm_source=newsletter")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.MediaType, res.Complete(), res.URL == site.URL(article.Path))
	fmt.Println(res.Proof.Hops[0].SNI, res.Proof.Hops[0].TLSVersion)

	_, err = c.Get(ctx, site.URL("/private/page"))
	var refused *fetch.RefusedError
	if errors.As(err, &refused) {
		fmt.Println("refused:", refused.Reason, errors.Is(err, fetch.ErrRobots))
	}
	// Output:
	// 200 text/html true true
	// news.example TLS 1.3
	// refused: robots true
}

// Why a URL may or may not be read now, without reading it: robots.txt's rule
// and its line, and the URL as it would be requested.
func ExampleClient_Explain() {
	web, err := politetest.Start()
	if err != nil {
		panic(err)
	}
	defer web.Close()
	site := web.Site("news.example")
	site.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /private/\n"})

	pol := fetch.StrictNews()
	pol.Name, pol.Version, pol.InfoURL = "ExampleBot", "1.0", "https://crawler.example/about"
	c, err := fetch.New(pol,
		fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
			Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	if err != nil {
		panic(err)
	}
	defer c.Close()

	e, err := c.Explain(context.Background(), site.URL("/private/draft?utm_source=mail"))
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Allowed, e.Refusal.Reason, e.URL)
	fmt.Printf("%s (line %d, group %q)\n", e.Robots.Rule, e.Robots.Line, e.Robots.Group)
	// Output:
	// false robots https://news.example/private/draft
	// Disallow: /private/ (line 2, group "*")
}
