package extract

import (
	"strings"
	"time"
)

// cand is one value a source states for a field.
type cand struct{ value, source string }

// candList gathers the values stated for a single-valued field, in the
// order of trust they were added.
type candList struct{ list []cand }

func (l *candList) add(v, source string) {
	v = collapse(v)
	if v == "" || len(l.list) >= maxCands {
		return
	}
	l.list = append(l.list, cand{value: v, source: source})
}

// addLang adds v when it has the form of a BCP 47 language tag (a primary
// subtag of 2 or 3 letters, then subtags of 1 to 8 letters or digits, "-"
// or "_" between them): "english" or "English (UK)" is a name, not a tag,
// and is not read.
func (l *candList) addLang(v, source string) {
	if isLangTag(collapse(v)) {
		l.add(v, source)
	}
}

func isLangTag(s string) bool {
	for i, sub := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' }) {
		if i == 0 && (len(sub) < 2 || len(sub) > 3) || len(sub) > 8 {
			return false
		}
		for j := 0; j < len(sub); j++ {
			c := sub[j] | 0x20
			if !(c >= 'a' && c <= 'z' || i > 0 && sub[j] >= '0' && sub[j] <= '9') {
				return false
			}
		}
	}
	return s != "" && s[0] != '-' && s[0] != '_' && !strings.Contains(s, "--") && !strings.HasSuffix(s, "-")
}

// maxCands caps the values kept for one field.
const maxCands = 32

// multiList gathers the values stated for a list field (authors,
// keywords), grouped by source.
type multiList struct {
	groups []group
	n, max int
}

type group struct {
	source string
	values []string
}

func (l *multiList) add(v, source string) { l.addList([]string{v}, source) }

func (l *multiList) addList(vs []string, source string) {
	for _, v := range vs {
		v = collapse(v)
		if v == "" || l.n >= l.max {
			continue
		}
		g := len(l.groups) - 1
		if g < 0 || l.groups[g].source != source {
			l.groups = append(l.groups, group{source: source})
			g++
		}
		if !containsFold(l.groups[g].values, v) {
			l.groups[g].values = append(l.groups[g].values, v)
			l.n++
		}
	}
}

type accessCand struct {
	access Access
	source string
}

type accessList struct{ list []accessCand }

func (l *accessList) add(a Access, source string) {
	if len(l.list) < maxCands {
		l.list = append(l.list, accessCand{a, source})
	}
}

// cands is everything the sources stated, before the merge. Each source
// adds its values in turn, most trusted first, so a list's order is its
// order of trust.
type cands struct {
	headline, description, section, publisher, image, imageLink candList
	sectionMeta, sectionLink, sectionCrumb                      candList
	canonicalLink, canonicalLD, canonicalOG                     candList
	language, htmlLang, langMeta, locale, hreflang              candList
	published, modified                                         candList
	translation, translationLink                                candList
	authors, keywords                                           multiList
	access                                                      accessList
	ids                                                         []Identifier
	credits                                                     []imageCredit
}

// imageCredit is a credit a source states for one image URL.
type imageCredit struct {
	image string
	cand
}

// addCredit records credit as stated for image.
func (c *cands) addCredit(image, credit, source string) {
	credit, image = collapse(credit), collapse(image)
	if credit == "" || image == "" || len(c.credits) >= maxCands {
		return
	}
	c.credits = append(c.credits, imageCredit{image: image, cand: cand{value: credit, source: source}})
}

func newCands() *cands {
	return &cands{authors: multiList{max: maxAuthors}, keywords: multiList{max: maxKeywords}}
}

func (c *cands) addID(scheme, value, source string) {
	value = collapse(value)
	if value == "" || len(c.ids) >= maxIDs {
		return
	}
	for _, id := range c.ids {
		if id.Scheme == scheme && id.Value == value && id.Source == source {
			return
		}
	}
	c.ids = append(c.ids, Identifier{Scheme: scheme, Value: value, Source: source})
}

// fill sets a's metadata from the values gathered.
func (c *cands) fill(a *Article, self string) {
	a.Headline = pick(sameText, c.headline.list)
	a.Description = pick(sameText, c.description.list)
	a.Section = pick(sameText, c.section.list, c.sectionMeta.list, c.sectionLink.list, c.sectionCrumb.list)
	a.Publisher = pick(sameText, c.publisher.list)
	a.Image = pick(sameText, c.image.list, c.imageLink.list)
	if a.Image.Value != "" {
		var l []cand
		for _, cr := range c.credits {
			if sameURL(cr.image, a.Image.Value) {
				l = append(l, cr.cand)
			}
		}
		a.ImageCredit = pick(sameText, l)
	}
	a.Canonical = pick(sameURL, c.canonicalLink.list, c.canonicalLD.list, c.canonicalOG.list)
	a.Language = pick(sameLang, c.language.list, c.htmlLang.list, c.langMeta.list, c.locale.list, c.hreflang.list)
	a.Published = pickInstant(publishedOrder(c.published.list, c.modified.list))
	a.Modified = pickInstant(c.modified.list)
	// A translation relation only when every source names the same
	// original, and not the page itself.
	if t := pick(sameURL, c.translation.list, c.translationLink.list); len(t.Conflicts) == 0 && (self == "" || !sameDoc(t.Value, self)) {
		a.TranslationOf = t
	}
	a.Authors = pickList(c.authors.groups)
	a.Keywords = pickList(c.keywords.groups)
	a.IDs = c.ids
	// Access fails closed: any source that declares a wall wins.
	for _, want := range [...]Access{Gated, Free} {
		for _, ac := range c.access.list {
			if ac.access == want {
				a.Access, a.AccessSource = want, ac.source
				return
			}
		}
	}
}

// pick takes the first value of the lists, in order, and records every
// later value that differs as a conflict.
func pick(same func(a, b string) bool, lists ...[]cand) Field {
	var f Field
	for _, l := range lists {
		for _, cd := range l {
			if f.Value == "" {
				f.Value, f.Source = cd.value, cd.source
				continue
			}
			if same(f.Value, cd.value) {
				continue
			}
			f.Conflicts = appendConflict(f.Conflicts, Conflict{Value: cd.value, Source: cd.source})
		}
	}
	return f
}

func appendConflict(cs []Conflict, c Conflict) []Conflict {
	for _, x := range cs {
		if x == c {
			return cs
		}
	}
	return append(cs, c)
}

func pickInstant(l []cand) Instant {
	var in Instant
	for _, cd := range l {
		if isPlaceholderDate(cd.value) {
			continue
		}
		if in.Value == "" {
			in = instantOf(cd.value, cd.source)
			continue
		}
		if sameInstant(in, instantOf(cd.value, cd.source)) {
			continue
		}
		in.Conflicts = appendConflict(in.Conflicts, Conflict{Value: cd.value, Source: cd.source})
	}
	return in
}

// publishedOrder puts first, among the publication dates stated, the one
// that names the publisher's own day: the most trusted stays first unless
//   - it is also a stated modification date and another publication date
//     is earlier (a CMS's "date" is often the last edit): the earliest
//     such date goes first;
//   - it is an instant in UTC and another states the same instant in a
//     zone of its own, or shows a date alone (a byline) that is that
//     instant's day in some zone (within 14 hours) but not its UTC day:
//     that one goes first, so the day is the page's.
func publishedOrder(pub, mod []cand) []cand {
	if len(pub) < 2 {
		return pub
	}
	ins := make([]Instant, len(pub))
	for i, cd := range pub {
		ins[i] = instantOf(cd.value, cd.source)
	}
	best := 0
	if ins[0].Time.IsZero() {
		return pub
	}
	for _, m := range mod {
		if mi := instantOf(m.value, m.source); !mi.Time.IsZero() && sameInstant(ins[0], mi) {
			for i := range ins {
				if !ins[i].Time.IsZero() && ins[i].Time.Before(ins[best].Time) && !sameInstant(ins[i], ins[best]) {
					best = i
				}
			}
			break
		}
	}
	if b := ins[best]; !b.DateOnly {
		if _, off := b.Time.Zone(); off == 0 {
			for i, in := range ins {
				if in.Time.IsZero() || i == best {
					continue
				}
				_, o := in.Time.Zone()
				if !in.DateOnly && o != 0 && in.Time.Equal(b.Time) || in.DateOnly && !sameDate(in.Time, b.Time) && withinZones(in.Time, b.Time) {
					best = i
					break
				}
			}
		}
	}
	if best == 0 {
		return pub
	}
	out := make([]cand, 0, len(pub))
	out = append(out, pub[best])
	out = append(out, pub[:best]...)
	return append(out, pub[best+1:]...)
}

// withinZones reports whether date d is instant t's date in some zone,
// 12 hours west to 14 hours east of UTC.
func withinZones(d, t time.Time) bool {
	return sameDate(d, t.Add(14*time.Hour)) || sameDate(d, t.Add(-12*time.Hour))
}

// pickList takes the first group's values and records each later group
// that names a different set as one conflict on the first entry.
func pickList(groups []group) []Field {
	if len(groups) == 0 {
		return nil
	}
	win := groups[0]
	out := make([]Field, len(win.values))
	for i, v := range win.values {
		out[i] = Field{Value: v, Source: win.source}
	}
	for _, g := range groups[1:] {
		if sameSet(win.values, g.values) {
			continue
		}
		out[0].Conflicts = appendConflict(out[0].Conflicts, Conflict{Value: strings.Join(g.values, "; "), Source: g.source})
	}
	return out
}

func sameText(a, b string) bool { return a == b }

// sameURL compares two URLs, ignoring a fragment and a trailing slash.
func sameURL(a, b string) bool {
	trim := func(s string) string {
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		return strings.TrimSuffix(s, "/")
	}
	return trim(a) == trim(b)
}

// sameLang compares two language tags case-insensitively, "_" as "-", a
// tag agreeing with a longer one it is a prefix of ("en" and "en-GB").
func sameLang(a, b string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "-")) }
	a, b = norm(a), norm(b)
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || strings.HasPrefix(b, a+"-")
}

// sameSet compares two lists of names as sets, case-insensitively, a
// single entry "A, B" or "A and B" counting as the names it lists.
func sameSet(a, b []string) bool {
	x, y := nameSet(a), nameSet(b)
	if len(x) != len(y) {
		return false
	}
	for k := range x {
		if _, ok := y[k]; !ok {
			return false
		}
	}
	return true
}

func nameSet(vs []string) map[string]struct{} {
	m := make(map[string]struct{}, len(vs))
	for _, v := range vs {
		v = strings.ToLower(v)
		v = strings.ReplaceAll(v, " and ", ",")
		v = strings.ReplaceAll(v, "&", ",")
		v = strings.ReplaceAll(v, ";", ",")
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				m[p] = struct{}{}
			}
		}
	}
	return m
}

func containsFold(vs []string, v string) bool {
	for _, x := range vs {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}
