package feed

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mmcdole/gofeed"
	"github.com/mmcdole/gofeed/atom"
	ext "github.com/mmcdole/gofeed/extensions"
	jsonfeed "github.com/mmcdole/gofeed/json"
	"github.com/mmcdole/gofeed/rss"
)

// Feed is a normalised feed. In trigger mode ([Reader.RefsOnly]) only
// Format, Version and each item's reference fields are filled.
type Feed struct {
	Format   string // "rss", "atom" or "json"
	Version  string // e.g. "2.0", "1.0", "1.1"
	Title    string // the feed's title, as written
	Link     string // the site's address, absolute
	Language string // the feed's declared language, "" when none
	Items    []Item // in feed order, at most the Reader's MaxItems
}

// Author is a person a feed names.
type Author struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// Item is one normalised feed item. Every field is copied from the feed,
// never completed: a field the feed leaves out stays zero (a missing date is
// the zero [time.Time]).
type Item struct {
	// ID is the publisher's identifier: the CMS id when it can be read
	// from the guid or id (see [CMSID]), else the RSS guid, Atom id or JSON
	// Feed id as written; "" when the feed gives none. It is never derived
	// from the link.
	ID string
	// GUID is the RSS guid, Atom id or JSON Feed id as written.
	GUID string
	// Link is the article's address: absolute, tracking parameters removed.
	// For RSS, a permalink guid stands in when there is no <link>.
	Link        string
	Title       string
	Description string
	Published   time.Time // zero when the feed gives none
	Updated     time.Time // zero when the feed gives none
	Authors     []Author
	Categories  []string
	Language    string // the item's language, else the feed's
	// Image is the share image the feed names: media:content (image),
	// media:thumbnail, an image enclosure, itunes:image, a JSON Feed image;
	// absolute; "" when none. The item's HTML is never scanned for one.
	Image string
	// ImageCredit is the credit Media RSS states for that image
	// (media:credit of the media:content chosen, else of its media:group,
	// else of the item); "" when none is stated.
	ImageCredit string
}

// Ref returns the item's reference.
func (it Item) Ref() Ref {
	return Ref{ID: it.ID, URL: it.Link, Published: it.Published, Updated: it.Updated}
}

// parseConfig is what normalisation needs from a Reader.
type parseConfig struct {
	links    linkCleaner // makes links absolute and strips tracking parameters
	maxItems int
	refsOnly bool
}

// normalize parses a feed document and normalises it. It never panics: a
// panic inside the parser becomes a *ParseError.
func normalize(data []byte, base *url.URL, cfg parseConfig) (f *Feed, truncated bool, err error) {
	where := ""
	if base != nil {
		where = base.String()
	}
	defer func() {
		if p := recover(); p != nil {
			f, truncated = nil, false
			err = &ParseError{URL: where, Format: "feed", Err: fmt.Errorf("parser panic: %v", p)}
		}
	}()
	if !utf8.Valid(data) && declaresUTF8(data) {
		// Stray bytes in a feed that says (or defaults to) UTF-8 would fail
		// the whole feed; they become U+FFFD instead.
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	if gofeed.DetectFeedType(bytes.NewReader(data)) == gofeed.FeedTypeUnknown {
		return nil, false, &ParseError{URL: where, Format: "feed", Err: ErrNotFeed}
	}
	p := gofeed.NewParser()
	p.KeepOriginalFeed = true
	p.RSSTranslator = &gofeed.DefaultRSSTranslator{DisableContentImageScan: true}
	gf, err := p.Parse(bytes.NewReader(data))
	if err != nil {
		if errors.Is(err, gofeed.ErrFeedTypeNotDetected) {
			err = ErrNotFeed
		}
		return nil, false, &ParseError{URL: where, Format: "feed", Err: err}
	}
	f = &Feed{Format: gf.FeedType, Version: gf.FeedVersion}
	if !cfg.refsOnly {
		f.Title = clean(gf.Title)
		f.Link = cfg.links.link(base, gf.Link)
		f.Language = clean(gf.Language)
	}
	items := gf.Items
	if cfg.maxItems > 0 && len(items) > cfg.maxItems {
		items, truncated = items[:cfg.maxItems], true
	}
	orig := gf.OriginalFeed()
	f.Items = make([]Item, 0, len(items))
	for i, gi := range items {
		if gi != nil {
			f.Items = append(f.Items, normalizeItem(gi, orig, i, base, cfg, f.Language))
		}
	}
	return f, truncated, nil
}

// normalizeItem normalises the feed's i-th item gi; orig is the feed as its
// format's parser read it, lang the feed's language.
func normalizeItem(gi *gofeed.Item, orig any, i int, base *url.URL, cfg parseConfig, lang string) Item {
	it := Item{GUID: clean(gi.GUID), Link: cfg.links.link(base, gi.Link)}
	it.Published = date(gi.PublishedParsed)
	it.Updated = date(gi.UpdatedParsed)
	switch o := orig.(type) {
	case *rss.Feed:
		if i < len(o.Items) && o.Items[i] != nil {
			ri := o.Items[i]
			if it.Link == "" && ri.GUID != nil && !strings.EqualFold(strings.TrimSpace(ri.GUID.IsPermalink), "false") {
				it.Link = cfg.links.link(base, ri.GUID.Value)
			}
		}
	case *atom.Feed:
		// gofeed fills a missing Atom <published> with <updated>: copy
		// only what the entry says (never invented).
		if i < len(o.Entries) && o.Entries[i] != nil {
			it.Published = date(o.Entries[i].PublishedParsed)
			if it.Link == "" {
				for _, l := range o.Entries[i].Links {
					if l != nil && l.Rel == "" {
						it.Link = cfg.links.link(base, l.Href)
						break
					}
				}
			}
		}
	}
	it.ID = it.GUID
	if id := CMSID(it.GUID); id != "" {
		it.ID = id
	}
	if cfg.refsOnly {
		return it
	}
	it.Title = clean(gi.Title)
	it.Description = clean(gi.Description)
	for _, a := range gi.Authors {
		if a != nil && (a.Name != "" || a.Email != "") {
			it.Authors = append(it.Authors, Author{Name: clean(a.Name), Email: clean(a.Email)})
		}
	}
	for _, c := range gi.Categories {
		if c = clean(c); c != "" {
			it.Categories = append(it.Categories, c)
		}
	}
	it.Language = lang
	if gi.DublinCoreExt != nil && len(gi.DublinCoreExt.Language) > 0 && clean(gi.DublinCoreExt.Language[0]) != "" {
		it.Language = clean(gi.DublinCoreExt.Language[0])
	}
	img, credit := shareImage(gi, orig, i)
	if it.Image = cfg.links.link(base, img); it.Image != "" {
		it.ImageCredit = clean(credit)
	}
	return it
}

// declaresUTF8 reports whether an XML document's declaration names UTF-8
// or no encoding at all (XML's default), as opposed to another charset
// that the parser converts.
func declaresUTF8(data []byte) bool {
	head := data[:min(len(data), 512)]
	if !bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("<?xml")) {
		return true
	}
	end := bytes.Index(head, []byte("?>"))
	if end < 0 {
		return true
	}
	decl := strings.ToLower(string(head[:end]))
	i := strings.Index(decl, "encoding")
	if i < 0 {
		return true
	}
	rest := strings.TrimLeft(decl[i+len("encoding"):], " \t=")
	rest = strings.Trim(rest, `"' `)
	return strings.HasPrefix(rest, "utf-8") || strings.HasPrefix(rest, "utf8")
}

// shareImage returns the image the feed names for item i, "" when none,
// and the credit stated for it.
func shareImage(gi *gofeed.Item, orig any, i int) (img, credit string) {
	if u, credit := mediaImage(gi.Extensions); u != "" {
		return u, credit
	}
	for _, e := range gi.Enclosures {
		if e != nil && strings.HasPrefix(strings.ToLower(e.Type), "image/") {
			return e.URL, ""
		}
	}
	if gi.ITunesExt != nil && gi.ITunesExt.Image != "" {
		return gi.ITunesExt.Image, ""
	}
	if o, ok := orig.(*jsonfeed.Feed); ok && i < len(o.Items) && o.Items[i] != nil {
		if o.Items[i].Image != "" {
			return o.Items[i].Image, ""
		}
		return o.Items[i].BannerImage, ""
	}
	return "", ""
}

// mediaImage reads Media RSS: media:content with an image type or medium,
// then media:thumbnail, at the top level or inside media:group, with the
// media:credit nearest to it (the element's own, its group's, the item's).
func mediaImage(x ext.Extensions) (img, credit string) {
	m := x["media"]
	if m == nil {
		return "", ""
	}
	if u, c := mediaIn(m); u != "" {
		return u, firstOf(c, mediaCredit(m))
	}
	for _, g := range m["group"] {
		if u, c := mediaIn(g.Children); u != "" {
			return u, firstOf(c, mediaCredit(g.Children), mediaCredit(m))
		}
	}
	return "", ""
}

func mediaIn(m map[string][]ext.Extension) (img, credit string) {
	for _, c := range m["content"] {
		t, med := strings.ToLower(c.Attrs["type"]), strings.ToLower(c.Attrs["medium"])
		if c.Attrs["url"] != "" && (strings.HasPrefix(t, "image/") || med == "image") {
			return c.Attrs["url"], mediaCredit(c.Children)
		}
	}
	for _, c := range m["thumbnail"] {
		if c.Attrs["url"] != "" {
			return c.Attrs["url"], mediaCredit(c.Children)
		}
	}
	return "", ""
}

// mediaCredit returns the first non-empty media:credit among m's elements.
func mediaCredit(m map[string][]ext.Extension) string {
	for _, c := range m["credit"] {
		if v := strings.TrimSpace(c.Value); v != "" {
			return v
		}
	}
	return ""
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func date(t *time.Time) time.Time {
	if t == nil || t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// clean trims space and replaces invalid UTF-8, so hostile bytes never leak
// into normalised strings.
func clean(s string) string {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}
