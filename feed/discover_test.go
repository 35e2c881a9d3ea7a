package feed

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDiscover finds the feeds an HTML page announces.
func TestDiscover(t *testing.T) {
	t.Parallel()
	s := newTestSite(t)
	s.file("/", "pages/alternate.html", "text/html", false)
	links, err := Discover(context.Background(), s.client(), s.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Link{
		{URL: s.url("/news/feed.xml"), Type: "application/rss+xml", Title: "RSS"},
		{URL: "https://other.test/atom.xml", Type: "application/atom+xml"},
		{URL: s.url("/feed.json"), Type: "application/feed+json"},
	}
	if len(links) != len(want) {
		t.Fatalf("got %d links %v, want %d", len(links), links, len(want))
	}
	for i := range want {
		if links[i] != want[i] {
			t.Errorf("link %d = %+v, want %+v", i, links[i], want[i])
		}
	}
}

// TestDiscoverLinks_Hostile: a hostile page announces nothing it should not:
// a javascript: <base> is ignored, links that are not http(s) are dropped,
// tracking parameters and fragments are stripped, and a link deep in the body
// still counts.
func TestDiscoverLinks_Hostile(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join("testdata", "pages", "hostile.html"))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("https://example.test/news/page.html")
	links, err := DiscoverLinks(base, page)
	if err != nil {
		t.Fatal(err)
	}
	want := []Link{
		{URL: "https://cdn.example.test/feed.rss", Type: "application/rss+xml"},
		{URL: "https://example.test/rdf", Type: "application/rdf+xml"},
	}
	if !slices.Equal(links, want) {
		t.Errorf("links %+v, want %+v", links, want)
	}
}
