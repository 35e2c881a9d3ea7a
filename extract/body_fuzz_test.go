package extract

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzHTML feeds arbitrary bytes to HTML, seeded with the pages of
// testdata/body and testdata/meta and a few hostile shapes. HTML must not
// panic, must fail only with its documented errors, and must return blocks
// that are well formed.
func FuzzHTML(f *testing.F) {
	for _, dir := range []string{"testdata/body", "testdata/meta"} {
		pages, _ := filepath.Glob(filepath.Join(dir, "*.html"))
		for _, p := range pages {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	for _, s := range []string{
		"",
		"<table><tr><td><p>cell, text, more</p></td></tr></table>",
		strings.Repeat("<div>", 600),
		strings.Repeat("<ul><li>", 300) + "deep item, with commas, and more",
		"<pre>  kept\n  as written</pre><figure><figcaption>c</figcaption></figure>",
		"<h7>x</h7><h1></h1><h6>" + strings.Repeat("long heading, ", 10) + "</h6>",
		"<p>\xff\xfe invalid, bytes, here</p><meta charset=shift_jis>",
		`<p>tagline</p><script type="text/template"><div><p>a post, in a template, with commas</p><script type="text/x-template"><p>inner</p></script></div></script>`,
		`<script type="text/template">` + strings.Repeat("<div>", 600) + `</script>`,
		"<p>soft\u00adhyphen\u00ad, and a late</p>" + strings.Repeat(" ", 1100) + "<meta charset=windows-1250>\x8a",
	} {
		f.Add([]byte(s))
	}
	page, _ := url.Parse("https://news.example/2026/story")
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := HTML(b, page, nil)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		for i, bl := range a.Blocks {
			if bl.Kind < Paragraph || bl.Kind > Caption {
				t.Fatalf("block %d: kind %d", i, bl.Kind)
			}
			if strings.TrimSpace(bl.Text) == "" {
				t.Fatalf("block %d: empty text", i)
			}
			if (bl.Kind == Heading) != (bl.Level != 0) || bl.Level < 0 || bl.Level > 6 {
				t.Fatalf("block %d: kind %d level %d", i, bl.Kind, bl.Level)
			}
			if bl.Kind == List && len(bl.Items) == 0 {
				t.Fatalf("block %d: list without items", i)
			}
			if utf8.Valid(b) && !utf8.ValidString(bl.Text) {
				t.Fatalf("block %d: invalid UTF-8 from valid input", i)
			}
		}
	})
}
