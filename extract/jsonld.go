package extract

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"strings"
)

// Caps on the JSON-LD a page may carry. A script beyond a cap is skipped
// whole (never cut short and read in part), before it is decoded: the
// bytes are scanned once for their depth and their number of objects.
const (
	maxLDScripts     = 64      // scripts read per page
	maxLDScriptBytes = 1 << 20 // bytes per script
	maxLDTotalBytes  = 4 << 20 // bytes over all scripts
	maxLDDepth       = 32      // nesting of objects and arrays
	maxLDObjects     = 10000   // objects over all scripts
	maxLDRefHops     = 4       // @id references followed in a chain
)

// ldDoc is the JSON-LD of one page, decoded.
type ldDoc struct {
	tops  []map[string]any          // the nodes at the top of each script or @graph
	byID  map[string]map[string]any // node definitions by @id
	stats ldStats
}

// ldStats counts what the reader did, for tests of its caps.
type ldStats struct {
	read, skipped int // scripts decoded, and skipped (over a cap, or invalid)
	bytes         int // bytes of the scripts decoded
	objects       int // objects in the scripts decoded
}

// parseLD decodes the scripts within the caps.
func parseLD(texts []string) *ldDoc {
	d := &ldDoc{byID: map[string]map[string]any{}}
	for i, t := range texts {
		if i >= maxLDScripts {
			d.stats.skipped += len(texts) - i
			break
		}
		b := cleanLD(t)
		if len(b) == 0 {
			continue
		}
		if len(b) > maxLDScriptBytes || d.stats.bytes+len(b) > maxLDTotalBytes {
			d.stats.skipped++
			continue
		}
		objs, ok := scanLD(b, maxLDDepth, maxLDObjects-d.stats.objects)
		if !ok {
			d.stats.skipped++
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			d.stats.skipped++
			continue
		}
		d.stats.read++
		d.stats.bytes += len(b)
		d.stats.objects += objs
		d.index(v)
		d.addTops(v, 0)
	}
	return d
}

// cleanLD trims the wrappers pages put around a script's JSON: white
// space, HTML comment or CDATA markers, a trailing semicolon.
func cleanLD(s string) []byte {
	s = strings.TrimSpace(s)
	for _, w := range [...][2]string{{"<!--", "-->"}, {"//<![CDATA[", "//]]>"}, {"<![CDATA[", "]]>"}} {
		if strings.HasPrefix(s, w[0]) {
			s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s[len(w[0]):]), w[1]))
		}
	}
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	return []byte(s)
}

// scanLD counts the objects in b and checks its nesting, without
// decoding it: false when the depth exceeds maxDepth or the objects
// maxObjects.
func scanLD(b []byte, maxDepth, maxObjects int) (int, bool) {
	depth, objects := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > maxDepth {
				return objects, false
			}
			if c == '{' {
				objects++
				if objects > maxObjects {
					return objects, false
				}
			}
		case '}', ']':
			depth--
		}
	}
	return objects, true
}

// index records every node that defines an @id (has more than the @id).
func (d *ldDoc) index(v any) {
	switch v := v.(type) {
	case map[string]any:
		if id, ok := v["@id"].(string); ok && len(v) > 1 {
			if _, dup := d.byID[id]; !dup {
				d.byID[id] = v
			}
		}
		for _, x := range v {
			d.index(x)
		}
	case []any:
		for _, x := range v {
			d.index(x)
		}
	}
}

func (d *ldDoc) addTops(v any, depth int) {
	if depth > 2 {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["@type"]; ok {
			d.tops = append(d.tops, v)
		}
		if g, ok := v["@graph"]; ok {
			d.addTops(g, depth+1)
		}
	case []any:
		for _, x := range v {
			d.addTops(x, depth+1)
		}
	}
}

// deref follows a reference (an object with only an @id) to the node it
// names, when the page defines it.
func (d *ldDoc) deref(v any) any {
	for range maxLDRefHops {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		id, ok := m["@id"].(string)
		if !ok || len(m) > 2 || (len(m) == 2 && m["@type"] == nil) {
			return v
		}
		def, ok := d.byID[id]
		if !ok {
			return v
		}
		v = def
	}
	return v
}

// ldTypes lists a node's types without a schema.org prefix.
func ldTypes(m map[string]any) []string {
	var out []string
	add := func(v any) {
		if s, ok := v.(string); ok {
			for _, p := range [...]string{"https://schema.org/", "http://schema.org/", "schema:"} {
				s = strings.TrimPrefix(s, p)
			}
			out = append(out, s)
		}
	}
	switch t := m["@type"].(type) {
	case []any:
		for i, x := range t {
			if i == 8 {
				break
			}
			add(x)
		}
	default:
		add(t)
	}
	return out
}

// isArticleType reports whether a schema.org type names an article.
func isArticleType(t string) bool {
	switch t {
	case "BlogPosting", "LiveBlogPosting", "SocialMediaPosting", "Report", "DiscussionForumPosting":
		return true
	}
	return len(t) > len("Article") && strings.HasSuffix(t, "Article") || t == "Article"
}

func articleTypeOf(m map[string]any) string {
	for _, t := range ldTypes(m) {
		if isArticleType(t) {
			return t
		}
	}
	return ""
}

// article finds the page's Article node among the top nodes and the
// mainEntity of the top WebPages: the only one; else the one whose url,
// @id or mainEntityOfPage names one of pages (the page's URL and its
// canonical URLs); else the first that names no page at all. When every
// one names another page, the page lists other pages' articles and none
// is its own.
func (d *ldDoc) article(pages []string, resolve func(string) string) (map[string]any, string) {
	type found struct {
		m map[string]any
		t string
	}
	var all []found
	for _, n := range d.tops {
		if t := articleTypeOf(n); t != "" {
			all = append(all, found{n, t})
			continue
		}
		if me, ok := d.deref(n["mainEntity"]).(map[string]any); ok {
			if t := articleTypeOf(me); t != "" {
				all = append(all, found{me, t})
			}
		}
	}
	switch len(all) {
	case 0:
		return nil, ""
	case 1:
		return all[0].m, all[0].t
	}
	var unnamed *found
	for i, f := range all {
		named := false
		for _, u := range [...]string{ldString(f.m["url"]), ldString(f.m["@id"]), d.ldURLOf(f.m["mainEntityOfPage"])} {
			if u == "" || strings.HasPrefix(u, "#") || strings.HasPrefix(u, "_:") {
				continue
			}
			named = true
			u = stripFragment(resolve(u))
			for _, p := range pages {
				if sameURL(u, stripFragment(p)) {
					return f.m, f.t
				}
			}
		}
		if !named && unnamed == nil {
			unnamed = &all[i]
		}
	}
	if unnamed != nil {
		return unnamed.m, unnamed.t
	}
	return nil, ""
}

func stripFragment(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		return s[:i]
	}
	return s
}

// ldString is v as text: a string with its entities decoded and its white
// space collapsed, or a number as written; "" otherwise.
// imageCredit returns the credit an ImageObject states and the property
// it was read from: creditText first, then who made the image (creator,
// author), then who holds its copyright (copyrightHolder, then the notice).
func (d *ldDoc) imageCredit(im map[string]any) (credit, prop string) {
	for _, prop := range []string{"creditText", "creator", "author", "copyrightHolder", "copyrightNotice"} {
		for _, v := range ldList(im[prop]) {
			switch v := d.deref(v).(type) {
			case string:
				if s := collapse(ldString(v)); s != "" && !looksLikeURL(s) {
					return s, prop
				}
			case map[string]any:
				if s := collapse(ldString(v["name"])); s != "" {
					return s, prop + ".name"
				}
			}
		}
	}
	return "", ""
}

func ldString(v any) string {
	switch v := v.(type) {
	case string:
		if strings.IndexByte(v, '&') >= 0 {
			v = html.UnescapeString(v)
		}
		return collapse(v)
	case json.Number:
		return v.String()
	}
	return ""
}

// ldURLOf reads a URL given as a string or as a node's @id or url.
func (d *ldDoc) ldURLOf(v any) string {
	switch m := d.deref(v).(type) {
	case string:
		return ldString(m)
	case map[string]any:
		if u := ldString(m["@id"]); u != "" {
			return u
		}
		return ldString(m["url"])
	}
	return ""
}

// ldList is v as a list: an array's elements, or v alone.
func ldList(v any) []any {
	switch v := v.(type) {
	case nil:
		return nil
	case []any:
		return v
	}
	return []any{v}
}

// ldBool reads a boolean written as true/false or as the text "True" or
// "False" (any case).
func ldBool(v any) (value, ok bool) {
	switch v := v.(type) {
	case bool:
		return v, true
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// readLD adds the values the page's JSON-LD Article states.
func (p *pageScan) readLD(c *cands) {
	if !mayHoldArticle(p.ldTexts) {
		return
	}
	d := parseLD(p.ldTexts)
	page := p.self()
	for _, n := range d.tops {
		if t := ldTypes(n); len(t) > 0 && strings.HasSuffix(t[0], "WebPage") {
			if free, ok := ldBool(n["isAccessibleForFree"]); ok && !free {
				c.access.add(Gated, "json-ld:"+t[0]+".isAccessibleForFree")
			}
		}
	}
	pages := []string{page}
	for _, l := range p.links {
		if !l.anchor && hasRel(l.rel, "canonical") && l.href != "" {
			pages = append(pages, p.resolve(l.href))
		}
	}
	d.readBreadcrumb(pages, p.resolve, c)
	m, typ := d.article(pages, p.resolve)
	if m == nil {
		return
	}
	d.readArticle(m, typ, p.resolve, c)
}

// readBreadcrumb adds the section a BreadcrumbList names: its last item
// that is neither the page itself nor the site's home.
func (d *ldDoc) readBreadcrumb(pages []string, resolve func(string) string, c *cands) {
	for _, n := range d.tops {
		list := n
		if t := ldTypes(n); len(t) == 0 || t[0] != "BreadcrumbList" {
			b, ok := d.deref(n["breadcrumb"]).(map[string]any)
			if !ok {
				continue
			}
			if t := ldTypes(b); len(t) == 0 || t[0] != "BreadcrumbList" {
				continue
			}
			list = b
		}
		var names, urls []string
		for _, it := range ldList(list["itemListElement"]) {
			m, ok := d.deref(it).(map[string]any)
			if !ok {
				continue
			}
			name, u := ldString(m["name"]), ""
			switch item := d.deref(m["item"]).(type) {
			case string:
				u = item
			case map[string]any:
				if name == "" {
					name = ldString(item["name"])
				}
				u = ldString(item["@id"])
				if u == "" {
					u = ldString(item["url"])
				}
			}
			names, urls = append(names, name), append(urls, resolve(u))
		}
		if v := crumbSection(names, urls, pages); v != "" {
			c.sectionCrumb.add(v, "json-ld:BreadcrumbList.itemListElement")
			return
		}
	}
}

// crumbSection picks a breadcrumb trail's section: the last entry with a
// name that is neither one of pages (the page itself) nor a site's home
// (the first entry, or a URL whose path is "/"). When the page's URL is
// not known, the last entry is passed over, since it may be the page.
func crumbSection(names, urls, pages []string) string {
	known := false
	for _, pg := range pages {
		known = known || pg != ""
	}
	last := len(names) - 1
	if !known {
		last-- // the last entry may be the page, which cannot be told
	}
	for i := last; i >= 1; i-- {
		if names[i] == "" {
			continue
		}
		if u := urls[i]; u != "" {
			self := false
			for _, pg := range pages {
				if pg != "" && sameURL(stripFragment(u), stripFragment(pg)) {
					self = true
				}
			}
			if self || isHomeURL(u) {
				continue
			}
		} else if i == len(names)-1 {
			continue // the page's own entry, without a link
		}
		return names[i]
	}
	return ""
}

// isHomeURL reports whether u is a site's root.
func isHomeURL(u string) bool {
	pu, err := url.Parse(u)
	return err == nil && (pu.Path == "" || pu.Path == "/") && pu.RawQuery == ""
}

// mayHoldArticle reports whether any script names an Article type or
// states access: every type isArticleType accepts contains "Article",
// "Posting" or "Report". Pages whose JSON-LD is only a breadcrumb or an
// organisation skip decoding it.
func mayHoldArticle(texts []string) bool {
	for _, t := range texts {
		for _, w := range [...]string{"Article", "Posting", "Report", "isAccessibleForFree", "BreadcrumbList"} {
			if strings.Contains(t, w) {
				return true
			}
		}
	}
	return false
}

// readArticle adds the values of an Article node m of type typ.
func (d *ldDoc) readArticle(m map[string]any, typ string, resolve func(string) string, c *cands) {
	src := func(path string) string { return "json-ld:" + typ + "." + path }
	if v := ldString(m["headline"]); v != "" {
		c.headline.add(v, src("headline"))
	} else {
		c.headline.add(ldString(m["name"]), src("name"))
	}
	c.description.add(ldString(m["description"]), src("description"))

	var names []string
	nested := false
	for _, a := range ldList(m["author"]) {
		switch a := d.deref(a).(type) {
		case string:
			if v := ldString(a); !looksLikeURL(v) {
				names = append(names, v)
			}
		case map[string]any:
			if v := ldString(a["name"]); v != "" {
				nested = true
				names = append(names, v)
			}
		}
	}
	if nested {
		c.authors.addList(names, src("author.name"))
	} else {
		c.authors.addList(names, src("author"))
	}

	c.published.add(ldString(m["datePublished"]), src("datePublished"))
	c.modified.add(ldString(m["dateModified"]), src("dateModified"))
	for _, s := range ldList(m["articleSection"]) {
		if v := ldString(s); v != "" {
			c.section.add(v, src("articleSection"))
			break
		}
	}
	c.canonicalLD.add(resolve(ldString(m["url"])), src("url"))
	if u := d.ldURLOf(m["mainEntityOfPage"]); u != "" {
		path := "mainEntityOfPage"
		if _, ok := d.deref(m["mainEntityOfPage"]).(map[string]any); ok {
			path += ".@id"
		}
		c.canonicalLD.add(resolve(u), src(path))
	}

	switch l := d.deref(m["inLanguage"]).(type) {
	case string:
		c.language.addLang(ldString(l), src("inLanguage"))
	case map[string]any:
		c.language.addLang(ldString(l["alternateName"]), src("inLanguage.alternateName"))
	}

	// Keywords in one text are separated by commas, as schema.org has it.
	if kws := ldList(m["keywords"]); len(kws) == 1 {
		c.keywords.addList(splitComma(ldString(kws[0])), src("keywords"))
	} else {
		for _, k := range kws {
			c.keywords.add(ldString(k), src("keywords"))
		}
	}

	if pubs := ldList(m["publisher"]); len(pubs) > 0 {
		switch pub := d.deref(pubs[0]).(type) {
		case string:
			c.publisher.add(ldString(pub), src("publisher"))
		case map[string]any:
			c.publisher.add(ldString(pub["name"]), src("publisher.name"))
		}
	}

	for _, im := range ldList(m["image"]) {
		switch im := d.deref(im).(type) {
		case string:
			c.image.add(resolve(ldString(im)), src("image"))
		case map[string]any:
			u, from := ldString(im["url"]), "image.url"
			if u == "" {
				u, from = ldString(im["contentUrl"]), "image.contentUrl"
			}
			c.image.add(resolve(u), src(from))
			if credit, prop := d.imageCredit(im); credit != "" {
				c.addCredit(resolve(u), credit, src("image."+prop))
			}
		}
		if len(c.image.list) > 0 {
			break
		}
	}

	for _, id := range ldList(m["identifier"]) {
		switch id := id.(type) {
		case map[string]any:
			c.addID("json-ld", ldString(id["value"]), src("identifier.value"))
		default:
			c.addID("json-ld", ldString(id), src("identifier"))
		}
	}
	if id := ldString(m["@id"]); !strings.HasPrefix(id, "_:") {
		c.addID("json-ld", id, src("@id"))
	}

	for _, key := range [...]string{"translationOfWork", "isTranslationOf"} {
		for _, t := range ldList(m[key]) {
			if u := d.ldURLOf(t); u != "" {
				c.translation.add(resolve(u), src(key))
			}
		}
	}

	if free, ok := ldBool(m["isAccessibleForFree"]); ok {
		if free {
			c.access.add(Free, src("isAccessibleForFree"))
		} else {
			c.access.add(Gated, src("isAccessibleForFree"))
		}
	}
	for _, part := range ldList(m["hasPart"]) {
		if pm, ok := d.deref(part).(map[string]any); ok {
			if free, ok := ldBool(pm["isAccessibleForFree"]); ok && !free {
				c.access.add(Gated, src("hasPart.isAccessibleForFree"))
				break
			}
		}
	}
}

// resolveWith resolves ref against base (nil: ref as written).
func resolveWith(base *url.URL, ref string) string {
	ref = strings.TrimSpace(ref)
	if base == nil || ref == "" {
		return ref
	}
	u, err := base.Parse(ref)
	if err != nil {
		return ref
	}
	return u.String()
}
