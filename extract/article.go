package extract

import (
	"strings"
	"time"
)

// BlockKind says what a [Block] of an article's body is.
type BlockKind uint8

// The kinds of body block, in no particular order.
const (
	Paragraph    BlockKind = iota + 1
	Heading                // Level says which (1 to 6)
	List                   // Items holds the entries; Ordered says whether numbered
	Quote                  // a block quotation
	Preformatted           // text kept as written, line breaks included
	Table                  // rendered as text: a line per row, cells separated by " | "
	Caption                // a figure's caption: the text only, never the image
)

// Block is one element of an article's body, in reading order.
type Block struct {
	Kind    BlockKind
	Text    string   // the block's plain text (for a List, its items joined by newlines)
	Level   int      // Heading: 1 to 6; otherwise 0
	Items   []string // List: the entries in order; otherwise nil
	Ordered bool     // List: numbered (<ol>) rather than bulleted
}

// Access says whether the publisher marks an article as free to read.
type Access uint8

const (
	// AccessUnstated: the page says nothing about access (the zero value).
	AccessUnstated Access = iota
	// Free: the page states the article is free to read.
	Free
	// Gated: the page states a paywall, subscription or login wall.
	Gated
)

// Field is one metadata value copied from the page, with where it came from.
// The zero Field (Value "") means the page does not state it.
type Field struct {
	Value  string // as written by the publisher, whitespace collapsed
	Source string // where it was read, e.g. `json-ld:NewsArticle.headline`, `meta[property=og:title]`
	// Conflicts lists other values less trusted sources gave, when they differ.
	Conflicts []Conflict `json:",omitempty"`
}

// Conflict is a value a less trusted source stated for a field, which lost.
type Conflict struct {
	Value  string
	Source string
}

// Present reports whether the page stated the field.
func (f Field) Present() bool { return f.Value != "" }

// Instant is a date or date-time copied as written. Time is set when the text
// parses; DateOnly is true when the publisher gave a date without a time (then
// Time is midnight UTC of that date and must not be read as an instant).
type Instant struct {
	Field
	Time     time.Time `json:",omitzero"`
	DateOnly bool      `json:",omitempty"`
}

// Identifier is a CMS identifier for the article, with where it was read.
type Identifier struct {
	Scheme string // e.g. "wordpress", "json-ld", "arc", "drupal", "ghost"
	Value  string
	Source string
}

// Article is what a page or a CMS API says about one article: the body as
// ordered blocks and the metadata the publisher stated, each copied from
// where it was written. A field the publisher did not state is left zero.
type Article struct {
	Blocks []Block

	Headline    Field
	Description Field // standfirst, or the description the page gives
	Authors     []Field
	Published   Instant
	Modified    Instant
	Section     Field // section or category
	Canonical   Field // absolute URL
	Language    Field // BCP 47 tag as written
	Keywords    []Field
	Publisher   Field // publisher or brand name
	Image       Field // share image URL (a URL only; never fetched here)
	// ImageCredit is the share image's credit as the publisher states it
	// for that image (schema.org creditText, creator or author,
	// copyrightHolder or copyrightNotice; WordPress's IPTC credit or
	// copyright); zero when none is stated for the Image chosen.
	ImageCredit Field
	IDs         []Identifier
	// TranslationOf is the URL or identifier of the original, set only when
	// the page designates it unambiguously.
	TranslationOf Field
	Access        Access
	AccessSource  string // where Access was read; "" when AccessUnstated
}

// Text renders the body as plain text, blocks separated by blank lines.
func (a *Article) Text() string {
	var b strings.Builder
	for i, bl := range a.Blocks {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(bl.Text)
	}
	return b.String()
}

// WordCount counts the words of the body's text.
func (a *Article) WordCount() int {
	n := 0
	for _, bl := range a.Blocks {
		n += len(strings.Fields(bl.Text))
	}
	return n
}
