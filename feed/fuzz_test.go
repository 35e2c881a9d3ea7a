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
// entry is a clean absolute http(s) URL, within the entry bound.
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
			if !cleanLinkOK(e.loc) {
				t.Fatalf("entry %q is not a clean absolute http(s) URL", e.loc)
			}
		}
	})
}

// FuzzNormalize: any bytes give a normalised feed or an error, never a
// panic; links are clean and absolute or empty, strings valid UTF-8, the item bound
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
				if it.Link != "" && !cleanLinkOK(it.Link) {
					t.Fatalf("link %q is not a clean absolute http(s) URL", it.Link)
				}
				if it.Image != "" && !cleanLinkOK(it.Image) {
					t.Fatalf("image %q is not a clean absolute http(s) URL", it.Image)
				}
				for _, s := range []string{it.ID, it.GUID, it.Title, it.Description} {
					if !utf8.ValidString(s) {
						t.Fatalf("invalid UTF-8 %q", s)
					}
				}
				if refsOnly && (it.Title != "" || it.Description != "" || it.Image != "" || it.ImageCredit != "" || len(it.Authors) > 0 || len(it.Categories) > 0) {
					t.Fatalf("trigger mode kept item content %+v", it)
				}
			}
		}
	})
}

// cleanLinkOK reports whether s is an absolute http(s) URL without a
// fragment or a tracking parameter.
func cleanLinkOK(s string) bool {
	u, err := url.Parse(s)
	if err != nil || !absHTTP(s) || u.Fragment != "" {
		return false
	}
	for k := range u.Query() {
		if tracking.IsDefault(k) {
			return false
		}
	}
	return true
}

// FuzzAPIPage: any bytes give a page of refs or an error, never a panic;
// every ref and next link is clean, and the page bound holds.
func FuzzAPIPage(f *testing.F) {
	seed(f, "api")
	base, _ := url.Parse("https://example.test/wp-json/wp/v2/posts?page=1")
	specs := []APISpec{
		WordPress("https://example.test", 10),
		{List: "data.items", ID: "uid", Link: "url", Published: "meta.first", Updated: "meta.last", Next: "links.next"},
		{List: "items", Link: "url", Next: "next"},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, sp := range specs {
			refs, next, err := parsePage(data, base, sp, newLinkCleaner(nil))
			if err != nil {
				continue
			}
			if len(refs) > maxPageItems {
				t.Fatalf("%d refs, bound %d", len(refs), maxPageItems)
			}
			for _, r := range refs {
				if !cleanLinkOK(r.URL) || !utf8.ValidString(r.ID) {
					t.Fatalf("ref %+v is not clean", r)
				}
			}
			if next != "" && !cleanLinkOK(next) {
				t.Fatalf("next %q is not clean", next)
			}
		}
	})
}

// FuzzDiscoverLinks: any bytes give links or an error, never a panic; every
// link is clean, of a feed type, and listed once.
func FuzzDiscoverLinks(f *testing.F) {
	seed(f, "pages")
	base, _ := url.Parse("https://example.test/news/page.html")
	f.Fuzz(func(t *testing.T, data []byte) {
		links, err := DiscoverLinks(base, data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, l := range links {
			if !cleanLinkOK(l.URL) || feedTypes[l.Type] == "" || seen[l.URL] || !utf8.ValidString(l.Title) {
				t.Fatalf("link %+v: not clean, not a feed type, listed twice or invalid UTF-8", l)
			}
			seen[l.URL] = true
		}
	})
}
