package main

// The JSON Lines schema of deposits (docs/jsonl.md): one naming style
// (snake_case) at every depth, enums as strings, and a schema field on each
// line naming its version.

import (
	"time"

	"github.com/politefetch/politefetch/extract"
	"github.com/politefetch/politefetch/feed"
)

// jsonlSchema names the lines' schema and its version; a change that is
// not only an added field gets a new version.
const jsonlSchema = "politefetch.deposit/1"

type fieldLine struct {
	Value     string         `json:"value"`
	Source    string         `json:"source,omitempty"`
	Conflicts []conflictLine `json:"conflicts,omitempty"`
}

type conflictLine struct {
	Value  string `json:"value"`
	Source string `json:"source,omitempty"`
}

type instantLine struct {
	fieldLine
	Time     *time.Time `json:"time,omitempty"`
	DateOnly bool       `json:"date_only,omitempty"`
}

type blockLine struct {
	Kind    string   `json:"kind"` // paragraph, heading, list, quote, preformatted, table, caption
	Text    string   `json:"text"`
	Level   int      `json:"level,omitempty"`
	Items   []string `json:"items,omitempty"`
	Ordered bool     `json:"ordered,omitempty"`
}

type idLine struct {
	Scheme string `json:"scheme"`
	Value  string `json:"value"`
	Source string `json:"source,omitempty"`
}

type articleLine struct {
	Blocks        []blockLine  `json:"blocks"`
	Headline      *fieldLine   `json:"headline,omitempty"`
	Description   *fieldLine   `json:"description,omitempty"`
	Authors       []fieldLine  `json:"authors,omitempty"`
	Published     *instantLine `json:"published,omitempty"`
	Modified      *instantLine `json:"modified,omitempty"`
	Section       *fieldLine   `json:"section,omitempty"`
	Canonical     *fieldLine   `json:"canonical,omitempty"`
	Language      *fieldLine   `json:"language,omitempty"`
	Keywords      []fieldLine  `json:"keywords,omitempty"`
	Publisher     *fieldLine   `json:"publisher,omitempty"`
	Image         *fieldLine   `json:"image,omitempty"`
	ImageCredit   *fieldLine   `json:"image_credit,omitempty"`
	IDs           []idLine     `json:"ids,omitempty"`
	TranslationOf *fieldLine   `json:"translation_of,omitempty"`
	Access        string       `json:"access"` // unstated, free, gated
	AccessSource  string       `json:"access_source,omitempty"`
}

type excerptLine struct {
	Label       string     `json:"label"`
	Headline    string     `json:"headline"`
	Description string     `json:"description,omitempty"`
	Image       string     `json:"image,omitempty"`
	ImageCredit string     `json:"image_credit,omitempty"`
	Link        string     `json:"link"`
	ID          string     `json:"id,omitempty"`
	Published   *time.Time `json:"published,omitempty"`
}

var blockKinds = map[extract.BlockKind]string{
	extract.Paragraph: "paragraph", extract.Heading: "heading", extract.List: "list", extract.Quote: "quote",
	extract.Preformatted: "preformatted", extract.Table: "table", extract.Caption: "caption",
}

var accessNames = map[extract.Access]string{extract.AccessUnstated: "unstated", extract.Free: "free", extract.Gated: "gated"}

func field(f extract.Field) fieldLine {
	l := fieldLine{Value: f.Value, Source: f.Source}
	for _, c := range f.Conflicts {
		l.Conflicts = append(l.Conflicts, conflictLine(c))
	}
	return l
}

func optField(f extract.Field) *fieldLine {
	if !f.Present() {
		return nil
	}
	l := field(f)
	return &l
}

func optInstant(i extract.Instant) *instantLine {
	if !i.Present() {
		return nil
	}
	l := &instantLine{fieldLine: field(i.Field), DateOnly: i.DateOnly}
	if !i.Time.IsZero() {
		t := i.Time.UTC()
		l.Time = &t
	}
	return l
}

func fields(fs []extract.Field) []fieldLine {
	var out []fieldLine
	for _, f := range fs {
		out = append(out, field(f))
	}
	return out
}

func articleLineOf(a *extract.Article) *articleLine {
	if a == nil {
		return nil
	}
	l := &articleLine{
		Blocks:   []blockLine{},
		Headline: optField(a.Headline), Description: optField(a.Description), Authors: fields(a.Authors),
		Published: optInstant(a.Published), Modified: optInstant(a.Modified),
		Section: optField(a.Section), Canonical: optField(a.Canonical), Language: optField(a.Language),
		Keywords: fields(a.Keywords), Publisher: optField(a.Publisher), Image: optField(a.Image),
		ImageCredit: optField(a.ImageCredit), TranslationOf: optField(a.TranslationOf),
		Access: accessNames[a.Access], AccessSource: a.AccessSource,
	}
	if l.Access == "" {
		l.Access = "unstated"
	}
	for _, b := range a.Blocks {
		kind := blockKinds[b.Kind]
		if kind == "" {
			kind = "other"
		}
		l.Blocks = append(l.Blocks, blockLine{Kind: kind, Text: b.Text, Level: b.Level, Items: b.Items, Ordered: b.Ordered})
	}
	for _, id := range a.IDs {
		l.IDs = append(l.IDs, idLine(id))
	}
	return l
}

func excerptLineOf(e *feed.Excerpt) *excerptLine {
	if e == nil {
		return nil
	}
	l := &excerptLine{Label: e.Label, Headline: e.Headline, Description: e.Description, Image: e.Image,
		ImageCredit: e.ImageCredit, Link: e.Link, ID: e.ID}
	if !e.Published.IsZero() {
		t := e.Published.UTC()
		l.Published = &t
	}
	return l
}
