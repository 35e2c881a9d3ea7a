package feed

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/politefetch/politefetch/internal/tracking"
)

// seed adds every file of testdata/dir (but golden files) to the corpus.
func seed(f *testing.F, dir string) {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, ".golden") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func absHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// FuzzSitemap: any bytes give a sitemap or an error, never a panic; every
// entry is an absolute http(s) URL without tracking parameters, within the
// entry bound.
func FuzzSitemap(f *testing.F) {
	seed(f, "sitemaps")
	base, _ := url.Parse("https://example.test/sitemap.xml")
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseSitemap(data, base, newLinkCleaner(nil), 100)
		if err != nil {
			return
		}
		if len(d.entries) > 100 {
			t.Fatalf("%d entries, bound 100", len(d.entries))
		}
		for _, e := range d.entries {
			if !absHTTP(e.loc) {
				t.Fatalf("entry %q is not an absolute http(s) URL", e.loc)
			}
			u, _ := url.Parse(e.loc)
			for k := range u.Query() {
				if tracking.IsDefault(k) {
					t.Fatalf("entry %q keeps tracking parameter %q", e.loc, k)
				}
			}
		}
	})
}

// FuzzNormalize: any bytes give a normalised feed or an error, never a
// panic; links are absolute or empty, strings valid UTF-8, the item bound
// holds, and trigger mode (V1) keeps no content.
func FuzzNormalize(f *testing.F) {
	seed(f, "feeds")
	base, _ := url.Parse("https://example.test/feed.xml")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, refsOnly := range []bool{false, true} {
			fd, _, err := normalize(data, base, parseConfig{links: newLinkCleaner(nil), maxItems: 20, refsOnly: refsOnly})
			if err != nil {
				continue
			}
			if len(fd.Items) > 20 {
				t.Fatalf("%d items, bound 20", len(fd.Items))
			}
			if refsOnly && (fd.Title != "" || fd.Link != "") {
				t.Fatalf("trigger mode kept feed content %q %q", fd.Title, fd.Link)
			}
			for _, it := range fd.Items {
				if it.Link != "" && !absHTTP(it.Link) {
					t.Fatalf("link %q not absolute http(s)", it.Link)
				}
				if it.Image != "" && !absHTTP(it.Image) {
					t.Fatalf("image %q not absolute http(s)", it.Image)
				}
				for _, s := range []string{it.ID, it.GUID, it.Title, it.Description} {
					if !utf8.ValidString(s) {
						t.Fatalf("invalid UTF-8 %q", s)
					}
				}
				if refsOnly && (it.Title != "" || it.Description != "" || it.Image != "" || len(it.Authors) > 0 || len(it.Categories) > 0) {
					t.Fatalf("trigger mode kept item content %+v", it)
				}
			}
		}
	})
}
