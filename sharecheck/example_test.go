package sharecheck_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/sharecheck"
)

func ExampleChecker_Check() {
	web, _ := politetest.Start()
	defer web.Close()
	site := web.Site("news.example")

	pol := fetch.StrictNews()
	pol.Name, pol.Version, pol.InfoURL = "ExampleNewsBot", "1", "https://crawler.example/about"
	pol.Interval = 50 * time.Millisecond // the policy's 1 s, scaled down for the example
	client, err := fetch.New(pol, fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext,
		RootCAs: web.RootCAs(), Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	check := &sharecheck.Checker{Client: client}

	story := site.URL("/2026/12/01/story")
	for _, img := range []string{"/images/1.jpg", "/images/fake-1.jpg"} {
		res := check.Check(context.Background(), sharecheck.Image{URL: img, Page: story, Credit: "Photo: A. Lens"})
		if res.Usable() {
			fmt.Println("use", res.MediaType, res.Width, "×", res.Height, "credit", res.Credit)
		} else {
			fmt.Println("skip:", res.Err.(*sharecheck.UnusableError).Reason)
		}
	}
	// Output:
	// use image/jpeg 16 × 9 credit Photo: A. Lens
	// skip: not an image
}
