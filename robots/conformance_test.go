package robots

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// confCase is one check of testdata/conformance.txt.
type confCase struct {
	name, source string
	body         []byte
	line         int
	kind         string
	args         []string
}

// loadConformance reads the table (format described at its top).
func loadConformance(tb testing.TB) []confCase {
	tb.Helper()
	data, err := os.ReadFile("testdata/conformance.txt")
	if err != nil {
		tb.Fatal(err)
	}
	var cases []confCase
	var name, source string
	var body []string
	inBody, inChecks := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "=== "):
			h, src, ok := strings.Cut(l[4:], "|")
			if !ok {
				tb.Fatalf("line %d: case header without source", n)
			}
			name, source = strings.TrimSpace(h), strings.TrimSpace(src)
			body, inBody, inChecks = nil, true, false
		case inBody && l == "---":
			inBody, inChecks = false, true
		case inBody:
			body = append(body, l)
		case inChecks && strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#"):
			fields, err := splitQuoted(l)
			if err != nil || len(fields) < 2 {
				tb.Fatalf("line %d: bad check %q: %v", n, l, err)
			}
			var b []byte
			if len(body) == 1 && strings.HasPrefix(body[0], `"`) {
				s, err := strconv.Unquote(body[0])
				if err != nil {
					tb.Fatalf("line %d: body: %v", n, err)
				}
				b = []byte(s)
			} else if len(body) > 0 {
				b = []byte(strings.Join(body, "\n") + "\n")
			}
			cases = append(cases, confCase{name: name, source: source, body: b, line: n, kind: fields[0], args: fields[1:]})
		}
	}
	return cases
}

func splitQuoted(l string) ([]string, error) {
	var out []string
	for {
		l = strings.TrimLeft(l, " \t")
		if l == "" {
			return out, nil
		}
		if l[0] == '"' {
			q, err := strconv.QuotedPrefix(l)
			if err != nil {
				return nil, err
			}
			s, _ := strconv.Unquote(q)
			out = append(out, s)
			l = l[len(q):]
			continue
		}
		i := strings.IndexAny(l, " \t")
		if i < 0 {
			i = len(l)
		}
		out = append(out, l[:i])
		l = l[i:]
	}
}

// TestConformance runs every check of the RFC 9309 / Google conformance
// table (R1, D1, S3's "RFC 9309 for every feed, page and image").
func TestConformance(t *testing.T) {
	t.Parallel()
	cases := loadConformance(t)
	names := map[string]bool{}
	for _, c := range cases {
		if c.source == "" {
			t.Errorf("case %s cites no source", c.name)
		}
		names[c.name] = true
	}
	if len(names) < 120 || len(cases) < 120 {
		t.Errorf("conformance table has %d cases and %d checks, want at least 120 of each", len(names), len(cases))
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/L%d", c.name, c.line), func(t *testing.T) {
			t.Parallel()
			r := Parse(c.body)
			switch c.kind {
			case "allow", "disallow":
				if len(c.args) != 2 {
					t.Fatalf("line %d: want agent and URL", c.line)
				}
				want := c.kind == "allow"
				if got := r.Allowed(c.args[0], c.args[1]); got != want {
					d := r.Explain(c.args[0], c.args[1])
					t.Errorf("line %d [%s]: Allowed(%q, %q) = %v, want %v (group %q, rule %q, path %q)",
						c.line, c.source, c.args[0], c.args[1], got, want, d.Group, d.Rule, d.Path)
				}
				if d := r.Explain(c.args[0], c.args[1]); d.Allowed != want {
					t.Errorf("line %d: Explain(%q, %q).Allowed = %v, want %v", c.line, c.args[0], c.args[1], d.Allowed, want)
				}
			case "delay":
				d, ok := r.CrawlDelay(c.args[0])
				if c.args[1] == "none" {
					if ok {
						t.Errorf("line %d [%s]: CrawlDelay(%q) = %v, true; want none", c.line, c.source, c.args[0], d)
					}
					return
				}
				f, err := strconv.ParseFloat(c.args[1], 64)
				if err != nil {
					t.Fatal(err)
				}
				if want := time.Duration(f * float64(time.Second)); !ok || d != want {
					t.Errorf("line %d [%s]: CrawlDelay(%q) = %v, %v; want %v", c.line, c.source, c.args[0], d, ok, want)
				}
			case "sitemaps":
				want := c.args
				if len(want) == 1 && want[0] == "none" {
					want = nil
				}
				if got := r.Sitemaps(); strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("line %d [%s]: Sitemaps() = %q, want %q", c.line, c.source, got, want)
				}
			default:
				t.Fatalf("line %d: unknown check %q", c.line, c.kind)
			}
		})
	}
}
