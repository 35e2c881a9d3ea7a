package feed

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxPageBytes bounds an HTML page read for feed discovery.
const maxPageBytes = 4 << 20

// feedTypes are the media types a <link rel="alternate"> names for a feed.
var feedTypes = map[string]string{
	"application/rss+xml":   "rss",
	"application/atom+xml":  "atom",
	"application/feed+json": "json",
	"application/json":      "json",
	"application/rdf+xml":   "rss",
}

// Link is a feed an HTML page announces.
type Link struct {
	URL   string // absolute
	Type  string // the media type as written, lower-cased
	Title string
}

// DiscoverLinks returns the feeds an HTML page announces with <link
// rel="alternate"> of type application/rss+xml, atom+xml, rdf+xml, feed+json
// or json, in page order, without duplicates: each resolved against base (nil:
// only absolute links count) and the page's first http(s) <base href>, and
// cleaned of tracking parameters. It reads only the document given, with
// golang.org/x/net/html (the parser package extract uses); it never panics.
func DiscoverLinks(base *url.URL, page []byte) ([]Link, error) {
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		return nil, &ParseError{URL: urlString(base), Format: "html", Err: err}
	}
	var links []Link
	seen := map[string]bool{}
	cleaner := newLinkCleaner(nil)
	based := false
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if depth > 512 {
			return
		}
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Base:
				// The first <base href> counts, as in browsers; one that is
				// not http(s) is ignored.
				if h := attr(n, "href"); h != "" && !based {
					based = true
					if u, err := resolve(base, h); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
						base = u
					}
				}
			case atom.Link:
				rels := strings.Fields(strings.ToLower(attr(n, "rel")))
				typ := strings.ToLower(strings.TrimSpace(attr(n, "type")))
				if i := strings.IndexByte(typ, ';'); i >= 0 {
					typ = strings.TrimSpace(typ[:i])
				}
				if slices.Contains(rels, "alternate") && feedTypes[typ] != "" {
					if u := cleaner.link(base, attr(n, "href")); u != "" && !seen[u] {
						seen[u] = true
						links = append(links, Link{URL: u, Type: typ, Title: clean(attr(n, "title"))})
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(doc, 0)
	return links, nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val
		}
	}
	return ""
}

// resolve parses ref against base (nil: ref as it stands).
func resolve(base *url.URL, ref string) (*url.URL, error) {
	if base == nil {
		return url.Parse(strings.TrimSpace(ref))
	}
	return base.Parse(strings.TrimSpace(ref))
}

func urlString(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.String()
}

// Discover reads the HTML page at pageURL through c and returns the feeds it
// announces (see [DiscoverLinks]). A page is not a feed: give it the fetch
// client's Doer for pages, client.Doer(fetch.KindArticle), so a host
// suspended for its articles is not asked for its pages either.
func Discover(ctx context.Context, c Doer, pageURL string) ([]Link, error) {
	resp, err := get(ctx, c, pageURL, http.Header{"Accept": {"text/html"}}, maxPageBytes)
	if err != nil {
		return nil, err
	}
	if resp.status != http.StatusOK {
		return nil, &StatusError{URL: pageURL, StatusCode: resp.status, RetryAfter: resp.header.Get("Retry-After")}
	}
	links, err := DiscoverLinks(resp.url, resp.body)
	if err != nil {
		return nil, fmt.Errorf("feed: discover %s: %w", pageURL, err)
	}
	return links, nil
}
