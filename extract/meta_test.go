package extract

import (
	"bytes"
	"encoding/json"
	"flag"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
)

// update rewrites the golden files of the package's tests instead of
// comparing with them: go test ./extract/ -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenPage is the URL every page in testdata/meta is read as.
const goldenPage = "https://news.example/2026/01/02/story/"

func metaOf(t testing.TB, page []byte, pageURL string) *Article {
	t.Helper()
	doc, err := xhtml.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var u *url.URL
	if pageURL != "" {
		if u, err = url.Parse(pageURL); err != nil {
			t.Fatal(err)
		}
	}
	a := &Article{}
	readMeta(doc, u, a)
	return a
}

// checkGolden compares v, as indented JSON, with the file golden.
func checkGolden(t *testing.T, golden string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\n got: %s\nwant: %s", golden, got, want)
	}
}

// TestMetaGolden reads every page of testdata/meta and compares its
// metadata with the page's .golden.json.
func TestMetaGolden(t *testing.T) {
	pages, _ := filepath.Glob("testdata/meta/*.html")
	if len(pages) == 0 {
		t.Fatal("no pages in testdata/meta")
	}
	for _, p := range pages {
		name := strings.TrimSuffix(filepath.Base(p), ".html")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			a := metaOf(t, b, goldenPage)
			checkGolden(t, strings.TrimSuffix(p, ".html")+".golden.json", a)
			checkStated(t, b, a)
		})
	}
}

// TestMeta_V5_NoMetadataNoFields: a page that states no metadata for
// machines (though its URL has a date, its text is plainly English and its
// byline is styled as one) gives an Article whose metadata is all zero but
// for the date its byline shows, copied as written.
func TestMeta_V5_NoMetadataNoFields(t *testing.T) {
	b, err := os.ReadFile("testdata/meta/none.html")
	if err != nil {
		t.Fatal(err)
	}
	a := metaOf(t, b, goldenPage)
	if a.Published.Value != "2 January 2026" || a.Published.Source != "byline" || !a.Published.DateOnly {
		t.Errorf("Published = %+v, want the byline's date", a.Published)
	}
	a.Published = Instant{}
	if !reflect.DeepEqual(a, &Article{}) {
		t.Errorf("fields invented for a page without metadata: %+v", a)
	}
	for _, page := range []string{"", "<html></html>", "<p>just text</p>", "<title>Only a title</title>"} {
		if a := metaOf(t, []byte(page), goldenPage); !reflect.DeepEqual(a, &Article{}) {
			t.Errorf("%q: fields invented: %+v", page, a)
		}
	}
}

// checkStated fails for any field whose value the page does not state:
// every value (or, for a URL, its path, or its value with "_" for "-")
// must appear in the page's source, entities decoded, white space
// collapsed (V5: copied, never completed).
func checkStated(t *testing.T, page []byte, a *Article) {
	t.Helper()
	src := strings.NewReplacer(`\n`, " ", `\t`, " ", `\"`, `"`, `\/`, "/").Replace(string(page))
	src = collapse(html.UnescapeString(src))
	stated := func(what, v string) {
		if v == "" {
			return
		}
		if strings.Contains(src, v) || strings.Contains(src, strings.ReplaceAll(v, "-", "_")) {
			return
		}
		if u, err := url.Parse(v); err == nil && u.Host != "" {
			if p := u.RequestURI(); p != "/" && strings.Contains(src, p) {
				return
			}
		}
		t.Errorf("%s %q is not stated by the page", what, v)
	}
	fields := map[string]Field{
		"Headline": a.Headline, "Description": a.Description, "Section": a.Section, "Canonical": a.Canonical,
		"Language": a.Language, "Publisher": a.Publisher, "Image": a.Image, "TranslationOf": a.TranslationOf,
		"Published": a.Published.Field, "Modified": a.Modified.Field,
	}
	for _, f := range a.Authors {
		fields["Authors "+f.Value] = f
	}
	for _, f := range a.Keywords {
		fields["Keywords "+f.Value] = f
	}
	for what, f := range fields {
		stated(what, f.Value)
		if f.Value == "" && (f.Source != "" || len(f.Conflicts) > 0) {
			t.Errorf("%s: a source or conflicts without a value: %+v", what, f)
		}
		if f.Value != "" && f.Source == "" {
			t.Errorf("%s %q has no source", what, f.Value)
		}
		for _, c := range f.Conflicts {
			stated(what+" conflict", c.Value)
		}
	}
	for _, id := range a.IDs {
		stated("ID", id.Value)
		if id.Source == "" || id.Scheme == "" {
			t.Errorf("ID %+v lacks its scheme or source", id)
		}
	}
	if (a.Access == AccessUnstated) != (a.AccessSource == "") {
		t.Errorf("Access %v with source %q", a.Access, a.AccessSource)
	}
}

// BenchmarkReadMeta reads the metadata of every page in testdata/meta
// from its parsed tree (the parse is not measured).
func BenchmarkReadMeta(b *testing.B) {
	pages, _ := filepath.Glob("testdata/meta/*.html")
	var docs []*xhtml.Node
	for _, p := range pages {
		raw, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		doc, err := xhtml.Parse(bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, doc)
	}
	u, _ := url.Parse(goldenPage)
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			readMeta(d, u, &Article{})
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(docs)), "ns/page")
}

func TestCollapse(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                     "",
		"a b":                  "a b",
		" a":                   "a",
		"a ":                   "a",
		"a  b":                 "a b",
		"a\nb":                 "a b",
		"Jane\u00a0Writer":     "Jane Writer",
		"caf\u00e9 cr\u00e8me": "caf\u00e9 cr\u00e8me",
		"\u3000x\u2009y":       "x y",
	} {
		if got := collapse(in); got != want {
			t.Errorf("collapse(%q) = %q, want %q", in, got, want)
		}
	}
}
