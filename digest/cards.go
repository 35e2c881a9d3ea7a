package digest

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/politefetch/politefetch/extract"
)

// Categories are the digest's own categories, in the order a digest shows
// them when the reader names none. A source may name another; it is
// shown after these, in alphabetical order.
var Categories = []string{"Tech", "World", "Finance", "Science", "Sports"}

// Defaults of a Builder's and Preferences' zero fields.
const (
	DefaultWordsPerMinute = 230
	DefaultMaxPerCategory = 8
	DefaultWindow         = 24 * time.Hour
	DefaultTitle          = "Today's digest"
	// DefaultCategory is a story's category when neither its source nor its
	// page names one.
	DefaultCategory = "News"
)

// Publisher is how a source appears on its cards: the brand and logo its
// configuration names, and its category.
type Publisher struct {
	// Source is the source's ID, as in its deposits.
	Source string
	// Name is the publisher's brand as readers see it. "": Source.
	Name string
	// Logo is the address of the publisher's logo, shown beside its name
	// (hotlinked, never copied). "": none.
	Logo string
	// Category is the source's category. "": each article's own section.
	Category string
}

func (p Publisher) name() string { return cmp.Or(p.Name, p.Source) }

// Image is a story's share image as a card shows it: hotlinked from the
// publisher, with its credit, and only when the share-image check passed.
type Image struct {
	URL    string // the publisher's image address
	Alt    string // the page's alternative text; "" when it gives none
	Credit string // shown under the image; "": the publisher's name
}

// Story is one story to digest: what a deposit says of an article, with
// its publisher. Either Article is set (the article was read in full) or
// Excerpt is true and Description is the feed's own description.
type Story struct {
	Publisher Publisher
	// URL is the article's canonical address: what "Read full story"
	// links to.
	URL       string
	Headline  string
	Published time.Time
	// Article is the article as read; nil for an excerpt.
	Article *extract.Article
	// Excerpt reports that the story is kept only as its feed describes it
	// (a source without a full-text licence, or a refused article).
	Excerpt bool
	// Description is the feed's description of the story (for an excerpt)
	// or the page's (for an article).
	Description string
	// Image is set only where the story's share image passed the check
	// that it may be shown; nil: no image.
	Image *Image
}

// Preferences are a reader's choice of stories. The zero value shows every
// category and source, at most DefaultMaxPerCategory stories each, of the
// last DefaultWindow.
type Preferences struct {
	// Categories, when set, are the only categories shown, in this order.
	Categories []string
	// ExcludeCategories are never shown.
	ExcludeCategories []string
	// Sources, when set, are the only sources shown (by source ID or
	// publisher name).
	Sources []string
	// ExcludeSources are never shown (by source ID or publisher name).
	ExcludeSources []string
	// MaxPerCategory bounds each category's cards. 0: DefaultMaxPerCategory.
	MaxPerCategory int
	// Window is how far back the day's stories go. 0: DefaultWindow.
	Window time.Duration
}

// Card is one story on the page.
type Card struct {
	Category  string
	Source    string // the source's ID
	Brand     string // the publisher's name
	Logo      string // the publisher's logo address; "" when none
	Headline  string
	Lang      string   // the article's language as its page states it; "" when unknown
	Summary   []string // at most MaxSentences sentences
	Excerpt   bool     // the summary is the feed's description, labelled so
	URL       string   // the canonical address
	Published time.Time
	Age       string // "15 mins ago", at the digest's instant
	Words     int    // the article's word count; 0 for an excerpt
	Image     *Image
}

// ReadingTime returns the card's reading time, "4 min read", at
// DefaultWordsPerMinute; "" for an excerpt, whose length is unknown.
func (c Card) ReadingTime() string {
	if c.Words == 0 {
		return ""
	}
	return fmt.Sprintf("%d min read", max(1, (c.Words+DefaultWordsPerMinute-1)/DefaultWordsPerMinute))
}

// ReadMore returns the link's text: "Read full story on <Brand> →",
// the arrow joined to the name by a no-break space.
func (c Card) ReadMore() string { return "Read full story on " + c.Brand + "\u00a0→" }

// SummaryText returns the summary's sentences joined by spaces.
func (c Card) SummaryText() string { return strings.Join(c.Summary, " ") }

// Section is one category's cards, newest first.
type Section struct {
	Category string
	Cards    []Card
}

// Digest is a day's digest: sections of cards by category.
type Digest struct {
	Title    string
	Built    time.Time // the instant the ages are counted from
	Sections []Section
}

// Cards returns the number of cards in the digest.
func (d *Digest) Cards() int {
	n := 0
	for _, s := range d.Sections {
		n += len(s.Cards)
	}
	return n
}

// Builder makes digests. The zero value summarizes with Extractive; it is
// safe for concurrent use if its Summarizer is.
type Builder struct {
	// Summarizer summarizes each article read in full. Nil: Extractive{}.
	// Whatever it returns is bounded (Bound) before it is shown; where it
	// fails, the card shows the page's own description, bounded the same
	// way, and a story with neither is left out.
	Summarizer Summarizer
	// MaxChars is the fair-use bound of every card's summary. 0:
	// DefaultMaxChars.
	MaxChars int
	// Title is the digest's title. "": DefaultTitle.
	Title string
}

// Build makes the digest of stories at the instant now for a reader's
// preferences: the stories published in the window before now (a story
// dated a little ahead of now, by a publisher's clock, counts as just
// published), of the categories and sources preferred, deduplicated by
// canonical URL (an article read in full wins over an excerpt of it, then
// the newest), newest first within each category and at most
// MaxPerCategory each. Only the stories kept are summarized. It returns
// ctx's error if ctx ends.
func (b *Builder) Build(ctx context.Context, now time.Time, stories []Story, p Preferences) (*Digest, error) {
	window := cmp.Or(p.Window, DefaultWindow)
	perCat := p.MaxPerCategory
	if perCat <= 0 {
		perCat = DefaultMaxPerCategory
	}
	byURL := map[string]cand{}
	for _, s := range stories {
		at := s.Published
		if at.After(now) {
			if at.Sub(now) > time.Hour {
				continue // not a clock's error: not today's story
			}
			at = now
		}
		if at.IsZero() || now.Sub(at) > window || s.URL == "" || s.Headline == "" {
			continue
		}
		if s.Article != nil && s.Article.Access == extract.Gated {
			continue // gated content is never shown
		}
		cat := categoryOf(s)
		if !p.wants(cat, s.Publisher) {
			continue
		}
		key := urlKey(s.URL)
		if old, ok := byURL[key]; ok {
			oldFull, full := !old.s.Excerpt && old.s.Article != nil, !s.Excerpt && s.Article != nil
			if oldFull && !full || oldFull == full && !at.After(old.at) {
				continue
			}
		}
		byURL[key] = cand{s, cat, at}
	}
	groups := map[string][]cand{}
	for _, c := range byURL {
		groups[c.cat] = append(groups[c.cat], c)
	}
	d := &Digest{Title: cmp.Or(b.Title, DefaultTitle), Built: now}
	for _, cat := range p.order(groups) {
		cs := groups[cat]
		slices.SortFunc(cs, func(x, y cand) int {
			if c := y.at.Compare(x.at); c != 0 {
				return c
			}
			return strings.Compare(x.s.URL, y.s.URL)
		})
		sec := Section{Category: cat}
		for _, c := range cs {
			if len(sec.Cards) == perCat {
				break
			}
			card, ok, err := b.card(ctx, now, c.s, c.cat, c.at)
			if err != nil {
				return nil, err
			}
			if ok {
				sec.Cards = append(sec.Cards, card)
			}
		}
		if len(sec.Cards) > 0 || len(p.Categories) > 0 {
			d.Sections = append(d.Sections, sec) // a category the reader named shows, even empty
		}
	}
	return d, nil
}

func (b *Builder) card(ctx context.Context, now time.Time, s Story, cat string, at time.Time) (Card, bool, error) {
	if err := ctx.Err(); err != nil {
		return Card{}, false, err
	}
	c := Card{
		Category: cat, Source: s.Publisher.Source, Brand: s.Publisher.name(), Logo: s.Publisher.Logo,
		Headline: s.Headline, URL: s.URL, Published: at, Age: Age(now, at), Excerpt: s.Excerpt, Image: s.Image,
	}
	if c.Image != nil && c.Image.Credit == "" {
		img := *c.Image
		img.Credit = c.Brand
		c.Image = &img
	}
	if !s.Excerpt && s.Article != nil {
		sum := b.Summarizer
		if sum == nil {
			sum = Extractive{MaxChars: b.MaxChars}
		}
		got, err := sum.Summarize(ctx, s.Article)
		if ctx.Err() != nil {
			return Card{}, false, ctx.Err()
		}
		if err == nil {
			c.Summary = Bound(got.Sentences, b.MaxChars)
		}
		c.Words = s.Article.WordCount()
		c.Lang = s.Article.Language.Value
	}
	if len(c.Summary) == 0 {
		// An excerpt, or an article its summarizer could not summarize:
		// the publisher's own description.
		c.Summary = Bound(Sentences(s.Description), b.MaxChars)
	}
	if len(c.Summary) == 0 && !c.Excerpt {
		return Card{}, false, nil
	}
	return c, true, nil
}

// categoryOf is the source's category, else the article's section, each
// named as the digest names its own categories.
func categoryOf(s Story) string {
	if c := canonicalCategory(s.Publisher.Category); c != "" {
		return c
	}
	if s.Article != nil {
		if c := canonicalCategory(s.Article.Section.Value); c != "" {
			return c
		}
	}
	return DefaultCategory
}

// canonicalCategory names a category as the digest does: its own five
// under their usual other names, any other as given.
func canonicalCategory(c string) string {
	c = collapse(c)
	switch strings.ToLower(c) {
	case "tech", "technology", "technologie", "technik", "digital":
		return "Tech"
	case "world", "international", "monde", "welt", "ausland", "politics", "politique", "politik":
		return "World"
	case "finance", "business", "economy", "markets", "économie", "wirtschaft", "finanzen":
		return "Finance"
	case "science", "sciences", "wissenschaft", "wissen":
		return "Science"
	case "sports", "sport":
		return "Sports"
	}
	return c
}

func (p Preferences) wants(cat string, pub Publisher) bool {
	has := func(list []string, vs ...string) bool {
		for _, x := range list {
			for _, v := range vs {
				if v != "" && strings.EqualFold(collapse(x), v) {
					return true
				}
			}
		}
		return false
	}
	cats := make([]string, len(p.Categories))
	for i, c := range p.Categories {
		cats[i] = canonicalCategory(c)
	}
	if len(cats) > 0 && !has(cats, cat) || has(p.ExcludeCategories, cat) {
		return false
	}
	if len(p.Sources) > 0 && !has(p.Sources, pub.Source, pub.Name) || has(p.ExcludeSources, pub.Source, pub.Name) {
		return false
	}
	return true
}

// order returns the categories of groups in the order shown: the reader's,
// else Categories and then the others alphabetically.
func (p Preferences) order(groups map[string][]cand) []string {
	var out []string
	if len(p.Categories) > 0 {
		for _, c := range p.Categories {
			if c = canonicalCategory(c); !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		return out
	}
	for _, c := range Categories {
		if groups[c] != nil {
			out = append(out, c)
		}
	}
	var rest []string
	for c := range groups {
		if !slices.Contains(Categories, c) {
			rest = append(rest, c)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// cand is a story kept for the digest, with its category and instant.
type cand struct {
	s   Story
	cat string
	at  time.Time
}

// urlKey is the canonical URL as compared: scheme and host lower case, no
// fragment, no default port, no trailing slash.
func urlKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Scheme, u.Host, u.Fragment, u.RawFragment = strings.ToLower(u.Scheme), strings.ToLower(u.Host), "", ""
	u.Host = strings.TrimSuffix(strings.TrimSuffix(u.Host, ":443"), ":80")
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u.String()
}

// Age says how long before now t was, as a card shows it: "just now",
// "1 min ago", "15 mins ago", "1 hour ago", "3 hours ago", "1 day ago",
// "2 days ago". A t after now is "just now".
func Age(now, t time.Time) string {
	d := now.Sub(t)
	plural := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit + " ago"
		}
		return fmt.Sprintf("%d %ss ago", n, unit)
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "min")
	case d < 24*time.Hour:
		return plural(int(d/time.Hour), "hour")
	}
	return plural(int(d/(24*time.Hour)), "day")
}
