// Package digesttest holds what tests and demos of package digest share: a
// set of thirty short news stories in English, French and German, each
// with a two-sentence reference summary written for it (the benchmark of
// the summaries, scored with ROUGE), and a way to publish them on a
// politetest web as a handful of publishers, so a demo crawl has stories
// to digest.
//
// The stories are the project's own invention: the places, people,
// companies and figures in them are made up.
package digesttest

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/politefetch/politefetch/extract"
)

//go:embed testdata/news/*.txt
var newsFS embed.FS

// Story is one story of the set.
type Story struct {
	ID         string // the file's name without .txt, e.g. "en-tram"
	Lang       string // "en", "fr" or "de"
	Section    string // Tech, World, Finance, Science or Sports
	Title      string
	Standfirst string   // two sentences, as a feed's description would give
	Reference  string   // the reference summary: two sentences written for it
	Paragraphs []string // the body
}

// Body returns the body's text, paragraphs separated by blank lines.
func (s Story) Body() string { return strings.Join(s.Paragraphs, "\n\n") }

// Article returns the story as extract would read it from its page: the
// headline, language, section, and a paragraph block per paragraph.
func (s Story) Article() *extract.Article {
	a := &extract.Article{
		Headline: extract.Field{Value: s.Title},
		Language: extract.Field{Value: s.Lang},
		Section:  extract.Field{Value: s.Section},
	}
	for _, p := range s.Paragraphs {
		a.Blocks = append(a.Blocks, extract.Block{Kind: extract.Paragraph, Text: p})
	}
	return a
}

// News returns the set, sorted by ID. Each call parses it afresh; the
// result is the caller's.
func News() ([]Story, error) {
	names, err := fs.Glob(newsFS, "testdata/news/*.txt")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]Story, 0, len(names))
	for _, name := range names {
		b, err := newsFS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		s, err := parseStory(strings.TrimSuffix(path.Base(name), ".txt"), string(b))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// parseStory reads "key: value" lines, a blank line, then the body's
// paragraphs separated by blank lines.
func parseStory(id, text string) (Story, error) {
	head, body, ok := strings.Cut(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n")
	if !ok {
		return Story{}, fmt.Errorf("digesttest: %s: no body", id)
	}
	s := Story{ID: id}
	for _, line := range strings.Split(head, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return Story{}, fmt.Errorf("digesttest: %s: bad header line %q", id, line)
		}
		v = strings.TrimSpace(v)
		switch k {
		case "title":
			s.Title = v
		case "section":
			s.Section = v
		case "lang":
			s.Lang = v
		case "standfirst":
			s.Standfirst = v
		case "reference":
			s.Reference = v
		default:
			return Story{}, fmt.Errorf("digesttest: %s: unknown key %q", id, k)
		}
	}
	for _, p := range strings.Split(body, "\n\n") {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			s.Paragraphs = append(s.Paragraphs, p)
		}
	}
	if s.Title == "" || s.Reference == "" || s.Lang == "" || s.Section == "" || len(s.Paragraphs) == 0 {
		return Story{}, fmt.Errorf("digesttest: %s: title, section, lang, reference and body are required", id)
	}
	return s, nil
}
