package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// What a page's markup says about a date it shows, read from a <time>
// element's attributes and class and those of its nearest ancestors, or
// from the class of a byline.
const (
	dateUnhinted = iota
	datePublished
	dateModified
)

// maxVisibleDates caps the <time> elements and dated bylines one page
// contributes.
const maxVisibleDates = 32

// visibleDate is a date the page shows: a <time> element's datetime (or
// its text), or a date found in the text of a byline.
type visibleDate struct {
	value  string
	source string
	kind   int
}

// timeElement notes a <time> element.
func (p *pageScan) timeElement(n *html.Node) {
	if len(p.times) >= maxVisibleDates {
		return
	}
	v, ok := attrOK(n, "datetime")
	v = collapse(v)
	source := "time[datetime]"
	if !ok || v == "" {
		v, source = findDate(textOf(n)), "time"
	}
	if v == "" {
		return
	}
	kind := dateUnhinted
	if hasAttr(n, "pubdate") {
		kind = datePublished
	}
	for a, k := n, 0; a != nil && a.Type == html.ElementNode && k < 4 && kind == dateUnhinted; a, k = a.Parent, k+1 {
		kind = dateHint(a)
	}
	p.times = append(p.times, visibleDate{value: v, source: source, kind: kind})
}

// dateHint reads what an element's itemprop, class and id say of the date
// it holds.
func dateHint(n *html.Node) int {
	for _, at := range n.Attr {
		switch at.Key {
		case "itemprop":
			switch {
			case strings.EqualFold(at.Val, "datePublished"), strings.EqualFold(at.Val, "dateCreated"):
				return datePublished
			case strings.EqualFold(at.Val, "dateModified"):
				return dateModified
			}
		case "class", "id":
			v := strings.ToLower(at.Val)
			switch {
			case strings.Contains(v, "updated"), strings.Contains(v, "modified"):
				return dateModified
			case strings.Contains(v, "publish"), strings.Contains(v, "posted"), strings.Contains(v, "byline"),
				strings.Contains(v, "dateline"), strings.Contains(v, "entry-date"), strings.Contains(v, "post-date"),
				strings.Contains(v, "article-date"), strings.Contains(v, "pubdate"), strings.Contains(v, "created"):
				return datePublished
			}
		}
	}
	return dateUnhinted
}

// bylineElement notes the date in an element named as a byline or a
// publication date, when its short text states one.
func (p *pageScan) bylineElement(n *html.Node) {
	if len(p.bylines) >= maxVisibleDates || n.DataAtom == atom.Time || dateHint(n) != datePublished {
		return
	}
	t := textOf(n)
	if len(t) > 200 {
		return
	}
	if v := findDate(t); v != "" {
		p.bylines = append(p.bylines, visibleDate{value: v, source: "byline", kind: datePublished})
	}
}

// readVisibleDates adds the dates the page shows, after every source that
// states one for machines: a <time> marked as the publication (pubdate,
// itemprop, a class saying so), then a byline's date; a <time> marked as
// an update is a modification date; an unmarked <time> is not read (it is
// as often the modification, a comment's or another story's date).
func (p *pageScan) readVisibleDates(c *cands) {
	for _, d := range p.times {
		switch d.kind {
		case datePublished:
			c.published.add(d.value, d.source)
		case dateModified:
			c.modified.add(d.value, d.source)
		}
	}
	for _, d := range p.bylines {
		c.published.add(d.value, d.source)
	}
}

// findDate returns the first date in text that parseInstant reads as a
// date alone: ISO 8601 (2019-07-30), day first with dots (30.07.2019),
// or with an English month name (July 30, 2019; 30 July 2019); "" when
// there is none. Only the date is copied, not a time beside it whose zone
// the text may not state.
func findDate(text string) string {
	f := strings.Fields(text)
	trim := func(s string) string { return strings.Trim(s, ",;()[]|·•") }
	for i := range f {
		w := trim(f[i])
		if len(w) >= 8 && len(w) <= 10 {
			if _, ok := parseInstant(w); ok {
				return w
			}
		}
		if len(w) >= 10 && w[4] == '-' {
			if j := strings.IndexByte(w, 'T'); j == 10 {
				if _, ok := parseInstant(w[:10]); ok {
					return w[:10]
				}
			}
		}
		if i+2 < len(f) && (hasMonthName(f[i]) || hasMonthName(f[i+1]) || hasMonthName(f[i+2])) {
			three := trim(f[i]) + " " + strings.TrimRight(f[i+1], ";()[]|") + " " + trim(f[i+2])
			if _, ok := parseInstant(three); ok {
				return three
			}
		}
	}
	return ""
}

// isBreadcrumb reports whether n is named as a breadcrumb trail: its class
// or id says so, or aria-label="breadcrumb".
func isBreadcrumb(n *html.Node) bool {
	for _, at := range n.Attr {
		switch at.Key {
		case "class", "id", "aria-label":
			if hasFold(at.Val, "breadcrumb") {
				return true
			}
		}
	}
	return false
}

// maxCrumbs caps the links read from a breadcrumb trail.
const maxCrumbs = 16

// breadcrumb reads the section a breadcrumb trail in the markup names: its
// last link that is neither the page nor the site's home.
func (p *pageScan) breadcrumb(n *html.Node) string {
	var names, urls []string
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		for c := n.FirstChild; c != nil && len(names) < maxCrumbs && depth < 8; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if c.DataAtom == atom.A {
				names = append(names, textOf(c))
				urls = append(urls, p.resolve(strings.TrimSpace(attrOf(c, "href"))))
				continue
			}
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	// The links only: the page's own entry, if any, is not a link.
	names, urls = append(names, ""), append(urls, "")
	return crumbSection(names, urls, []string{p.self()})
}
