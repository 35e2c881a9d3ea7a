package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/politefetch/politefetch/extract"
)

var snake = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// checkJSONLine fails when a JSON line is not of the documented schema:
// snake_case keys at every depth, the schema's version, blocks' kinds and
// access as words.
func checkJSONLine(t *testing.T, line []byte) {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(line, &v); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if v["schema"] != jsonlSchema {
		t.Errorf("schema %v, want %q", v["schema"], jsonlSchema)
	}
	var walk func(path string, x any)
	walk = func(path string, x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, e := range x {
				if !snake.MatchString(k) {
					t.Errorf("key %s.%s is not snake_case", path, k)
				}
				walk(path+"."+k, e)
			}
		case []any:
			for _, e := range x {
				walk(path+"[]", e)
			}
		}
	}
	walk("", v)
	if a, ok := v["article"].(map[string]any); ok {
		if _, ok := a["access"].(string); !ok {
			t.Errorf("article.access %v is not a word", a["access"])
		}
		for _, b := range a["blocks"].([]any) {
			if _, ok := b.(map[string]any)["kind"].(string); !ok {
				t.Errorf("a block's kind %v is not a word", b)
			}
		}
	}
}

// An article with every field set writes the schema: every key snake_case,
// every enum a word.
func TestJSONL_OneNamingStyleEnumsAsWords(t *testing.T) {
	f := extract.Field{Value: "v", Source: "s", Conflicts: []extract.Conflict{{Value: "w", Source: "t"}}}
	a := &extract.Article{
		Blocks:   []extract.Block{{Kind: extract.Paragraph, Text: "p"}, {Kind: extract.List, Items: []string{"a"}, Ordered: true}},
		Headline: f, Description: f, Authors: []extract.Field{f}, Section: f, Canonical: f, Language: f,
		Published: extract.Instant{Field: f, DateOnly: true}, Keywords: []extract.Field{f}, Publisher: f, Image: f,
		ImageCredit: f, IDs: []extract.Identifier{{Scheme: "wordpress", Value: "1", Source: "s"}}, TranslationOf: f,
		Access: extract.Gated, AccessSource: "json-ld",
	}
	l := depositLine{Schema: jsonlSchema, Source: "s1", Key: "k", Kind: "article", Article: articleLineOf(a)}
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	checkJSONLine(t, b)
	if l.Article.Access != "gated" || l.Article.Blocks[1].Kind != "list" {
		t.Errorf("access %q, block kind %q", l.Article.Access, l.Article.Blocks[1].Kind)
	}
}
