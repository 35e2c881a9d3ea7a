package politetest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"image"
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func partsWeb(t *testing.T, n int) (*Web, *Site, []Article) {
	t.Helper()
	w := NewWeb(t)
	s := w.Site("news-1.example")
	var as []Article
	for i := 0; i < n; i++ {
		as = append(as, s.AddArticle(Article{}))
	}
	return w, s, as
}

func TestRSSAndAtomConditional_D4(t *testing.T) {
	t.Parallel()
	w, s, as := partsWeb(t, 3)
	p := newCareful(w, 0)
	for _, tc := range []struct {
		path, ctype string
		parse       func([]byte) ([]string, error)
	}{
		{"/feed.xml", "application/rss+xml", func(b []byte) ([]string, error) {
			var rss struct {
				Version string `xml:"version,attr"`
				Items   []struct {
					GUID string `xml:"guid"`
					Link string `xml:"link"`
				} `xml:"channel>item"`
			}
			err := xml.Unmarshal(b, &rss)
			var ids []string
			for _, it := range rss.Items {
				ids = append(ids, it.GUID+" "+it.Link)
			}
			if rss.Version != "2.0" {
				t.Errorf("rss version %q", rss.Version)
			}
			return ids, err
		}},
		{"/atom.xml", "application/atom+xml", func(b []byte) ([]string, error) {
			var feed struct {
				XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
				Entries []struct {
					ID    string `xml:"id"`
					Links []struct {
						Rel  string `xml:"rel,attr"`
						Href string `xml:"href,attr"`
					} `xml:"link"`
				} `xml:"entry"`
			}
			err := xml.Unmarshal(b, &feed)
			var ids []string
			for _, e := range feed.Entries {
				for _, l := range e.Links {
					if l.Rel == "alternate" {
						ids = append(ids, e.ID+" "+l.Href)
					}
				}
			}
			return ids, err
		}},
	} {
		resp, body := p.get(t, s.URL(tc.path))
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.ctype) {
			t.Fatalf("%s: %d %s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		ids, err := tc.parse(body)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		// Newest first; the id is the same string everywhere (V3).
		want := []string{
			as[2].GUID(s.Name()) + " " + s.URL(as[2].Path),
			as[1].GUID(s.Name()) + " " + s.URL(as[1].Path),
			as[0].GUID(s.Name()) + " " + s.URL(as[0].Path),
		}
		if strings.Join(ids, "|") != strings.Join(want, "|") {
			t.Errorf("%s items %v, want %v", tc.path, ids, want)
		}
		etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
		if etag == "" || lm != as[2].Modified.Format(http.TimeFormat) {
			t.Fatalf("%s validators: ETag %q Last-Modified %q", tc.path, etag, lm)
		}
		for _, c := range []struct {
			name, header, value string
			want                int
		}{
			{"etag", "If-None-Match", etag, 304},
			{"weak etag in a list", "If-None-Match", `"x", W/` + etag, 304},
			{"other etag", "If-None-Match", `"other"`, 200},
			{"same date", "If-Modified-Since", lm, 304},
			{"older date", "If-Modified-Since", as[1].Modified.Format(http.TimeFormat), 200},
		} {
			req, _ := http.NewRequest("GET", s.URL(tc.path), nil)
			req.Header.Set("User-Agent", botUA)
			req.Header.Set(c.header, c.value)
			resp, err := p.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want || (c.want == 304 && buf.Len() != 0) {
				t.Errorf("%s %s: %d with %d bytes, want %d", tc.path, c.name, resp.StatusCode, buf.Len(), c.want)
			}
		}
	}
	// A new article changes both validators: the old ones now get a 200.
	resp, _ := p.get(t, s.URL("/feed.xml"))
	old := resp.Header.Get("ETag")
	s.AddArticle(Article{Published: as[2].Published.Add(time.Hour)})
	req, _ := http.NewRequest("GET", s.URL("/feed.xml"), nil)
	req.Header.Set("If-None-Match", old)
	resp, err := p.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("ETag") == old {
		t.Fatalf("after a new article: %d, ETag %s (old %s)", resp.StatusCode, resp.Header.Get("ETag"), old)
	}
}

func TestSitemaps_V4(t *testing.T) {
	t.Parallel()
	w, s, as := partsWeb(t, 3)
	p := newCareful(w, 0)
	_, body := p.get(t, s.URL("/sitemap_index.xml"))
	var idx struct {
		Sitemaps []struct {
			Loc     string `xml:"loc"`
			Lastmod string `xml:"lastmod"`
		} `xml:"sitemap"`
	}
	if err := xml.Unmarshal(body, &idx); err != nil || len(idx.Sitemaps) != 2 {
		t.Fatalf("index: %v %+v", err, idx)
	}
	if idx.Sitemaps[0].Loc != s.URL("/sitemap.xml") || idx.Sitemaps[1].Loc != s.URL("/news-sitemap.xml") ||
		idx.Sitemaps[0].Lastmod != as[2].Modified.Format(time.RFC3339) {
		t.Fatalf("index entries %+v", idx.Sitemaps)
	}
	type urlset struct {
		URLs []struct {
			Loc     string `xml:"loc"`
			Lastmod string `xml:"lastmod"`
			News    struct {
				Name  string `xml:"publication>name"`
				Date  string `xml:"publication_date"`
				Title string `xml:"title"`
			} `xml:"news"`
		} `xml:"url"`
	}
	for _, path := range []string{"/sitemap.xml", "/news-sitemap.xml"} {
		_, body := p.get(t, s.URL(path))
		var us urlset
		if err := xml.Unmarshal(body, &us); err != nil || len(us.URLs) != 3 {
			t.Fatalf("%s: %v, %d urls", path, err, len(us.URLs))
		}
		first := us.URLs[0]
		if first.Loc != s.URL(as[2].Path) || first.Lastmod != as[2].Modified.Format(time.RFC3339) {
			t.Errorf("%s first url %+v", path, first)
		}
		if path == "/news-sitemap.xml" && (first.News.Name != s.Name() || first.News.Title != as[2].Title ||
			first.News.Date != as[2].Published.Format(time.RFC3339)) {
			t.Errorf("news entry %+v", first.News)
		}
	}
}

func TestWordPressAPI_V2_V4(t *testing.T) {
	t.Parallel()
	w, s, as := partsWeb(t, 7)
	p := newCareful(w, 0)
	type post struct {
		ID    int    `json:"id"`
		Link  string `json:"link"`
		Date  string `json:"date_gmt"`
		Title struct {
			Rendered string `json:"rendered"`
		} `json:"title"`
	}
	for _, tc := range []struct {
		query             string
		status            int
		ids               []int
		total, totalPages string
		link              string
	}{
		{"", 200, []int{7, 6, 5, 4, 3, 2, 1}, "7", "1", ""},
		{"?per_page=3", 200, []int{7, 6, 5}, "7", "3", `rel="next"`},
		{"?per_page=3&page=3", 200, []int{1}, "7", "3", `rel="prev"`},
		{"?per_page=3&page=4", 400, nil, "", "", ""},
		{"?per_page=101", 400, nil, "", "", ""},
		{"?page=0", 400, nil, "", "", ""},
	} {
		resp, body := p.get(t, s.URL("/wp-json/wp/v2/posts"+tc.query))
		if resp.StatusCode != tc.status {
			t.Fatalf("%s: status %d, want %d: %s", tc.query, resp.StatusCode, tc.status, body)
		}
		if tc.status != 200 {
			var e struct {
				Code string `json:"code"`
				Data struct {
					Status int `json:"status"`
				} `json:"data"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Data.Status != 400 || !strings.HasPrefix(e.Code, "rest_") {
				t.Errorf("%s: error body %s", tc.query, body)
			}
			continue
		}
		var posts []post
		if err := json.Unmarshal(body, &posts); err != nil {
			t.Fatal(err)
		}
		var ids []int
		for _, p := range posts {
			ids = append(ids, p.ID)
		}
		if strconv.Itoa(len(ids)) != strconv.Itoa(len(tc.ids)) || func() bool {
			for i := range ids {
				if ids[i] != tc.ids[i] {
					return true
				}
			}
			return false
		}() {
			t.Errorf("%s: ids %v, want %v", tc.query, ids, tc.ids)
		}
		if resp.Header.Get("X-WP-Total") != tc.total || resp.Header.Get("X-WP-TotalPages") != tc.totalPages {
			t.Errorf("%s: X-WP-Total %s X-WP-TotalPages %s", tc.query, resp.Header.Get("X-WP-Total"), resp.Header.Get("X-WP-TotalPages"))
		}
		if !strings.Contains(resp.Header.Get("Link"), tc.link) {
			t.Errorf("%s: Link %q lacks %q", tc.query, resp.Header.Get("Link"), tc.link)
		}
		if posts[0].Link != s.URL(as[tc.ids[0]-1].Path) || posts[0].Title.Rendered != as[tc.ids[0]-1].Title {
			t.Errorf("%s: first post %+v", tc.query, posts[0])
		}
	}
	_, body := p.get(t, s.URL("/wp-json/wp/v2/posts?per_page=2&_fields=id,link,title.rendered"))
	var raw []map[string]any
	if err := json.Unmarshal(body, &raw); err != nil || len(raw) != 2 {
		t.Fatalf("_fields: %v %s", err, body)
	}
	if len(raw[0]) != 3 || raw[0]["id"] != float64(7) || raw[0]["title"].(map[string]any)["rendered"] != as[6].Title {
		t.Errorf("_fields=id,link,title.rendered gave %v", raw[0])
	}
	resp, body := p.get(t, s.URL("/wp-json/wp/v2/posts/3"))
	var one post
	if err := json.Unmarshal(body, &one); err != nil || resp.StatusCode != 200 || one.ID != 3 {
		t.Errorf("single post: %d %s", resp.StatusCode, body)
	}
	if resp, _ := p.get(t, s.URL("/wp-json/wp/v2/posts/99")); resp.StatusCode != 404 {
		t.Errorf("missing post: %d", resp.StatusCode)
	}
	empty := w.Site("empty.example")
	resp, body = p.get(t, empty.URL("/wp-json/wp/v2/posts"))
	if resp.StatusCode != 200 || string(body) != "[]" || resp.Header.Get("X-WP-Total") != "0" {
		t.Errorf("empty site: %d %s %v", resp.StatusCode, body, resp.Header)
	}
}

func TestArticlePageMetadata_V5(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("news-1.example")
	a := s.AddArticle(Article{ID: 42, Title: `Rates & "bonds" <up>`, Author: "Ada Lovelace", Lang: "fr",
		Published: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)})
	if a.Path != "/2026/03/04/article-42/" || a.Image != "/images/42.webp" {
		t.Fatalf("filled article %+v", a)
	}
	p := newCareful(w, 0)
	resp, body := p.get(t, s.URL(a.Path))
	page := string(body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`<html lang="fr">`,
		`<meta property="og:title" content="Rates &amp; &#34;bonds&#34; &lt;up&gt;">`,
		`<meta property="og:url" content="https://news-1.example/2026/03/04/article-42/">`,
		`<meta property="og:image" content="https://news-1.example/images/42.webp">`,
		`<meta property="article:published_time" content="2026-03-04T05:06:07Z">`,
		`<meta name="author" content="Ada Lovelace">`,
		`<link rel="canonical" href="https://news-1.example/2026/03/04/article-42/">`,
		`<link rel="shortlink" href="https://news-1.example/?p=42">`,
		`<p>The first paragraph of article 42`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	m := regexp.MustCompile(`<script type="application/ld\+json">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no JSON-LD")
	}
	var ld struct {
		Type      string `json:"@type"`
		Headline  string `json:"headline"`
		Published string `json:"datePublished"`
		ID        string `json:"identifier"`
		Author    []struct {
			Name string `json:"name"`
		} `json:"author"`
	}
	if err := json.Unmarshal([]byte(m[1]), &ld); err != nil {
		t.Fatal(err)
	}
	if ld.Type != "NewsArticle" || ld.Headline != a.Title || ld.Published != "2026-03-04T05:06:07Z" || ld.ID != "42" ||
		len(ld.Author) != 1 || ld.Author[0].Name != "Ada Lovelace" {
		t.Errorf("JSON-LD %+v", ld)
	}
	// The shortlink redirects to the page.
	if resp, _ := p.get(t, s.URL("/?p=42")); resp.StatusCode != 301 || resp.Header.Get("Location") != a.Path {
		t.Errorf("/?p=42: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestShareImages_S7(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("img.example")
	p := newCareful(w, 0)
	for _, tc := range []struct {
		path, ctype, format string
	}{
		{"/images/1.jpg", "image/jpeg", "jpeg"},
		{"/images/2.png", "image/png", "png"},
		{"/images/3.gif", "image/gif", "gif"},
		{"/images/4.webp", "image/webp", ""},
		{"/images/fake.jpg", "image/jpeg", ""},
	} {
		resp, body := p.get(t, s.URL(tc.path))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tc.ctype {
			t.Fatalf("%s: %d %s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		_, format, err := image.DecodeConfig(bytes.NewReader(body))
		switch {
		case tc.format != "":
			if err != nil || format != tc.format {
				t.Errorf("%s decodes as %q (%v)", tc.path, format, err)
			}
		case strings.HasSuffix(tc.path, ".webp"):
			// RIFF container, WEBP form, one VP8L chunk: a 1×1 lossless image.
			size := int(body[4]) | int(body[5])<<8 | int(body[6])<<16 | int(body[7])<<24
			if string(body[:4]) != "RIFF" || string(body[8:16]) != "WEBPVP8L" || size+8 != len(body) ||
				body[20] != 0x2f || body[21] != 0 || body[22] != 0 || body[23] != 0 || body[24]&0x0f != 0 {
				t.Errorf("webp bytes % x", body)
			}
		default: // the fake one
			if err == nil || !strings.HasPrefix(string(body), "<!DOCTYPE html") {
				t.Errorf("fake image decodes (%v) or is not HTML: %q", err, body)
			}
		}
	}
}
