package robots_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

func ExampleParse() {
	rules := robots.Parse([]byte(`
User-agent: *
Disallow: /search
Crawl-delay: 2

User-agent: ExampleBot
Disallow: /drafts/
Allow: /drafts/public$

Sitemap: https://news.example/sitemap.xml
`))
	ua := "ExampleBot/1.0 (+https://example.org/bot)"
	fmt.Println(rules.Allowed(ua, "/search?q=x"))
	fmt.Println(rules.Allowed(ua, "https://news.example/drafts/1"))
	fmt.Println(rules.Allowed(ua, "/drafts/public"))
	fmt.Println(rules.Allowed("OtherBot", "/search?q=x"))
	d := rules.Explain(ua, "/drafts/1")
	fmt.Printf("group %q, rule %q, line %d\n", d.Group, d.Rule, d.Line)
	fmt.Println(rules.CrawlDelay("OtherBot"))
	fmt.Println(rules.Sitemaps())
	// Output:
	// true
	// false
	// true
	// false
	// group "ExampleBot", rule "Disallow: /drafts/", line 7
	// 2s true
	// [https://news.example/sitemap.xml]
}

func ExampleStatusPolicy_Decide() {
	for _, st := range []int{200, 403, 404, 429, 503} {
		fmt.Println(st, robots.RFC9309.Decide(st, nil), robots.Strict.Decide(st, nil))
	}
	fmt.Println("unreachable", robots.RFC9309.Decide(0, errors.New("dial tcp: connection refused")))
	// Output:
	// 200 parse-body parse-body
	// 403 allow-all disallow-all
	// 404 allow-all allow-all
	// 429 allow-all disallow-all
	// 503 disallow-all disallow-all
	// unreachable disallow-all
}

func ExampleCache() {
	web, err := politetest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer web.Close()
	web.Site("news.example").SetRobots(politetest.Robots{Body: "User-agent: ExampleBot\nDisallow: /members/\n"})
	web.Site("down.example").SetRobots(politetest.Robots{Status: 503})

	c := &robots.Cache{
		Transport: web.Transport(), // in a crawler: the fetch chain below the robots gate
		UserAgent: "ExampleBot/1.0 (+https://example.org/bot)",
		Policy:    robots.Vault(),
	}
	ctx := context.Background()
	for _, s := range []string{"https://news.example/feed.xml", "https://news.example/members/1", "https://down.example/feed.xml"} {
		u, _ := url.Parse(s)
		err := c.Allow(ctx, u)
		var re *robots.DisallowedError
		switch {
		case err == nil:
			fmt.Println(s, "allowed")
		case errors.As(err, &re) && re.Rule != "":
			fmt.Println(s, "refused by", re.Rule)
		case errors.As(err, &re):
			fmt.Println(s, "refused:", re.Outcome, re.Status)
		}
	}
	// Output:
	// https://news.example/feed.xml allowed
	// https://news.example/members/1 refused by Disallow: /members/
	// https://down.example/feed.xml refused: disallow-all 503
}
