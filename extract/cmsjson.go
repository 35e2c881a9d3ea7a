package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// ErrJSON reports a body that is not the JSON expected: not JSON at all,
// or not of the shape the reader expects. The decoder's error, if any, is
// wrapped.
var ErrJSON = errors.New("extract: not the JSON expected")

// ErrMapping reports a [Mapping] that cannot be used; the *[MappingError]
// that wraps it names the field.
var ErrMapping = errors.New("extract: invalid mapping")

// MappingError names the field of a [Mapping] that is invalid and why.
// It matches [ErrMapping] with errors.Is.
type MappingError struct {
	Field  string // the Mapping's field, e.g. "Headline"
	Path   string // its value
	Reason string
}

func (e *MappingError) Error() string {
	return fmt.Sprintf("extract: mapping %s %q: %s", e.Field, e.Path, e.Reason)
}

// Unwrap returns ErrMapping.
func (e *MappingError) Unwrap() error { return ErrMapping }

// Mapping says where a CMS API's JSON states each field of an article, for
// a source whose API's fields were agreed (V2). Each field is a path into
// the JSON document: names separated by dots, each name optionally
// followed by [] (every element of an array) or [N] (its element N, from
// 0); a path may start with [] or [N] when the document is an array. For
// example "data.attributes.title", "authors[].name" or "items[0].id". A
// name is any run of characters other than '.', '[', ']' and white space
// (so "wp:term" and "_embedded" are names); a key that contains one of
// those cannot be named.
//
// An empty path means the API does not state the field, which stays zero.
// A path that finds nothing, or finds a value that is not a string or a
// number, leaves its field zero too: nothing is completed. Where a path
// finds several values, a single-valued field takes the first and
// Authors, Keywords and ID take them all. The zero Mapping is valid and
// reads nothing.
//
// A Mapping is a value; it is safe for concurrent use. Its fields have
// JSON and YAML names (headline, body_format, id_scheme, zoneless_utc, …) so a source's
// configuration can declare it.
type Mapping struct {
	Headline    string `json:"headline,omitempty" yaml:"headline,omitempty"`
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
	// Body is the article's text; BodyFormat says how it is written:
	// "html" (or ""), an HTML fragment rendered as blocks, or "text",
	// paragraphs separated by blank lines.
	Body          string `json:"body,omitempty" yaml:"body,omitempty"`
	BodyFormat    string `json:"body_format,omitempty" yaml:"body_format,omitempty"`
	Authors       string `json:"authors,omitempty" yaml:"authors,omitempty"` // names, e.g. "authors[].name"
	Published     string `json:"published,omitempty" yaml:"published,omitempty"`
	Modified      string `json:"modified,omitempty" yaml:"modified,omitempty"`
	Section       string `json:"section,omitempty" yaml:"section,omitempty"`
	Canonical     string `json:"canonical,omitempty" yaml:"canonical,omitempty"` // an absolute URL as the API gives it
	Language      string `json:"language,omitempty" yaml:"language,omitempty"`
	Keywords      string `json:"keywords,omitempty" yaml:"keywords,omitempty"` // each value one keyword, e.g. "tags[].name"
	Publisher     string `json:"publisher,omitempty" yaml:"publisher,omitempty"`
	Image         string `json:"image,omitempty" yaml:"image,omitempty"`                   // the share image's URL
	TranslationOf string `json:"translation_of,omitempty" yaml:"translation_of,omitempty"` // the original's URL or id
	// ID is the CMS's identifier for the article; IDScheme names the CMS
	// in the Identifier ("": "cms").
	ID       string `json:"id,omitempty" yaml:"id,omitempty"`
	IDScheme string `json:"id_scheme,omitempty" yaml:"id_scheme,omitempty"`
	// AccessibleForFree is a boolean (true, false, "true" or "false"):
	// false makes the article Gated, true Free.
	AccessibleForFree string `json:"accessible_for_free,omitempty" yaml:"accessible_for_free,omitempty"`
	// ZonelessUTC says that the API writes its times in UTC without an
	// offset (as WordPress's date_gmt): such a time is then read as UTC.
	// false: a time without an offset keeps only its text.
	ZonelessUTC bool `json:"zoneless_utc,omitempty" yaml:"zoneless_utc,omitempty"`
}

// jsonPath is a compiled Mapping path.
type jsonPath []pathStep

type pathStep struct {
	name  string // "" for an index step
	index int    // -1: every element; >= 0: that element
	isIdx bool
}

// compilePath parses a path; "" compiles to nil.
func compilePath(p string) (jsonPath, error) {
	if p == "" {
		return nil, nil
	}
	var out jsonPath
	for i, seg := range strings.Split(p, ".") {
		if seg == "" {
			return nil, errors.New("empty name")
		}
		name := seg
		rest := ""
		if j := strings.IndexByte(seg, '['); j >= 0 {
			name, rest = seg[:j], seg[j:]
		}
		if strings.ContainsAny(name, "] \t\r\n") {
			return nil, fmt.Errorf("invalid name %q", name)
		}
		if name == "" && i > 0 {
			return nil, errors.New("an index must follow a name")
		}
		if name != "" {
			out = append(out, pathStep{name: name})
		}
		for rest != "" {
			end := strings.IndexByte(rest, ']')
			if rest[0] != '[' || end < 0 {
				return nil, fmt.Errorf("invalid index in %q", seg)
			}
			in := rest[1:end]
			rest = rest[end+1:]
			switch {
			case in == "":
				out = append(out, pathStep{index: -1, isIdx: true})
			case isDigits(in) && len(in) < 10:
				n, _ := strconv.Atoi(in)
				out = append(out, pathStep{index: n, isIdx: true})
			default:
				return nil, fmt.Errorf("invalid index %q", in)
			}
		}
	}
	if len(out) > 64 {
		return nil, errors.New("path too long")
	}
	return out, nil
}

// maxPathValues caps the values one path may find.
const maxPathValues = 1024

// find returns the values p finds in v, in document order.
func (p jsonPath) find(v any) []any {
	if p == nil {
		return nil
	}
	cur := []any{v}
	for _, st := range p {
		var next []any
		for _, x := range cur {
			switch {
			case !st.isIdx:
				if m, ok := x.(map[string]any); ok {
					if y, ok := m[st.name]; ok {
						next = append(next, y)
					}
				}
			case st.index < 0:
				if a, ok := x.([]any); ok {
					next = append(next, a[:min(len(a), maxPathValues-len(next))]...)
				}
			default:
				if a, ok := x.([]any); ok && st.index < len(a) {
					next = append(next, a[st.index])
				}
			}
			if len(next) >= maxPathValues {
				break
			}
		}
		cur = next
	}
	return cur
}

type compiledMapping struct {
	m     Mapping
	paths map[string]jsonPath
}

// compile validates m.
func (m Mapping) compile() (*compiledMapping, error) {
	cm := &compiledMapping{m: m, paths: map[string]jsonPath{}}
	for _, f := range [...]struct{ name, path string }{
		{"Headline", m.Headline}, {"Description", m.Description}, {"Body", m.Body},
		{"Authors", m.Authors}, {"Published", m.Published}, {"Modified", m.Modified},
		{"Section", m.Section}, {"Canonical", m.Canonical}, {"Language", m.Language},
		{"Keywords", m.Keywords}, {"Publisher", m.Publisher}, {"Image", m.Image},
		{"TranslationOf", m.TranslationOf}, {"ID", m.ID}, {"AccessibleForFree", m.AccessibleForFree},
	} {
		p, err := compilePath(f.path)
		if err != nil {
			return nil, &MappingError{Field: f.name, Path: f.path, Reason: err.Error()}
		}
		cm.paths[f.name] = p
	}
	switch m.BodyFormat {
	case "", "html", "text":
	default:
		return nil, &MappingError{Field: "BodyFormat", Path: m.BodyFormat, Reason: `want "html" or "text"`}
	}
	return cm, nil
}

// Validate reports the first invalid field of m as a *[MappingError].
func (m Mapping) Validate() error {
	_, err := m.compile()
	return err
}

// Extract reads an article from one JSON document of the CMS's API. Each
// field's Source is "cms:" followed by its path. It returns a
// *[MappingError] when m is invalid, an error matching [ErrTooLarge] when
// body exceeds [DefaultMaxBytes], and one matching [ErrJSON] when body is
// not JSON.
func (m Mapping) Extract(body []byte) (*Article, error) {
	cm, err := m.compile()
	if err != nil {
		return nil, err
	}
	v, err := decodeJSON(body)
	if err != nil {
		return nil, err
	}
	return cm.article(v), nil
}

// decodeJSON decodes body, numbers kept as written.
func decodeJSON(body []byte) (any, error) {
	if len(body) > DefaultMaxBytes {
		return nil, fmt.Errorf("%w: %d bytes, cap %d", ErrTooLarge, len(body), DefaultMaxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJSON, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the document", ErrJSON)
	}
	return v, nil
}

func (cm *compiledMapping) article(v any) *Article {
	m := cm.m
	a := &Article{}
	asHTML := m.BodyFormat != "text"
	text := func(name, path string) Field {
		for _, x := range cm.paths[name].find(v) {
			if s := jsonText(x, asHTML); s != "" {
				return Field{Value: s, Source: "cms:" + path}
			}
		}
		return Field{}
	}
	texts := func(name, path string, max int) []Field {
		var out []Field
		for _, x := range cm.paths[name].find(v) {
			if s := jsonText(x, asHTML); s != "" && len(out) < max {
				out = append(out, Field{Value: s, Source: "cms:" + path})
			}
		}
		return out
	}
	instant := func(name, path string) Instant {
		f := text(name, path)
		if !f.Present() {
			return Instant{}
		}
		return instantZoneless(f, m.ZonelessUTC)
	}
	a.Headline = text("Headline", m.Headline)
	a.Description = text("Description", m.Description)
	a.Authors = texts("Authors", m.Authors, maxAuthors)
	a.Published = instant("Published", m.Published)
	a.Modified = instant("Modified", m.Modified)
	a.Section = text("Section", m.Section)
	a.Canonical = text("Canonical", m.Canonical)
	a.Language = text("Language", m.Language)
	a.Keywords = texts("Keywords", m.Keywords, maxKeywords)
	a.Publisher = text("Publisher", m.Publisher)
	a.Image = text("Image", m.Image)
	a.TranslationOf = text("TranslationOf", m.TranslationOf)
	scheme := m.IDScheme
	if scheme == "" {
		scheme = "cms"
	}
	for _, f := range texts("ID", m.ID, maxIDs) {
		a.IDs = append(a.IDs, Identifier{Scheme: scheme, Value: f.Value, Source: f.Source})
	}
	for _, x := range cm.paths["AccessibleForFree"].find(v) {
		if free, ok := ldBool(x); ok {
			a.Access, a.AccessSource = Gated, "cms:"+m.AccessibleForFree
			if free {
				a.Access = Free
			}
			break
		}
	}
	for _, x := range cm.paths["Body"].find(v) {
		s, ok := x.(string)
		if !ok || strings.TrimSpace(s) == "" {
			continue
		}
		if asHTML {
			a.Blocks = fragmentBlocks(s)
		} else {
			a.Blocks = textBlocks(s)
		}
		break
	}
	return a
}

// instantZoneless reads f as an Instant; when utc, a date-time written
// without an offset is read as UTC.
func instantZoneless(f Field, utc bool) Instant {
	in := instantOf(f.Value, f.Source)
	if in.Time.IsZero() && utc {
		for _, l := range [...]string{"2006-01-02T15:04:05", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05"} {
			if t, err := time.ParseInLocation(l, f.Value, time.UTC); err == nil {
				in.Time = t
				break
			}
		}
	}
	return in
}

// jsonText is a JSON value as a field's text: a string (its tags removed
// when asHTML and it holds markup, its entities decoded, its white space
// collapsed) or a number as written; "" for anything else.
func jsonText(v any, asHTML bool) string {
	s, ok := v.(string)
	if !ok {
		return ldString(v)
	}
	if asHTML && strings.IndexByte(s, '<') >= 0 {
		return htmlText(s)
	}
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	return collapse(s)
}

// htmlText is the text of an HTML fragment, white space collapsed.
func htmlText(s string) string {
	nodes, err := xhtml.ParseFragment(strings.NewReader(s), &xhtml.Node{Type: xhtml.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		return ""
	}
	root := &xhtml.Node{Type: xhtml.ElementNode, Data: "div"}
	for _, n := range nodes {
		root.AppendChild(n)
	}
	return textOf(root)
}

// textBlocks splits plain text into paragraphs at blank lines.
func textBlocks(s string) []Block {
	var out []Block
	s = strings.ReplaceAll(s, "\r\n", "\n")
	for _, p := range strings.Split(s, "\n\n") {
		if p = collapse(p); p != "" {
			out = append(out, Block{Kind: Paragraph, Text: p})
		}
	}
	return out
}
