package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

var jsonAPIMapping = Mapping{
	Headline:          "data.attributes.title",
	Description:       "data.attributes.body.summary",
	Body:              "data.attributes.body.value",
	Authors:           "included[].attributes.display_name",
	Published:         "data.attributes.created",
	Modified:          "data.attributes.changed",
	Canonical:         "data.attributes.path.url",
	Language:          "data.attributes.langcode",
	Keywords:          "included[2].attributes.name",
	ID:                "data.id",
	IDScheme:          "drupal",
	AccessibleForFree: "data.attributes.field_free",
}

// TestMapping_V2 reads a CMS API's JSON through the fields a source
// declared.
func TestMapping_V2(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/cmsjson/jsonapi.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := jsonAPIMapping.Extract(b)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "testdata/cmsjson/jsonapi.golden.json", a)
	if a.Headline.Value != "Tram line opens & fares fall" || a.Headline.Source != "cms:data.attributes.title" {
		t.Errorf("headline %+v", a.Headline)
	}
	if want := time.Date(2026, 1, 2, 7, 0, 0, 0, time.UTC); !a.Published.Time.Equal(want) {
		t.Errorf("published %+v", a.Published)
	}
	if len(a.Authors) != 2 || a.Authors[1].Value != "Tom Berg" || len(a.Keywords) != 1 {
		t.Errorf("authors %+v keywords %+v", a.Authors, a.Keywords)
	}
	if len(a.IDs) != 1 || a.IDs[0] != (Identifier{Scheme: "drupal", Value: "5f0c2d1e-9a7b-4c3d-8e2f-1a2b3c4d5e6f", Source: "cms:data.id"}) {
		t.Errorf("ids %+v", a.IDs)
	}
	if a.Access != Gated || len(a.Blocks) != 2 || a.Blocks[0].Text != "The new line runs every five minutes." {
		t.Errorf("access %v, blocks %+v", a.Access, a.Blocks)
	}
	if a.Section.Present() || a.Publisher.Present() || a.Image.Present() {
		t.Errorf("fields the mapping does not name are set: %+v", a)
	}
}

func TestMapping_TextBodyAndZonelessUTC(t *testing.T) {
	t.Parallel()
	body := []byte(`[{"story":{"headline":"Plain","text":"First para\nsame para.\n\nSecond para.","ts":"2026-01-02 10:00:00","local":"2026-01-02T10:00:00","id":77}}]`)
	m := Mapping{Headline: "[0].story.headline", Body: "[0].story.text", BodyFormat: "text", Published: "[0].story.ts", ID: "[0].story.id", ZonelessUTC: true}
	a, err := m.Extract(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Blocks) != 2 || a.Blocks[0].Text != "First para same para." {
		t.Errorf("blocks %+v", a.Blocks)
	}
	if !a.Published.Time.Equal(time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)) || a.Published.Value != "2026-01-02 10:00:00" {
		t.Errorf("published %+v", a.Published)
	}
	if len(a.IDs) != 1 || a.IDs[0].Value != "77" || a.IDs[0].Scheme != "cms" {
		t.Errorf("ids %+v", a.IDs)
	}
	m.ZonelessUTC = false
	m.Published = "[0].story.local"
	if a, _ := m.Extract(body); !a.Published.Time.IsZero() || a.Published.Value != "2026-01-02T10:00:00" {
		t.Errorf("a zone-less time without ZonelessUTC: %+v", a.Published)
	}
}

// TestMapping_NothingInvented: the zero Mapping, and paths that find
// nothing or find objects, give an empty Article.
func TestMapping_NothingInvented(t *testing.T) {
	t.Parallel()
	body := []byte(`{"a":{"b":[1,2]},"o":{"x":"y"},"t":true}`)
	for _, m := range []Mapping{{}, {Headline: "missing", Authors: "a.c[]", Published: "o", Canonical: "a.b", Body: "o.x.y", AccessibleForFree: "o"}} {
		a, err := m.Extract(body)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, &Article{}) {
			t.Errorf("%+v invented %+v", m, a)
		}
	}
}

func TestMapping_InvalidNamesTheField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		m     Mapping
		field string
	}{
		{Mapping{Headline: "a..b"}, "Headline"},
		{Mapping{Authors: "authors[].name["}, "Authors"},
		{Mapping{Published: "a[x]"}, "Published"},
		{Mapping{ID: "a.[0]"}, "ID"},
		{Mapping{Section: "a]b"}, "Section"},
		{Mapping{Image: "a b"}, "Image"},
		{Mapping{Keywords: "."}, "Keywords"},
		{Mapping{BodyFormat: "markdown"}, "BodyFormat"},
	} {
		err := c.m.Validate()
		var me *MappingError
		if !errors.As(err, &me) || me.Field != c.field || !errors.Is(err, ErrMapping) {
			t.Errorf("%+v: error %v, want a MappingError for %s", c.m, err, c.field)
			continue
		}
		if _, err := c.m.Extract([]byte(`{}`)); !errors.Is(err, ErrMapping) {
			t.Errorf("Extract with %+v: %v", c.m, err)
		}
	}
	if err := jsonAPIMapping.Validate(); err != nil {
		t.Errorf("a valid mapping: %v", err)
	}
	if _, err := jsonAPIMapping.Extract([]byte(`{`)); !errors.Is(err, ErrJSON) {
		t.Errorf("truncated JSON: %v", err)
	}
}

// TestMapping_FanOutIsCapped: a path over a huge array finds at most
// maxPathValues values, and lists keep at most their caps.
func TestMapping_FanOutIsCapped(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	for i := range 5000 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"n":"name %d"}`, i)
	}
	b := []byte(`{"a":[` + sb.String() + `]}`)
	p, _ := compilePath("a[].n")
	if got := len(p.find(mustJSON(t, b))); got != maxPathValues {
		t.Errorf("found %d values, want the cap %d", got, maxPathValues)
	}
	a, err := Mapping{Authors: "a[].n", Keywords: "a[].n"}.Extract(b)
	if err != nil || len(a.Authors) != maxAuthors || len(a.Keywords) != maxKeywords {
		t.Errorf("%v: %d authors, %d keywords", err, len(a.Authors), len(a.Keywords))
	}
}

func mustJSON(t *testing.T, b []byte) any {
	v, err := decodeJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func FuzzMappingPath(f *testing.F) {
	for _, p := range []string{"data.attributes.title", "authors[].name", "[0].a[1][]", "wp:term[][]", "a..b", "a[x]"} {
		f.Add(p, `{"data":{"attributes":{"title":"t"}},"authors":[{"name":"n"}]}`)
	}
	f.Fuzz(func(t *testing.T, path, doc string) {
		m := Mapping{Headline: path, Authors: path, ID: path}
		if err := m.Validate(); err != nil {
			if !errors.Is(err, ErrMapping) {
				t.Fatalf("error %v does not match ErrMapping", err)
			}
			return
		}
		a, err := m.Extract([]byte(doc))
		if err == nil && len(a.Authors) > maxAuthors {
			t.Fatal("authors over the cap")
		}
	})
}

func ExampleMapping_Extract() {
	m := Mapping{
		Headline:  "story.title",
		Authors:   "story.bylines[].name",
		Published: "story.published",
		ID:        "story.uid",
		IDScheme:  "arc",
	}
	a, err := m.Extract([]byte(`{"story":{"uid":"ABC123","title":"Ferry service resumes",
		"bylines":[{"name":"Ida Lund"},{"name":"Per Holm"}],"published":"2026-01-02T06:00:00Z"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Headline.Value, "from", a.Headline.Source)
	fmt.Println(len(a.Authors), "authors, the first", a.Authors[0].Value)
	fmt.Println(a.Published.Time.Format(time.RFC3339))
	fmt.Println(a.IDs[0].Scheme, a.IDs[0].Value)
	// The API states no language: none is guessed.
	fmt.Println(a.Language.Present())
	// Output:
	// Ferry service resumes from cms:story.title
	// 2 authors, the first Ida Lund
	// 2026-01-02T06:00:00Z
	// arc ABC123
	// false
}

// TestMapping_Declared: a source's configuration declares a Mapping by its
// fields' JSON names.
func TestMapping_Declared(t *testing.T) {
	t.Parallel()
	var m Mapping
	conf := `{"headline":"data.attributes.title","body":"data.attributes.body.value","body_format":"html",
		"authors":"included[].attributes.display_name","id":"data.id","id_scheme":"drupal","zoneless_utc":true}`
	if err := json.Unmarshal([]byte(conf), &m); err != nil {
		t.Fatal(err)
	}
	want := Mapping{Headline: "data.attributes.title", Body: "data.attributes.body.value", BodyFormat: "html",
		Authors: "included[].attributes.display_name", ID: "data.id", IDScheme: "drupal", ZonelessUTC: true}
	if m != want {
		t.Errorf("decoded %+v, want %+v", m, want)
	}
}
