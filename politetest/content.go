package politetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// feedSize is how many of the newest articles the feeds carry.
const feedSize = 50

// builtin routes a request to the site's own parts.
func (s *Site) builtin(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/":
		if id, err := strconv.Atoi(r.URL.Query().Get("p")); err == nil {
			if a, ok := s.articleByID(id); ok {
				http.Redirect(w, r, a.Path, http.StatusMovedPermanently)
				return
			}
		}
		s.serveHome(w, r)
	case p == "/feed.xml":
		s.serveRSS(w, r)
	case p == "/atom.xml":
		s.serveAtom(w, r)
	case p == "/sitemap_index.xml":
		s.serveSitemapIndex(w, r)
	case p == "/sitemap.xml":
		s.serveSitemap(w, r)
	case p == "/news-sitemap.xml":
		s.serveNewsSitemap(w, r)
	case p == "/wp-json/wp/v2/posts" || strings.HasPrefix(p, "/wp-json/wp/v2/posts/"):
		s.serveWP(w, r)
	case strings.HasPrefix(p, "/images/"):
		s.web.serveImage(w, r)
	default:
		if a, ok := s.articleAt(p); ok {
			s.serveArticle(w, r, a)
			return
		}
		http.Error(w, "404 page not found", http.StatusNotFound)
	}
}

// etagOf returns a strong entity tag for body.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:10]) + `"`
}

// serveConditional answers with body, its ETag and Last-Modified, or with a
// 304 Not Modified when If-None-Match (checked first, weak comparison) or
// else If-Modified-Since says the client has it.
func serveConditional(w http.ResponseWriter, r *http.Request, ctype string, body []byte, modified time.Time) {
	etag := etagOf(body)
	h := w.Header()
	h.Set("ETag", etag)
	if !modified.IsZero() {
		h.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
	}
	if notModified(r, etag, modified) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

func notModified(r *http.Request, etag string, modified time.Time) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == etag {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" && !modified.IsZero() {
		if t, err := http.ParseTime(ims); err == nil {
			return !modified.Truncate(time.Second).After(t)
		}
	}
	return false
}

// lastModified is the newest modification among as, or articleEpoch.
func lastModified(as []Article) time.Time {
	m := articleEpoch
	for _, a := range as {
		if a.Modified.After(m) {
			m = a.Modified
		}
	}
	return m
}

func xmlEsc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

func newest(as []Article, n int) []Article {
	if len(as) > n {
		return as[:n]
	}
	return as
}

func (s *Site) serveHome(w http.ResponseWriter, r *http.Request) {
	as := s.Articles()
	e := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n", e(s.name))
	b.WriteString("<link rel=\"alternate\" type=\"application/rss+xml\" href=\"/feed.xml\">\n")
	b.WriteString("<link rel=\"alternate\" type=\"application/atom+xml\" href=\"/atom.xml\">\n")
	b.WriteString("<link rel=\"https://api.w.org/\" href=\"/wp-json/\">\n</head>\n<body>\n<ul>\n")
	for _, a := range newest(as, feedSize) {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", e(a.Path), e(a.Title))
	}
	b.WriteString("</ul>\n</body>\n</html>\n")
	serveConditional(w, r, "text/html; charset=utf-8", []byte(b.String()), lastModified(as))
}

func (s *Site) serveRSS(w http.ResponseWriter, r *http.Request) { s.serveFeedWith(w, r, nil) }

// feedItem is one item of an RSS feed: an article, under a link and a GUID
// that may not be its own.
type feedItem struct {
	a          Article
	link, guid string
}

// itemsFunc lists a feed's items for the site's newest articles.
type itemsFunc func(s *Site, as []Article) []feedItem

// ownItems is the honest feed: one item per article, its own link and GUID.
func ownItems(s *Site, as []Article) []feedItem {
	out := make([]feedItem, len(as))
	for i, a := range as {
		out[i] = feedItem{a: a, link: s.URL(a.Path), guid: a.GUID(s.name)}
	}
	return out
}

// duplicated lists each article copies times, its link as published, with
// tracking parameters, with a fragment and with the host in upper case, in
// turn; every copy keeps the article's GUID.
func duplicated(copies int) itemsFunc {
	return func(s *Site, as []Article) []feedItem {
		var out []feedItem
		for _, a := range as {
			link := s.URL(a.Path)
			variants := []string{link, link + "?utm_source=politetest&utm_medium=feed", link + "#comments",
				"https://" + strings.ToUpper(s.name) + a.Path}
			for i := range copies {
				out = append(out, feedItem{a: a, link: variants[i%len(variants)], guid: a.GUID(s.name)})
			}
		}
		return out
	}
}

// foreign lists, before the site's own items, items linking where a crawler
// of this site must not go: host, private, link-local and loopback
// addresses, other schemes, and a 16 KiB URL on the site itself.
func foreign(host string) itemsFunc {
	return func(s *Site, as []Article) []feedItem {
		links := []string{
			"https://" + host + "/news/borrowed/",
			"https://10.0.0.1/admin/",
			"https://169.254.169.254/latest/meta-data/",
			"https://127.0.0.1/news/",
			"https://localhost/news/",
			"javascript:alert(1)",
			"data:text/html,<p>politetest</p>",
			"ftp://" + s.name + "/news/article.txt",
			s.URL("/news/" + strings.Repeat("x", 16<<10) + "/"),
		}
		var out []feedItem
		for i, l := range links {
			a := Article{Title: "Elsewhere " + strconv.Itoa(i+1), Published: articleEpoch, Author: "Nobody",
				Section: "news", Summary: "A link a crawler of " + s.name + " does not follow."}
			out = append(out, feedItem{a: a, link: l, guid: "politetest-foreign-" + strconv.Itoa(i+1) + "@" + s.name})
		}
		return append(out, ownItems(s, as)...)
	}
}

// serveFeedWith serves the RSS feed of the site's newest articles, its items
// listed by items (nil: ownItems).
func (s *Site) serveFeedWith(w http.ResponseWriter, r *http.Request, items itemsFunc) {
	if items == nil {
		items = ownItems
	}
	as := s.Articles()
	mod := lastModified(as)
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:content="http://purl.org/rss/1.0/modules/content/">` + "\n<channel>\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<link>%s</link>\n", xmlEsc(s.name), xmlEsc(s.URL("/")))
	fmt.Fprintf(&b, "<description>News from %s</description>\n<language>en</language>\n", xmlEsc(s.name))
	fmt.Fprintf(&b, "<lastBuildDate>%s</lastBuildDate>\n", mod.Format(time.RFC1123Z))
	fmt.Fprintf(&b, "<atom:link href=\"%s\" rel=\"self\" type=\"application/rss+xml\"/>\n", xmlEsc(s.URL("/feed.xml")))
	for _, it := range items(s, newest(as, feedSize)) {
		a := it.a
		b.WriteString("<item>\n")
		fmt.Fprintf(&b, "<title>%s</title>\n<link>%s</link>\n", xmlEsc(a.Title), xmlEsc(it.link))
		fmt.Fprintf(&b, "<guid isPermaLink=\"false\">%s</guid>\n", xmlEsc(it.guid))
		fmt.Fprintf(&b, "<pubDate>%s</pubDate>\n", a.Published.Format(time.RFC1123Z))
		fmt.Fprintf(&b, "<dc:creator>%s</dc:creator>\n<category>%s</category>\n", xmlEsc(a.Author), xmlEsc(a.Section))
		fmt.Fprintf(&b, "<description>%s</description>\n", xmlEsc(a.Summary))
		if a.Image != "" {
			fmt.Fprintf(&b, "<enclosure url=\"%s\" length=\"0\" type=\"%s\"/>\n", xmlEsc(s.URL(a.Image)), imageType(a.Image))
		}
		b.WriteString("</item>\n")
	}
	b.WriteString("</channel>\n</rss>\n")
	serveConditional(w, r, "application/rss+xml; charset=utf-8", []byte(b.String()), mod)
}

func (s *Site) serveAtom(w http.ResponseWriter, r *http.Request) {
	as := s.Articles()
	mod := lastModified(as)
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en">` + "\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<id>%s</id>\n<updated>%s</updated>\n", xmlEsc(s.name), xmlEsc(s.URL("/")), mod.Format(time.RFC3339))
	fmt.Fprintf(&b, "<link rel=\"alternate\" href=\"%s\"/>\n<link rel=\"self\" href=\"%s\"/>\n", xmlEsc(s.URL("/")), xmlEsc(s.URL("/atom.xml")))
	for _, a := range newest(as, feedSize) {
		b.WriteString("<entry>\n")
		fmt.Fprintf(&b, "<title>%s</title>\n<id>%s</id>\n", xmlEsc(a.Title), xmlEsc(a.GUID(s.name)))
		fmt.Fprintf(&b, "<link rel=\"alternate\" href=\"%s\"/>\n", xmlEsc(s.URL(a.Path)))
		fmt.Fprintf(&b, "<link rel=\"enclosure\" href=\"%s\" type=\"%s\"/>\n", xmlEsc(s.URL(a.Image)), imageType(a.Image))
		fmt.Fprintf(&b, "<published>%s</published>\n<updated>%s</updated>\n", a.Published.Format(time.RFC3339), a.Modified.Format(time.RFC3339))
		fmt.Fprintf(&b, "<author><name>%s</name></author>\n<category term=\"%s\"/>\n", xmlEsc(a.Author), xmlEsc(a.Section))
		fmt.Fprintf(&b, "<summary>%s</summary>\n", xmlEsc(a.Summary))
		b.WriteString("</entry>\n")
	}
	b.WriteString("</feed>\n")
	serveConditional(w, r, "application/atom+xml; charset=utf-8", []byte(b.String()), mod)
}

func (s *Site) serveSitemapIndex(w http.ResponseWriter, r *http.Request) {
	mod := lastModified(s.Articles())
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, p := range []string{"/sitemap.xml", "/news-sitemap.xml"} {
		fmt.Fprintf(&b, "<sitemap><loc>%s</loc><lastmod>%s</lastmod></sitemap>\n", xmlEsc(s.URL(p)), mod.Format(time.RFC3339))
	}
	b.WriteString("</sitemapindex>\n")
	serveConditional(w, r, "application/xml; charset=utf-8", []byte(b.String()), mod)
}

func (s *Site) serveSitemap(w http.ResponseWriter, r *http.Request) {
	as := s.Articles()
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for _, a := range as {
		fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>%s</lastmod></url>\n", xmlEsc(s.URL(a.Path)), a.Modified.Format(time.RFC3339))
	}
	b.WriteString("</urlset>\n")
	serveConditional(w, r, "application/xml; charset=utf-8", []byte(b.String()), lastModified(as))
}

func (s *Site) serveNewsSitemap(w http.ResponseWriter, r *http.Request) {
	as := s.Articles()
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">` + "\n")
	for _, a := range newest(as, 1000) {
		fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>%s</lastmod>", xmlEsc(s.URL(a.Path)), a.Modified.Format(time.RFC3339))
		fmt.Fprintf(&b, "<news:news><news:publication><news:name>%s</news:name><news:language>%s</news:language></news:publication>", xmlEsc(s.name), xmlEsc(a.Lang))
		fmt.Fprintf(&b, "<news:publication_date>%s</news:publication_date><news:title>%s</news:title></news:news></url>\n", a.Published.Format(time.RFC3339), xmlEsc(a.Title))
	}
	b.WriteString("</urlset>\n")
	serveConditional(w, r, "application/xml; charset=utf-8", []byte(b.String()), lastModified(as))
}

func imageType(p string) string {
	switch {
	case strings.HasSuffix(p, ".png"):
		return "image/png"
	case strings.HasSuffix(p, ".gif"):
		return "image/gif"
	case strings.HasSuffix(p, ".webp"):
		return "image/webp"
	}
	return "image/jpeg"
}
