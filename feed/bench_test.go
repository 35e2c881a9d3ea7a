package feed

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// benchFeed is an RSS 2.0 feed of n items in the shape publishers send:
// a guid, a link with campaign parameters, a date, a description, a
// category and a media:content image.
func benchFeed(n int) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>News</title><link>https://news.example/</link><language>en</language>`)
	day := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for i := range n {
		fmt.Fprintf(&b, `<item><title>Story %d</title><link>https://news.example/2026/11/story-%d/?utm_source=rss&amp;utm_medium=feed</link>`+
			`<guid isPermaLink="false">https://news.example/?p=%d</guid><pubDate>%s</pubDate>`+
			`<description>The %d-th story of the day, told in two sentences. It goes on a little.</description><category>World</category>`+
			`<media:content url="https://news.example/img/%d.jpg" medium="image"/></item>`,
			i, i, 1000+i, day.Add(-time.Duration(i)*time.Hour).Format(time.RFC1123Z), i, i)
	}
	b.WriteString(`</channel></rss>`)
	return []byte(b.String())
}

// BenchmarkNormalize parses and normalises a 50-item feed, in full and in
// trigger mode.
func BenchmarkNormalize(b *testing.B) {
	data := benchFeed(50)
	base, _ := url.Parse("https://news.example/feed.xml")
	for _, refsOnly := range []bool{false, true} {
		b.Run(fmt.Sprint("refsOnly=", refsOnly), func(b *testing.B) {
			cfg := parseConfig{links: newLinkCleaner(nil), maxItems: DefaultMaxItems, refsOnly: refsOnly}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := normalize(data, base, cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSitemap parses a sitemap of 50,000 entries, the sitemaps.org
// limit for one file.
func BenchmarkSitemap(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range MaxSitemapURLs {
		fmt.Fprintf(&sb, "<url><loc>https://news.example/2026/11/story-%d/</loc><lastmod>2026-11-30T08:00:00Z</lastmod></url>", i)
	}
	sb.WriteString(`</urlset>`)
	data := []byte(sb.String())
	base, _ := url.Parse("https://news.example/sitemap.xml")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := parseSitemap(data, base, newLinkCleaner(nil), MaxSitemapURLs)
		if err != nil || len(d.entries) != MaxSitemapURLs {
			b.Fatal(err)
		}
	}
}

// BenchmarkLink cleans one absolute link with campaign parameters.
func BenchmarkLink(b *testing.B) {
	base, _ := url.Parse("https://news.example/feed.xml")
	c := newLinkCleaner(nil)
	b.ReportAllocs()
	for b.Loop() {
		if c.link(base, "https://news.example/2026/11/story/?utm_source=rss&utm_medium=feed&id=3") == "" {
			b.Fatal("dropped")
		}
	}
}
