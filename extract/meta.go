package extract

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The order of trust and the rules of the merge are the package doc's
// (doc.go, # Metadata).

// readMeta fills a's metadata from the parsed page. page may be nil, when
// URLs are kept as written.
func readMeta(doc *html.Node, page *url.URL, a *Article) {
	var p pageScan
	p.page = page
	p.scan(doc, false)

	c := newCands()
	p.readLD(c)
	p.readMetaTags(c)
	p.readMicrodata(c)
	p.readMarkup(c)
	p.readVisibleDates(c)
	p.readIDs(c)
	c.fill(a, p.self())
}

// pageScan holds what one walk of the tree found.
type pageScan struct {
	page     *url.URL
	htmlLang string
	metas    []metaTag
	links    []linkTag
	ldTexts  []string
	// scope is the first item of an Article type; itemAuthors are
	// itemprop=author elements outside any item.
	scope       *html.Node
	scopeType   string
	itemAuthors []*html.Node
	bodyClass   string
	drupalNodes []string
	crumb       string        // the section a breadcrumb trail in the markup names
	crumbRead   bool          // the first trail has been read
	times       []visibleDate // <time> elements
	bylines     []visibleDate // dates in bylines
}

type metaTag struct {
	attr    string // "property", "name" or "http-equiv", as written
	key     string // its value, lower case
	content string
}

type linkTag struct {
	rel      []string // lower case tokens
	href     string
	typ      string
	hreflang string
	text     string // an <a>'s text; "" for <link>
	anchor   bool
}

// scan walks the tree once. inScope says whether n is inside an
// itemscope (of any type) that is not the Article scope.
func (p *pageScan) scan(n *html.Node, inScope bool) {
	for ; n != nil; n = n.NextSibling {
		if n.Type == html.ElementNode {
			scoped := p.element(n, inScope)
			if n.DataAtom == atom.Script || n.DataAtom == atom.Style {
				continue
			}
			p.scan(n.FirstChild, inScope || scoped)
			continue
		}
		if n.FirstChild != nil {
			p.scan(n.FirstChild, inScope)
		}
	}
}

// element notes what n states; it reports whether n is an itemscope.
func (p *pageScan) element(n *html.Node, inScope bool) (scoped bool) {
	// One pass over the attributes for what any element may carry.
	var itemprop, itemtype, rel string
	for _, at := range n.Attr {
		if at.Namespace != "" {
			continue
		}
		switch at.Key {
		case "itemscope":
			scoped = true
		case "itemprop":
			itemprop = at.Val
		case "itemtype":
			itemtype = at.Val
		case "rel":
			rel = at.Val
		case "data-history-node-id":
			if len(p.drupalNodes) < maxLinkTags {
				p.drupalNodes = append(p.drupalNodes, strings.TrimSpace(at.Val))
			}
		}
	}
	p.bylineElement(n)
	if !p.crumbRead && (n.DataAtom == atom.Nav || n.DataAtom == atom.Ol || n.DataAtom == atom.Ul || n.DataAtom == atom.Div) && isBreadcrumb(n) {
		p.crumbRead = true
		p.crumb = p.breadcrumb(n)
	}
	switch n.DataAtom {
	case atom.Time:
		p.timeElement(n)
	case atom.Html:
		if p.htmlLang == "" {
			p.htmlLang = collapse(attrOf(n, "lang"))
			if p.htmlLang == "" {
				p.htmlLang = collapse(attrOf(n, "xml:lang"))
			}
		}
	case atom.Body:
		if p.bodyClass == "" {
			p.bodyClass = attrOf(n, "class")
		}
	case atom.Meta:
		if len(p.metas) < maxMetaTags {
			for _, k := range [...]string{"property", "name", "http-equiv"} {
				if v, ok := attrOK(n, k); ok && v != "" {
					if key := strings.ToLower(strings.TrimSpace(v)); isMetaKey(key) {
						p.metas = append(p.metas, metaTag{attr: k, key: key, content: collapse(attrOf(n, "content"))})
					}
					break
				}
			}
		}
	case atom.Link, atom.A:
		if rel == "" || len(p.links) >= maxLinkTags {
			break
		}
		anchor := n.DataAtom == atom.A
		// Of an <a>, only a byline, a category or a translation relation
		// is read.
		if anchor && !hasFold(rel, "author") && !hasFold(rel, "translation-of") && !hasFold(rel, "category") {
			break
		}
		l := linkTag{rel: strings.Fields(strings.ToLower(rel)), anchor: anchor}
		if anchor {
			if !hasRel(l.rel, "author") && !hasRel(l.rel, "translation-of") && !hasRel(l.rel, "category") {
				break
			}
			l.text = textOf(n)
		}
		l.href = strings.TrimSpace(attrOf(n, "href"))
		l.typ = strings.ToLower(strings.TrimSpace(attrOf(n, "type")))
		l.hreflang = collapse(attrOf(n, "hreflang"))
		p.links = append(p.links, l)
	case atom.Script:
		if isLDType(attrOf(n, "type")) && len(p.ldTexts) < maxLDScripts {
			if c := n.FirstChild; c != nil && c.Type == html.TextNode && c.NextSibling == nil {
				p.ldTexts = append(p.ldTexts, c.Data)
				break
			}
			var b strings.Builder
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.TextNode {
					b.WriteString(c.Data)
				}
			}
			p.ldTexts = append(p.ldTexts, b.String())
		}
	}
	// An itemscope that is no item's property is an item of its own,
	// wherever it sits (a NewsArticle inside a WebPage's element); one
	// that is a property is the article only as a mainEntity.
	if scoped && p.scope == nil && (itemprop == "" || hasToken(itemprop, "mainEntity")) {
		if t := articleItemType(itemtype); t != "" {
			p.scope, p.scopeType = n, t
			return true
		}
	}
	if !inScope && itemprop != "" && len(p.itemAuthors) < maxAuthors && hasToken(itemprop, "author") {
		p.itemAuthors = append(p.itemAuthors, n)
	}
	return scoped
}

// isMetaKey reports whether a meta tag's name or property is one the
// readers use, so others (viewport, robots, verification tokens) are not
// kept.
func isMetaKey(k string) bool {
	switch {
	case strings.HasPrefix(k, "og:"), strings.HasPrefix(k, "article:"), strings.HasPrefix(k, "twitter:"),
		strings.HasPrefix(k, "dc."), strings.HasPrefix(k, "dcterms."):
		return true
	}
	switch k {
	case "title", "description", "author", "keywords", "news_keywords", "date", "pubdate", "publish-date",
		"publish_date", "publication_date", "language", "content-language", "section", "category",
		"parsely-section":
		return true
	}
	return false
}

// hasFold reports whether s may contain sub (lower-case letters and '-')
// in any case: a cheap filter before an exact test, which a few other
// bytes also pass.
func hasFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && s[i+j]|0x20 == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// Caps on what one page may contribute, so hostile markup costs bounded
// work and memory.
const (
	maxMetaTags = 1024
	maxLinkTags = 1024
	maxAuthors  = 64
	// maxMarkupBylines is the most distinct names the markup's bylines
	// (rel=author, a loose itemprop=author) may give and still be read.
	maxMarkupBylines = 4
	maxKeywords      = 256
	maxIDs           = 64
)

func isLDType(t string) bool {
	t = strings.ToLower(strings.TrimSpace(t))
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return t == "application/ld+json"
}

// readMetaTags reads OpenGraph, article:*, Twitter, plain meta names and
// Dublin Core, each as a separate tier of trust.
func (p *pageScan) readMetaTags(c *cands) {
	// OpenGraph and article:*
	for _, m := range p.metas {
		switch m.key {
		case "og:title":
			c.headline.add(m.content, m.source())
		case "og:description":
			c.description.add(m.content, m.source())
		case "og:url":
			c.canonicalOG.add(p.resolve(m.content), m.source())
		case "og:image", "og:image:url", "og:image:secure_url":
			c.image.add(p.resolve(m.content), m.source())
		case "og:site_name":
			c.publisher.add(m.content, m.source())
		case "og:locale":
			c.locale.addLang(strings.ReplaceAll(m.content, "_", "-"), m.source())
		case "og:updated_time":
			c.modified.add(m.content, m.source())
		case "article:published_time":
			c.published.add(m.content, m.source())
		case "article:modified_time":
			c.modified.add(m.content, m.source())
		case "article:section":
			c.section.add(m.content, m.source())
		case "article:author":
			if !looksLikeURL(m.content) {
				c.authors.add(m.content, m.source())
			}
		case "article:publisher":
			if !looksLikeURL(m.content) {
				c.publisher.add(m.content, m.source())
			}
		case "article:tag":
			c.keywords.add(m.content, m.source())
		case "article:content_tier":
			switch strings.ToLower(m.content) {
			case "locked", "metered":
				c.access.add(Gated, m.source())
			case "free":
				c.access.add(Free, m.source())
			}
		}
	}
	// Twitter cards
	for _, m := range p.metas {
		switch m.key {
		case "twitter:title":
			c.headline.add(m.content, m.source())
		case "twitter:description":
			c.description.add(m.content, m.source())
		case "twitter:image", "twitter:image:src":
			c.image.add(p.resolve(m.content), m.source())
		}
	}
	// plain meta names
	for _, m := range p.metas {
		if m.attr == "http-equiv" {
			continue
		}
		switch m.key {
		case "title":
			c.headline.add(m.content, m.source())
		case "description":
			c.description.add(m.content, m.source())
		case "author":
			c.authors.add(m.content, m.source())
		case "keywords", "news_keywords":
			c.keywords.addList(splitComma(m.content), m.source())
		case "date", "pubdate", "publish-date", "publish_date", "publication_date":
			c.published.add(m.content, m.source())
		case "language":
			c.langMeta.addLang(m.content, m.source())
		case "section", "category", "parsely-section":
			c.sectionMeta.add(m.content, m.source())
		}
	}
	// Dublin Core
	for _, m := range p.metas {
		key, ok := dcKey(m.key)
		if !ok || m.attr == "http-equiv" {
			continue
		}
		switch key {
		case "title":
			c.headline.add(m.content, m.source())
		case "description", "abstract":
			c.description.add(m.content, m.source())
		case "creator":
			c.authors.add(m.content, m.source())
		case "subject":
			c.keywords.addList(splitComma(strings.ReplaceAll(m.content, ";", ",")), m.source())
		case "date", "date.issued", "issued", "created", "date.created":
			c.published.add(m.content, m.source())
		case "modified", "date.modified":
			c.modified.add(m.content, m.source())
		case "language":
			c.langMeta.addLang(m.content, m.source())
		case "publisher":
			c.publisher.add(m.content, m.source())
		}
	}
}

// dcKey strips a Dublin Core prefix ("dc." or "dcterms.").
func dcKey(k string) (string, bool) {
	for _, pre := range [...]string{"dcterms.", "dc."} {
		if strings.HasPrefix(k, pre) {
			return k[len(pre):], true
		}
	}
	return "", false
}

func (m metaTag) source() string { return "meta[" + m.attr + "=" + m.key + "]" }

// readMarkup reads the bylines the markup names, the language
// declarations and the links.
func (p *pageScan) readMarkup(c *cands) {
	// A byline the markup names is read only when the page names few:
	// more is a list of other stories' bylines, not this one's.
	var names []string
	for _, n := range p.itemAuthors {
		if v := itemName(n); v != "" && !containsFold(names, v) {
			names = append(names, v)
		}
	}
	if len(names) <= maxMarkupBylines {
		c.authors.addList(names, "[itemprop=author]")
	}
	names = names[:0]
	for _, l := range p.links {
		if l.anchor && hasRel(l.rel, "author") && l.text != "" && !looksLikeURL(l.text) && !containsFold(names, l.text) {
			names = append(names, l.text)
		}
	}
	if len(names) <= maxMarkupBylines {
		c.authors.addList(names, "a[rel=author]")
	}

	c.htmlLang.addLang(p.htmlLang, "html[lang]")
	for _, m := range p.metas {
		if m.attr == "http-equiv" && m.key == "content-language" && !strings.ContainsAny(m.content, ", ") {
			c.htmlLang.addLang(m.content, "meta[http-equiv=content-language]")
		}
	}
	// A category link (WordPress's rel="category tag"): the first.
	for _, l := range p.links {
		if l.anchor && hasRel(l.rel, "category") && l.text != "" {
			c.sectionLink.add(l.text, "a[rel=category]")
			break
		}
	}
	c.sectionCrumb.add(p.crumb, "breadcrumb")
	self := p.self()
	for _, l := range p.links {
		if !l.anchor && hasRel(l.rel, "alternate") && l.hreflang != "" && !strings.EqualFold(l.hreflang, "x-default") &&
			self != "" && sameDoc(p.resolve(l.href), self) {
			c.hreflang.addLang(l.hreflang, "link[rel=alternate][hreflang]")
		}
	}

	for _, l := range p.links {
		if l.anchor {
			continue
		}
		switch {
		case hasRel(l.rel, "canonical"):
			c.canonicalLink.add(p.resolve(l.href), "link[rel=canonical]")
		case hasRel(l.rel, "image_src"):
			c.imageLink.add(p.resolve(l.href), "link[rel=image_src]")
		}
	}
	// A translation relation from a link: exactly one distinct target.
	var target string
	many := false
	for _, l := range p.links {
		if !hasRel(l.rel, "translation-of") || l.href == "" {
			continue
		}
		u := p.resolve(l.href)
		if target != "" && u != target {
			many = true
		}
		target = u
	}
	if target != "" && !many {
		c.translationLink.add(target, "link[rel=translation-of]")
	}
}

// resolve makes ref absolute against the page's URL; a ref that does not
// parse, or any ref when the page's URL is unknown, is kept as written. An
// empty ref stays empty.
func (p *pageScan) resolve(ref string) string { return resolveWith(p.page, ref) }

// self is the page's URL without its fragment; "" when unknown.
func (p *pageScan) self() string {
	if p.page == nil {
		return ""
	}
	u := *p.page
	u.Fragment = ""
	return u.String()
}

// sameDoc reports whether two absolute URLs name the same document
// (fragments ignored).
func sameDoc(a, b string) bool {
	if i := strings.IndexByte(a, '#'); i >= 0 {
		a = a[:i]
	}
	if i := strings.IndexByte(b, '#'); i >= 0 {
		b = b[:i]
	}
	return a == b
}

func looksLikeURL(s string) bool {
	s = strings.ToLower(s)
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "//")
}

func splitComma(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = collapse(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

func hasRel(rel []string, want string) bool {
	for _, r := range rel {
		if r == want {
			return true
		}
	}
	return false
}

func hasToken(list, want string) bool {
	for _, t := range strings.Fields(list) {
		if strings.EqualFold(t, want) {
			return true
		}
	}
	return false
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func attrOf(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func hasAttr(n *html.Node, key string) bool {
	_, ok := attrOK(n, key)
	return ok
}

// maxTextBytes caps the text read from one element for a metadata field.
const maxTextBytes = 4096

// textOf is n's text content, whitespace collapsed, scripts and styles
// skipped, cut at maxTextBytes.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil && b.Len() < maxTextBytes; c = c.NextSibling {
			switch c.Type {
			case html.TextNode:
				b.WriteString(c.Data)
				b.WriteByte(' ')
			case html.ElementNode:
				if c.DataAtom != atom.Script && c.DataAtom != atom.Style {
					walk(c)
				}
			}
		}
	}
	walk(n)
	return collapse(b.String())
}

// collapse trims s and turns every run of white space (Unicode's, the
// no-break space included) into one space.
func collapse(s string) string {
	clean := true
	prevSpace := true
	for i := 0; i < len(s); {
		c := s[i]
		sp, size := wsByte(c), 1
		if c >= utf8.RuneSelf {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			sp = unicode.IsSpace(r)
		}
		if sp && (prevSpace || c != ' ') {
			clean = false
			break
		}
		prevSpace = sp
		i += size
	}
	if clean && !prevSpace {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

func wsByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
