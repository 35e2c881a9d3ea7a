package politetest_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// Serve a web and fetch from it: a site with one article, read through the
// web's own client (its CA, its dialer; nothing leaves loopback).
func Example() {
	w, err := politetest.Start()
	if err != nil {
		panic(err)
	}
	defer w.Close()

	site := w.Site("news-17.example")
	a := site.AddArticle(politetest.Article{Title: "Hello, web"})
	site.Misbehave("/late.xml", politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: 2 * time.Minute})

	c := w.Client()
	for _, path := range []string{"/robots.txt", "/feed.xml", a.Path, "/late.xml"} {
		resp, err := c.Get(w.URL("news-17.example", path))
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(path, resp.StatusCode, resp.Header.Get("Content-Type"))
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			fmt.Println("  Retry-After:", ra)
		}
	}
	r := w.Requests()[2]
	fmt.Println(r.Host, r.SNI, r.Method, r.Target, r.Status)
	// Output:
	// /robots.txt 200 text/plain; charset=utf-8
	// /feed.xml 200 application/rss+xml; charset=utf-8
	// /2026/01/01/article-1/ 200 text/html; charset=utf-8
	// /late.xml 429 text/html; charset=utf-8
	//   Retry-After: 120
	// news-17.example news-17.example GET /2026/01/01/article-1/ 200
}

// Audit a client: this one skips robots.txt, sends Go's default identity and
// a cookie, and asks twice at once.
func ExampleWeb_Audit() {
	w, err := politetest.Start()
	if err != nil {
		panic(err)
	}
	defer w.Close()
	w.Site("news-1.example")

	c := &http.Client{Transport: w.Transport()}
	for range 2 {
		req, _ := http.NewRequest("GET", w.URL("news-1.example", "/feed.xml"), nil)
		req.Header.Set("Cookie", "session=1")
		resp, err := c.Do(req)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body) // read to the end: the connection is reused
		resp.Body.Close()
	}

	rep := w.Audit(politetest.Policy{
		Interval:       time.Second,
		AllowedHeaders: []string{"User-Agent", "Accept", "Accept-Encoding"},
		UserAgent:      regexp.MustCompile(`^PoliteBot/`),
	})
	fmt.Println("OK:", rep.OK())
	for _, rule := range politetest.Rules() {
		if n := rep.Count(rule); n > 0 {
			fmt.Printf("%s: %d\n", rule, n)
		}
	}
	fmt.Println(rep.Of(politetest.RuleUserAgent)[0].Detail)
	// Output:
	// OK: false
	// robots-first: 2
	// interval: 1
	// user-agent: 2
	// cookie: 2
	// anonymous User-Agent "Go-http-client/1.1"
}

// Build a scenario: a whole web from a few numbers, the same for the same
// seed, and a description to assert on.
func ExampleScenario() {
	w, err := politetest.Start()
	if err != nil {
		panic(err)
	}
	defer w.Close()

	info, err := politetest.Scenario{
		Hosts: 6, ArticlesPerHost: 4, RudeShare: 0.5, Seed: 7,
		RobotsMix: politetest.RobotsMix{CrawlDelay: 0.5},
	}.Build(w)
	if err != nil {
		panic(err)
	}
	fmt.Print(info)
	fmt.Println(len(info.Rude()), "rude;", len(w.Site("news-6.example").Articles()), "articles on news-6.example")
	// Output:
	// news-1.example         4 articles  robots=allow-all
	// news-2.example         4 articles  robots=crawl-delay (crawl-delay 1s)
	// news-3.example         4 articles  robots=allow-all  RUDE: challenge
	// news-4.example         4 articles  robots=allow-all
	// news-5.example         4 articles  robots=allow-all  RUDE: challenge
	// news-6.example         4 articles  robots=allow-all  RUDE: 503
	// 3 rude; 4 articles on news-6.example
}
