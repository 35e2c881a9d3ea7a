package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxItemNodes caps the elements read inside the Article's itemscope.
const maxItemNodes = 1 << 16

// articleItemType returns the schema.org Article type an itemtype names
// (the first, when it lists several), or "".
func articleItemType(itemtype string) string {
	for _, t := range strings.Fields(itemtype) {
		i := strings.LastIndexByte(t, '/')
		if i < 0 || !strings.Contains(strings.ToLower(t[:i]), "schema.org") {
			continue
		}
		if name := t[i+1:]; isArticleType(name) {
			return name
		}
	}
	return ""
}

// readMicrodata adds the values of the itemprops of the page's first
// Article itemscope. An itemprop inside a nested itemscope belongs to that
// item, not to the article; an author or publisher given as an item is
// read from its name.
func (p *pageScan) readMicrodata(c *cands) {
	if p.scope == nil {
		return
	}
	src := func(prop string) string { return "microdata:" + p.scopeType + "." + prop }
	budget := maxItemNodes
	var authors []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for n := n.FirstChild; n != nil && budget > 0; n = n.NextSibling {
			if n.Type != html.ElementNode {
				continue
			}
			budget--
			props := strings.Fields(attrOf(n, "itemprop"))
			scoped := hasAttr(n, "itemscope")
			for _, prop := range props {
				switch prop {
				case "author", "creator":
					if len(authors) < maxAuthors {
						if v := itemName(n); v != "" {
							authors = append(authors, v)
						}
					}
				case "publisher":
					c.publisher.add(itemName(n), src(prop))
				}
				if scoped {
					switch prop {
					case "image":
						u := p.resolve(itemNested(n, "url", "contentUrl"))
						c.image.add(u, src("image.url"))
						for _, cp := range []string{"creditText", "creator", "author", "copyrightHolder", "copyrightNotice"} {
							if v := itemNested(n, cp); v != "" && !looksLikeURL(v) {
								c.addCredit(u, v, src("image."+cp))
								break
							}
						}
					case "mainEntityOfPage":
						// <meta itemscope itemprop=mainEntityOfPage itemid=URL>
						c.canonicalOG.add(p.resolve(attrOf(n, "itemid")), src("mainEntityOfPage[itemid]"))
					}
					continue
				}
				v := itemValue(n)
				switch prop {
				case "headline", "name":
					c.headline.add(v, src(prop))
				case "description":
					c.description.add(v, src(prop))
				case "datePublished":
					c.published.add(v, src(prop))
				case "dateModified":
					c.modified.add(v, src(prop))
				case "articleSection":
					c.section.add(v, src(prop))
				case "inLanguage":
					c.langMeta.addLang(v, src(prop))
				case "keywords":
					c.keywords.addList(splitComma(v), src(prop))
				case "image":
					c.image.add(p.resolve(v), src(prop))
				case "url", "mainEntityOfPage":
					c.canonicalOG.add(p.resolve(v), src(prop))
				case "identifier":
					c.addID("microdata", v, src(prop))
				case "translationOfWork":
					c.translation.add(p.resolve(v), src(prop))
				case "isAccessibleForFree":
					if free, ok := ldBool(v); ok && free {
						c.access.add(Free, src(prop))
					} else if ok {
						c.access.add(Gated, src(prop))
					}
				}
			}
			if !scoped {
				walk(n)
			}
		}
	}
	walk(p.scope)
	if p.scope != nil {
		if id := collapse(attrOf(p.scope, "itemid")); id != "" {
			c.addID("microdata", id, "microdata:"+p.scopeType+"[itemid]")
		}
	}
	c.authors.addList(authors, src("author"))
}

// itemValue is an itemprop element's value, as microdata defines it:
// content for meta, the URL for links and media, datetime for time, value
// for data and meter, the text otherwise. A content attribute on any
// element is read as its value, as search engines do.
func itemValue(n *html.Node) string {
	if v, ok := attrOK(n, "content"); ok {
		return collapse(v)
	}
	switch n.DataAtom {
	case atom.A, atom.Area, atom.Link:
		return strings.TrimSpace(attrOf(n, "href"))
	case atom.Img, atom.Audio, atom.Embed, atom.Iframe, atom.Source, atom.Track, atom.Video:
		return strings.TrimSpace(attrOf(n, "src"))
	case atom.Object:
		return strings.TrimSpace(attrOf(n, "data"))
	case atom.Data, atom.Meter:
		return collapse(attrOf(n, "value"))
	case atom.Time:
		if v, ok := attrOK(n, "datetime"); ok {
			return collapse(v)
		}
	}
	return textOf(n)
}

// itemName is the name an author or publisher element gives: the value
// of its itemprop=name when it is an item, its value otherwise.
func itemName(n *html.Node) string {
	if !hasAttr(n, "itemscope") {
		// A link's value is a URL, the author's page; its text names
		// the author.
		v := itemValue(n)
		if n.DataAtom == atom.A {
			v = textOf(n)
		}
		if looksLikeURL(v) || strings.HasPrefix(v, "/") {
			return ""
		}
		return v
	}
	return itemNested(n, "name")
}

// itemNested is the value of the first of props among the itemprops of
// the item n (not of items nested in it).
func itemNested(n *html.Node, props ...string) string {
	budget := maxItemNodes
	var found string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil && found == "" && budget > 0; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			budget--
			for _, want := range props {
				if hasToken(attrOf(c, "itemprop"), want) {
					if v := itemValue(c); v != "" {
						found = v
						return
					}
				}
			}
			if !hasAttr(c, "itemscope") {
				walk(c)
			}
		}
	}
	walk(n)
	return found
}
