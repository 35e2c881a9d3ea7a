package main

import (
	"bytes"
	"errors"
	"testing"
)

// A YAML syntax error is reported at the line of the fault, not the line
// where the enclosing mapping began.
func TestParseConfig_SyntaxErrorAtItsLine(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line      int
	}{
		{"mis-indented key", "crawler:\n  name: Bot\n  version: \"1\"\n   info_url: https://x.example/\nsources: []\n", 4},
		{"unclosed flow mapping", "crawler:\n  name: Bot\npolicy: {preset: strict-news\nsources: []\n", 3},
		{"tab indentation", "crawler:\n  name: Bot\nsources:\n\t- id: a\n", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig("c.yaml", []byte(tc.doc))
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Line != tc.line {
				t.Fatalf("ParseConfig: %v, want a ConfigError at line %d", err, tc.line)
			}
		})
	}
}

// FuzzSyntaxErrorLine: locating a syntax error never fails, and names a
// line of the file (or the one after its last).
func FuzzSyntaxErrorLine(f *testing.F) {
	f.Add([]byte("a:\n  b: 1\n   c: 2\n"))
	f.Add([]byte("a: {b: 1\n"))
	f.Add([]byte("- [\n- ]\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		_, err := ParseConfig("c.yaml", doc)
		var ce *ConfigError
		if errors.As(err, &ce) && ce.Line > bytes.Count(doc, []byte("\n"))+1 {
			t.Fatalf("line %d past the end of a %d-line file", ce.Line, bytes.Count(doc, []byte("\n"))+1)
		}
	})
}
