package extract

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestWordPressGolden reads every post of testdata/wordpress and compares
// the article with its .golden.json.
func TestWordPressGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/wordpress/*.json")
	n := 0
	for _, p := range files {
		if strings.HasSuffix(p, ".golden.json") {
			continue
		}
		n++
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var got any
			if strings.HasPrefix(strings.TrimSpace(string(b)), "[") {
				got, err = WordPressPosts(b)
			} else {
				got, err = WordPress(b)
			}
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, strings.TrimSuffix(p, ".json")+".golden.json", got)
		})
	}
	if n == 0 {
		t.Fatal("no posts in testdata/wordpress")
	}
}

func TestWordPress_Fields(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/wordpress/post_embed.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := WordPress(b)
	if err != nil {
		t.Fatal(err)
	}
	if a.Headline.Value != "River floods the old town & the market" || a.Headline.Source != "wordpress:title.rendered" {
		t.Errorf("headline %+v", a.Headline)
	}
	if want := time.Date(2026, 1, 2, 7, 30, 0, 0, time.UTC); !a.Published.Time.Equal(want) || a.Published.Value != "2026-01-02T07:30:00" {
		t.Errorf("published %+v, want %v as written in date_gmt", a.Published, want)
	}
	if len(a.IDs) != 1 || a.IDs[0] != (Identifier{Scheme: "wordpress", Value: "4411", Source: "wordpress:id"}) {
		t.Errorf("ids %+v", a.IDs)
	}
	if a.Section.Value != "Local" || len(a.Keywords) != 2 || len(a.Authors) != 1 || a.Authors[0].Value != "Jane Writer" {
		t.Errorf("section %+v keywords %+v authors %+v", a.Section, a.Keywords, a.Authors)
	}
	kinds := ""
	for _, bl := range a.Blocks {
		kinds += strconv.Itoa(int(bl.Kind))
	}
	if want := fmt.Sprint(int(Paragraph), int(Heading), int(List), int(Caption), int(Quote)); kinds != strings.ReplaceAll(want, " ", "") {
		t.Errorf("block kinds %s, want %s: %+v", kinds, want, a.Blocks)
	}
	if strings.Contains(a.Text(), "river.jpg") {
		t.Errorf("the body carries an image: %q", a.Text())
	}
}

// TestWordPress_LocalDateStaysAsWritten: without date_gmt, date is a
// local time whose zone the post does not state: no instant is made up.
func TestWordPress_LocalDateStaysAsWritten(t *testing.T) {
	t.Parallel()
	b, _ := os.ReadFile("testdata/wordpress/post_plain.json")
	a, err := WordPress(b)
	if err != nil {
		t.Fatal(err)
	}
	if a.Published.Value != "2026-01-02T08:30:00" || a.Published.Source != "wordpress:date" || !a.Published.Time.IsZero() {
		t.Errorf("published %+v", a.Published)
	}
	if len(a.Authors) != 0 || a.Section.Present() || a.Description.Present() {
		t.Errorf("fields invented from ids: %+v", a)
	}
}

// TestWordPress_D12_ProtectedIsGated: a password-protected post is gated.
func TestWordPress_D12_ProtectedIsGated(t *testing.T) {
	t.Parallel()
	b, _ := os.ReadFile("testdata/wordpress/post_protected.json")
	a, err := WordPress(b)
	if err != nil {
		t.Fatal(err)
	}
	if a.Access != Gated || a.AccessSource != "wordpress:content.protected" {
		t.Errorf("access %v from %q", a.Access, a.AccessSource)
	}
}

func TestWordPress_Errors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body string
		want error
	}{
		{`not json`, ErrJSON},
		{`{"code":"rest_post_invalid_id","message":"Invalid post ID.","data":{"status":404}}`, ErrNotPost},
		{`[1,2]`, ErrNotPost},
		{`"a string"`, ErrNotPost},
		{`{"id":1} {"id":2}`, ErrJSON},
		{strings.Repeat(" ", DefaultMaxBytes+1), ErrTooLarge},
	} {
		_, err := WordPress([]byte(c.body))
		if !errors.Is(err, c.want) {
			t.Errorf("WordPress(%.40q) = %v, want %v", c.body, err, c.want)
		}
	}
	if _, err := WordPressPosts([]byte(`{"id":1}`)); !errors.Is(err, ErrNotPost) {
		t.Errorf("WordPressPosts of an object: %v", err)
	}
	if _, err := WordPressPosts([]byte(`[{"id":1},{"code":"x"}]`)); !errors.Is(err, ErrNotPost) || !errors.Is(err, ErrJSON) {
		t.Errorf("WordPressPosts with a bad element: %v", err)
	}
}

func get(t *testing.T, web *politetest.Web, u string) []byte {
	t.Helper()
	res, err := web.Client().Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", u, res.StatusCode, err)
	}
	return b
}

// TestPoliteTest_V3_OneIDEverywhere reads politetest's article page and
// its WordPress-like API over loopback TLS: every field the page states is
// copied, and the CMS id is the same string in the page (every source of
// it), the API and the feeds' guid.
func TestPoliteTest_V3_OneIDEverywhere(t *testing.T) {
	web := politetest.NewWeb(t)
	site := web.Site("news-7.example")
	pub := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	art := site.AddArticle(politetest.Article{ID: 4411, Title: "Q&A: the budget’s “big” day", Author: "Ana María Ruiz",
		Section: "Economía", Lang: "es-ES", Published: pub, Modified: pub.Add(90 * time.Minute)})

	pageURL := site.URL(art.Path)
	page := get(t, web, pageURL)
	u, _ := url.Parse(pageURL)
	a, err := HTML(page, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkStated(t, page, a)
	for _, c := range []struct{ what, got, want string }{
		{"headline", a.Headline.Value, art.Title},
		{"description", a.Description.Value, art.Summary},
		{"section", a.Section.Value, art.Section},
		{"language", a.Language.Value, art.Lang},
		{"canonical", a.Canonical.Value, pageURL},
		{"image", a.Image.Value, u.ResolveReference(&url.URL{Path: art.Image}).String()},
		{"publisher", a.Publisher.Value, site.Name()},
	} {
		if c.got != c.want {
			t.Errorf("%s %q, want %q", c.what, c.got, c.want)
		}
	}
	if len(a.Authors) != 1 || a.Authors[0].Value != art.Author {
		t.Errorf("authors %+v", a.Authors)
	}
	if !a.Published.Time.Equal(art.Published) || !a.Modified.Time.Equal(art.Modified) {
		t.Errorf("published %+v modified %+v", a.Published, a.Modified)
	}
	for _, f := range []Field{a.Headline, a.Description, a.Section, a.Language, a.Image, a.Publisher, a.Published.Field, a.Modified.Field} {
		if len(f.Conflicts) != 0 {
			t.Errorf("%q: the page's sources agree, yet conflicts %+v", f.Value, f.Conflicts)
		}
	}

	want := strconv.Itoa(art.ID)
	sources := map[string]bool{}
	for _, id := range a.IDs {
		if id.Value != want {
			t.Errorf("id %+v, want %s", id, want)
		}
		sources[id.Source] = true
	}
	for _, s := range []string{"json-ld:NewsArticle.identifier", "link[rel=shortlink]", "body[class~=postid-N]"} {
		if !sources[s] {
			t.Errorf("no id from %s: %+v", s, a.IDs)
		}
	}

	api, err := WordPress(get(t, web, site.URL("/wp-json/wp/v2/posts/"+want)))
	if err != nil {
		t.Fatal(err)
	}
	pageID, err1 := a.ID("wordpress")
	apiID, err2 := api.ID("wordpress")
	if pageID != want || apiID != want || err1 != nil || err2 != nil {
		t.Errorf("page id %q (%v), API id %q (%v), want %s", pageID, err1, apiID, err2, want)
	}
	if api.Headline.Value != art.Title || api.Canonical.Value != pageURL || !api.Published.Time.Equal(art.Published) {
		t.Errorf("API article %+v", api)
	}
	if guid := art.GUID(site.Name()); !strings.HasSuffix(guid, "?p="+want) {
		t.Errorf("feed guid %s does not carry id %s", guid, want)
	}

	list, err := WordPressPosts(get(t, web, site.URL("/wp-json/wp/v2/posts")))
	if err != nil || len(list) != 1 || list[0].IDs[0].Value != want {
		t.Fatalf("posts list: %v %+v", err, list)
	}
}

func FuzzWordPress(f *testing.F) {
	files, _ := filepath.Glob("testdata/wordpress/*.json")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && !strings.HasSuffix(p, ".golden.json") {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := WordPress(b)
		if err != nil {
			if !errors.Is(err, ErrJSON) {
				t.Fatalf("error %v does not match ErrJSON", err)
			}
			return
		}
		if len(a.Authors) > maxAuthors || len(a.Keywords) > maxKeywords {
			t.Fatalf("lists over their caps")
		}
		WordPressPosts(b)
	})
}

func ExampleWordPress() {
	a, err := WordPress([]byte(`{"id":4411,"date_gmt":"2026-01-02T07:30:00","link":"https://news.example/river/",
		"title":{"rendered":"River floods the old town &#038; the market"},
		"content":{"rendered":"<p>The river rose two metres.</p><p>Shops were shut.</p>"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Headline.Value)
	fmt.Println(a.Published.Time, "from", a.Published.Source)
	fmt.Println(a.IDs[0].Scheme, a.IDs[0].Value)
	fmt.Println(a.Text())
	// Output:
	// River floods the old town & the market
	// 2026-01-02 07:30:00 +0000 UTC from wordpress:date_gmt
	// wordpress 4411
	// The river rose two metres.
	//
	// Shops were shut.
}
