package feed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// sitemapSite serves the sitemap testdata: an index naming a gzipped
// sitemap (application/x-gzip), plain urlsets, a news sitemap, a text
// sitemap and robots.txt naming two of them.
func sitemapSite(t *testing.T) *testSite {
	s := newTestSite(t)
	s.file("/robots.txt", "sitemaps/robots.txt", "text/plain", false)
	s.file("/index.xml", "sitemaps/index.xml", "application/xml", false)
	s.file("/posts-2026-11.xml.gz", "sitemaps/posts-2026-11.xml", "application/x-gzip", true)
	s.file("/posts-2026-10.xml", "sitemaps/posts-2026-10.xml", "application/xml", false)
	s.file("/posts-2025.xml", "sitemaps/posts-2025.xml", "text/xml", false)
	s.file("/news.xml", "sitemaps/news.xml", "application/xml", false)
	s.file("/text.txt", "sitemaps/text.txt", "text/plain", false)
	s.file("/empty.xml", "sitemaps/empty.xml", "application/xml", false)
	s.file("/broken_truncated.xml", "sitemaps/broken_truncated.xml", "application/xml", false)
	s.file("/broken_html.xml", "sitemaps/broken_html.xml", "text/html", false)
	s.file("/hostile_entities.xml", "sitemaps/hostile_entities.xml", "application/xml", false)
	s.file("/hostile_schemes.xml", "sitemaps/hostile_schemes.xml", "application/xml", false)
	return s
}

// TestSitemapWalk_Golden_V4 walks each sitemap shape newest to oldest,
// reading references only, and compares with golden files.
func TestSitemapWalk_Golden_V4(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		roots []string // empty: discovered from robots.txt
		floor time.Time
	}{
		{"robots", nil, time.Time{}},
		{"index", []string{"/index.xml"}, time.Time{}},
		{"index_floor", []string{"/index.xml"}, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		{"gzip", []string{"/posts-2026-11.xml.gz"}, time.Time{}},
		{"news", []string{"/news.xml"}, time.Time{}},
		{"text", []string{"/text.txt"}, time.Time{}},
		{"empty", []string{"/empty.xml"}, time.Time{}},
		{"broken", []string{"/broken_truncated.xml", "/broken_html.xml", "/missing.xml", "/news.xml"}, time.Time{}},
		{"hostile", []string{"/hostile_entities.xml", "/hostile_schemes.xml"}, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := sitemapSite(t)
			w := &SitemapWalker{Client: s.client(), Site: s.url("")}
			for _, r := range tt.roots {
				w.URLs = append(w.URLs, s.url(r))
			}
			got := walkView(s, w.Walk(context.Background(), Stop{Floor: tt.floor, Now: fixedNow}))
			golden(t, "sitemaps/"+tt.name+".golden", got)
		})
	}
}

// TestSitemapWalk_Limits enforces the sitemaps.org limits: 50,000 URLs and
// 50 MB decoded per file (a gzip bomb stops at the bound), and the walk's
// file bound.
func TestSitemapWalk_Limits(t *testing.T) {
	t.Parallel()
	s := newTestSite(t)
	var big strings.Builder
	big.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range MaxSitemapURLs + 1 {
		fmt.Fprintf(&big, "<url><loc>https://example.test/%d</loc></url>", i)
	}
	big.WriteString(`</urlset>`)
	s.mux.HandleFunc("/big.xml", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(big.String())) })
	bomb := gzipBytes([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + strings.Repeat(" ", 4<<20)))
	s.mux.HandleFunc("/bomb.xml.gz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		w.Write(bomb)
	})
	s.mux.HandleFunc("/loop.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://%s/loop.xml?n=%d</loc></sitemap><sitemap><loc>https://%[1]s/loop.xml?n=%d</loc></sitemap></sitemapindex>`,
			r.Host, len(r.URL.Query().Get("n"))+1, len(r.URL.Query().Get("n"))+2)
	})
	tests := []struct {
		name string
		w    SitemapWalker
		root string
		want error
	}{
		{"50000 URLs", SitemapWalker{}, "/big.xml", ErrTooMany},
		{"gzip bomb", SitemapWalker{MaxBytes: 1 << 20}, "/bomb.xml.gz", ErrTooLarge},
		{"nesting", SitemapWalker{}, "/loop.xml", ErrMalformed},
		{"file bound", SitemapWalker{MaxFiles: 2}, "/loop.xml", ErrTooMany},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.w.Client, tt.w.URLs = s.client(), []string{s.url(tt.root)}
			var errs []error
			refs := 0
			for _, err := range tt.w.Walk(context.Background(), Stop{Now: fixedNow}) {
				if err != nil {
					errs = append(errs, err)
				} else {
					refs++
				}
			}
			if len(errs) == 0 || !errors.Is(errs[0], tt.want) || refs != 0 {
				t.Errorf("errs %v, refs %d; want first error %v and no refs", errs, refs, tt.want)
			}
		})
	}
}

// wpSite serves a three-page WordPress post list. With totalHeader unset it
// omits X-WP-TotalPages, so the walk learns the end from WordPress's 400
// rest_post_invalid_page_number.
func wpSite(t *testing.T, totalHeader bool) *testSite {
	s := newTestSite(t)
	pages := map[string]string{"1": "api/wp-page-1.json", "2": "api/wp-page-2.json", "3": "api/wp-page-3.json"}
	for n, f := range pages {
		s.file("/_page/"+n, f, "application/json", false)
	}
	s.file("/_page/invalid", "api/wp-invalid-page.json", "application/json", false)
	s.mux.HandleFunc("/wp-json/wp/v2/posts", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("_fields") != "id,link,date_gmt,modified_gmt" || q.Get("orderby") != "date" || q.Get("order") != "desc" {
			http.Error(w, "bad query", http.StatusTeapot)
			return
		}
		if totalHeader {
			w.Header().Set("X-WP-Total", "8")
			w.Header().Set("X-WP-TotalPages", "3")
		}
		p := q.Get("page")
		if _, ok := pages[p]; !ok {
			w.WriteHeader(http.StatusBadRequest)
			r.URL.Path = "/_page/invalid"
		} else {
			r.URL.Path = "/_page/" + p
		}
		s.mux.ServeHTTP(w, r)
	})
	return s
}

// TestWordPressWalk_Golden_V4: the post list is walked page by page, newest
// first, with the post id as identifier (V3) and only the fields needed.
func TestWordPressWalk_Golden_V4(t *testing.T) {
	t.Parallel()
	for _, total := range []bool{true, false} {
		t.Run(fmt.Sprint("totalpages=", total), func(t *testing.T) {
			t.Parallel()
			s := wpSite(t, total)
			w := &APIWalker{Client: s.client(), Spec: WordPress(s.url(""), 3)}
			golden(t, "api/wordpress.golden", walkView(s, w.Walk(context.Background(), Stop{Now: fixedNow})))
			wantPages := 3
			if !total {
				wantPages = 4 // the 400 past the end
			}
			if got := len(s.requests()); got != wantPages {
				t.Errorf("requests %v, want %d pages", s.requests(), wantPages)
			}
		})
	}
}

// TestWordPressWalk_V4_StopRules proves the stop rules on the wire with a
// known set and a fixed clock: the floor date ends the walk; a page wholly
// known and beyond the 48-hour window ends it; known refs within the window
// are re-read.
func TestWordPressWalk_V4_StopRules(t *testing.T) {
	t.Parallel()
	ids := func(ns ...int) []string {
		var out []string
		for _, n := range ns {
			out = append(out, fmt.Sprint(n))
		}
		return out
	}
	tests := []struct {
		name      string
		floor     time.Time
		known     []int
		wantIDs   []string
		wantPages int
	}{
		{"nothing known", time.Time{}, nil, ids(123, 122, 121, 120, 119, 118, 117, 116), 3},
		{"floor in page 2", time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC), nil, ids(123, 122, 121, 120, 119), 2},
		{"floor before all", time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), nil, ids(123, 122, 121, 120, 119, 118, 117, 116), 3},
		// Page 1 is known but lies within 48 h: re-read; page 2 is wholly
		// known and older: the walk ends before page 3.
		{"known pages 1-2", time.Time{}, []int{123, 122, 121, 120, 119, 118}, ids(123, 122, 121), 2},
		// 121 was published 50 h ago but modified 27 h ago: within the window.
		{"known page 1 only", time.Time{}, []int{123, 122, 121}, ids(123, 122, 121, 120, 119, 118, 117, 116), 3},
		// A page partly known goes on; known old refs are not yielded again.
		{"known partly", time.Time{}, []int{120, 118}, ids(123, 122, 121, 119, 117, 116), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := wpSite(t, true)
			var known KnownSet
			for _, id := range tt.known {
				known.Add(Ref{ID: fmt.Sprint(id)})
			}
			w := &APIWalker{Client: s.client(), Spec: WordPress(s.url(""), 3)}
			var got []string
			for r, err := range w.Walk(context.Background(), Stop{Floor: tt.floor, Known: &known, Now: fixedNow}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, r.ID)
			}
			if !slices.Equal(got, tt.wantIDs) {
				t.Errorf("ids %v, want %v", got, tt.wantIDs)
			}
			if n := len(s.requests()); n != tt.wantPages {
				t.Errorf("pages read %d (%v), want %d", n, s.requests(), tt.wantPages)
			}
		})
	}
}

// TestAPIWalk_Golden: a generic JSON API described as data (list path,
// fields, next-page link in the body, Link header).
func TestAPIWalk_Golden(t *testing.T) {
	t.Parallel()
	s := newTestSite(t)
	s.file("/_1", "api/generic-1.json", "application/json", false)
	s.file("/_2", "api/generic-2.json", "application/json", false)
	s.file("/broken", "api/broken.json", "application/json", false)
	pages := func(linkHeader bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("cursor") == "abc" {
				r.URL.Path = "/_2"
			} else {
				if linkHeader {
					w.Header().Set("Link", `</api/stories2?cursor=abc>; rel="next", </api/stories2>; rel="first"`)
				}
				r.URL.Path = "/_1"
			}
			s.mux.ServeHTTP(w, r)
		}
	}
	s.mux.HandleFunc("/api/stories", pages(false))
	s.mux.HandleFunc("/api/stories2", pages(true))
	s.mux.HandleFunc("/api/loop", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"items": [{"url": "/a"}], "next": "/api/loop"}`))
	})
	spec := APISpec{List: "data.items", ID: "uid", Link: "url", Published: "meta.first", Updated: "meta.last"}
	tests := []struct {
		name string
		mod  func(*APISpec)
	}{
		{"next_in_body", func(sp *APISpec) { sp.URL = s.url("/api/stories"); sp.Next = "links.next" }},
		{"link_header", func(sp *APISpec) { sp.URL = s.url("/api/stories2"); sp.NextLink = true }},
		{"broken", func(sp *APISpec) { sp.URL = s.url("/broken"); sp.List = "" }},
		{"loop", func(sp *APISpec) { sp.URL = s.url("/api/loop"); sp.List = "items"; sp.Next = "next" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sp := spec
			tt.mod(&sp)
			w := &APIWalker{Client: s.client(), Spec: sp}
			golden(t, "api/"+tt.name+".golden", walkView(s, w.Walk(context.Background(), Stop{Now: fixedNow})))
		})
	}
}

// TestStop_V4_Judge is the pure stop-rule table.
func TestStop_V4_Judge(t *testing.T) {
	t.Parallel()
	h := func(hoursAgo int) time.Time { return fixedNow.Add(-time.Duration(hoursAgo) * time.Hour) }
	var known KnownSet
	for _, u := range []string{"k1", "k2", "k3"} {
		known.Add(Ref{URL: u})
	}
	tests := []struct {
		name      string
		stop      Stop
		batch     []Ref
		wantURLs  []string
		wantFloor bool
		wantKnown bool
	}{
		{"all known, old", Stop{Known: &known}, []Ref{{URL: "k1", Published: h(72)}, {URL: "k2", Published: h(49)}}, nil, false, true},
		{"known but recent is re-read", Stop{Known: &known}, []Ref{{URL: "k1", Published: h(47)}, {URL: "k2", Published: h(72)}}, []string{"k1"}, false, false},
		{"recently updated is re-read", Stop{Known: &known}, []Ref{{URL: "k1", Published: h(100), Updated: h(1)}}, []string{"k1"}, false, false},
		{"undated known counts as old", Stop{Known: &known}, []Ref{{URL: "k3"}}, nil, false, true},
		{"one unknown goes on", Stop{Known: &known}, []Ref{{URL: "k1", Published: h(72)}, {URL: "new", Published: h(80)}}, []string{"new"}, false, false},
		{"floor", Stop{Floor: h(60)}, []Ref{{URL: "a", Published: h(70)}, {URL: "b", Published: h(50)}, {URL: "c"}}, []string{"b", "c"}, true, false},
		{"newest first", Stop{}, []Ref{{URL: "old", Updated: h(9)}, {URL: "undated"}, {URL: "new", Published: h(1)}}, []string{"new", "old", "undated"}, false, false},
		{"window shorter", Stop{Known: &known, Window: time.Hour}, []Ref{{URL: "k1", Published: h(2)}}, nil, false, true},
		{"empty batch", Stop{Known: &known}, nil, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := tt.stop.judge(tt.batch, fixedNow)
			var urls []string
			for _, r := range v.yield {
				urls = append(urls, r.URL)
			}
			if !slices.Equal(urls, tt.wantURLs) || v.floor != tt.wantFloor || v.known != tt.wantKnown {
				t.Errorf("yield %v floor %v known %v; want %v %v %v", urls, v.floor, v.known, tt.wantURLs, tt.wantFloor, tt.wantKnown)
			}
		})
	}
}

// TestWalk_BreakEarly: the iterator stops when the caller breaks, and no
// further page is requested.
func TestWalk_BreakEarly(t *testing.T) {
	t.Parallel()
	s := wpSite(t, true)
	w := &APIWalker{Client: s.client(), Spec: WordPress(s.url(""), 3)}
	n := 0
	for range w.Walk(context.Background(), Stop{Now: fixedNow}) {
		if n++; n == 2 {
			break
		}
	}
	if got := len(s.requests()); got != 1 {
		t.Errorf("requests after break = %d, want 1", got)
	}
}

// validatingDoer adds If-None-Match from the ETags it has seen, as the
// fetch chain's Validators layer does (D4).
type validatingDoer struct {
	c     Doer
	mu    sync.Mutex
	etags map[string]string
}

func (d *validatingDoer) Do(req *http.Request) (*http.Response, error) {
	d.mu.Lock()
	if e := d.etags[req.URL.String()]; e != "" {
		req.Header.Set("If-None-Match", e)
	}
	d.mu.Unlock()
	resp, err := d.c.Do(req)
	if err == nil && resp.StatusCode == http.StatusOK {
		if e := resp.Header.Get("ETag"); e != "" {
			d.mu.Lock()
			d.etags[req.URL.String()] = e
			d.mu.Unlock()
		}
	}
	return resp, err
}

// etagged serves body with an ETag and answers 304 to a matching
// If-None-Match.
func etagged(ctype, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		etag := fmt.Sprintf(`"%x"`, len(body))
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", ctype)
		io.WriteString(w, body)
	}
}

// TestWalk_D4_NotModified: through a client that sends validators, a
// second walk gets 304s: an unchanged API page ends the walk, an unchanged
// sitemap file is skipped, and nothing is yielded twice or reported as an
// error.
func TestWalk_D4_NotModified(t *testing.T) {
	t.Parallel()
	s := newTestSite(t)
	s.mux.HandleFunc("/api", etagged("application/json", `[{"id": 1, "link": "https://example.test/1"}, {"id": 2, "link": "https://example.test/2"}]`))
	s.mux.HandleFunc("/sitemap.xml", etagged("application/xml", `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.test/1</loc></url></urlset>`))
	s.mux.HandleFunc("/news.xml", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.test/2</loc></url></urlset>`)
	})
	d := &validatingDoer{c: s.client(), etags: map[string]string{}}
	api := &APIWalker{Client: d, Spec: APISpec{URL: s.url("/api"), ID: "id", Link: "link", Next: "next"}}
	sm := &SitemapWalker{Client: d, URLs: []string{s.url("/sitemap.xml"), s.url("/news.xml")}}
	tests := []struct {
		name   string
		w      Walker
		first  int
		second int
	}{
		{"api", api, 2, 0},
		{"sitemaps", sm, 2, 1}, // news.xml sends no validators: read again
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for pass, want := range []int{tt.first, tt.second} {
				n := 0
				for _, err := range tt.w.Walk(context.Background(), Stop{Now: fixedNow}) {
					if err != nil {
						t.Fatalf("pass %d: %v", pass+1, err)
					}
					n++
				}
				if n != want {
					t.Errorf("pass %d: %d refs, want %d", pass+1, n, want)
				}
			}
		})
	}
}
