package politetest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// wpPost is a post as WordPress's REST API shows it.
type wpPost struct {
	ID            int        `json:"id"`
	Date          string     `json:"date"`
	DateGMT       string     `json:"date_gmt"`
	GUID          wpRendered `json:"guid"`
	Modified      string     `json:"modified"`
	ModifiedGMT   string     `json:"modified_gmt"`
	Slug          string     `json:"slug"`
	Status        string     `json:"status"`
	Type          string     `json:"type"`
	Link          string     `json:"link"`
	Title         wpRendered `json:"title"`
	Content       wpRendered `json:"content"`
	Excerpt       wpRendered `json:"excerpt"`
	Author        int        `json:"author"`
	FeaturedMedia int        `json:"featured_media"`
	Categories    []int      `json:"categories"`
	Lang          string     `json:"lang"`
}

type wpRendered struct {
	Rendered  string `json:"rendered"`
	Protected *bool  `json:"protected,omitempty"`
}

const wpTime = "2006-01-02T15:04:05"

func (s *Site) wpPostOf(a Article) wpPost {
	f := false
	return wpPost{
		ID:          a.ID,
		Date:        a.Published.Format(wpTime),
		DateGMT:     a.Published.Format(wpTime),
		GUID:        wpRendered{Rendered: a.GUID(s.name)},
		Modified:    a.Modified.Format(wpTime),
		ModifiedGMT: a.Modified.Format(wpTime),
		Slug:        a.Slug,
		Status:      "publish",
		Type:        "post",
		Link:        s.URL(a.Path),
		Title:       wpRendered{Rendered: a.Title},
		Content:     wpRendered{Rendered: a.contentHTML(), Protected: &f},
		Excerpt:     wpRendered{Rendered: "<p>" + a.Summary + "</p>\n", Protected: &f},
		Author:      1,
		Categories:  []int{1},
		Lang:        a.Lang,
	}
}

func wpError(w http.ResponseWriter, status int, code, msg string) {
	body, _ := json.Marshal(map[string]any{"code": code, "message": msg, "data": map[string]int{"status": status}})
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	w.Write(body)
}

// serveWP answers /wp-json/wp/v2/posts (newest first, paginated like
// WordPress: per_page 1–100, default 10; a page past the last is a 400) and
// /wp-json/wp/v2/posts/<id>. Both honour _fields.
func (s *Site) serveWP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fields := q.Get("_fields")
	if rest := strings.TrimPrefix(r.URL.Path, "/wp-json/wp/v2/posts/"); rest != r.URL.Path {
		id, err := strconv.Atoi(strings.TrimSuffix(rest, "/"))
		a, ok := s.articleByID(id)
		if err != nil || !ok {
			wpError(w, http.StatusNotFound, "rest_post_invalid_id", "Invalid post ID.")
			return
		}
		writeWPJSON(w, r, s.wpPostOf(a), fields, a.Modified)
		return
	}
	perPage, page := 10, 1
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			wpError(w, http.StatusBadRequest, "rest_invalid_param", "Invalid parameter(s): per_page")
			return
		}
		perPage = n
	}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			wpError(w, http.StatusBadRequest, "rest_invalid_param", "Invalid parameter(s): page")
			return
		}
		page = n
	}
	as := s.Articles()
	total := len(as)
	pages := (total + perPage - 1) / perPage
	if page > pages && total > 0 {
		wpError(w, http.StatusBadRequest, "rest_post_invalid_page_number",
			"The page number requested is larger than the number of pages available.")
		return
	}
	var list []wpPost
	for i := (page - 1) * perPage; i < total && i < page*perPage; i++ {
		list = append(list, s.wpPostOf(as[i]))
	}
	if list == nil {
		list = []wpPost{}
	}
	h := w.Header()
	h.Set("X-WP-Total", strconv.Itoa(total))
	h.Set("X-WP-TotalPages", strconv.Itoa(pages))
	var links []string
	link := func(p int, rel string) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(p))
		return "<" + s.URL("/wp-json/wp/v2/posts") + "?" + v.Encode() + `>; rel="` + rel + `"`
	}
	if page > 1 {
		links = append(links, link(page-1, "prev"))
	}
	if page < pages {
		links = append(links, link(page+1, "next"))
	}
	if len(links) > 0 {
		h.Set("Link", strings.Join(links, ", "))
	}
	writeWPJSON(w, r, list, fields, lastModified(as))
}

// writeWPJSON writes v as JSON, keeping only the top-level fields named in
// fields (comma-separated; "a.b" keeps b inside a) when fields is not empty.
func writeWPJSON(w http.ResponseWriter, r *http.Request, v any, fields string, mod time.Time) {
	body, _ := json.Marshal(v)
	if fields != "" {
		var generic any
		json.Unmarshal(body, &generic)
		keep := strings.Split(fields, ",")
		switch g := generic.(type) {
		case []any:
			for i := range g {
				g[i] = pickFields(g[i], keep)
			}
		default:
			generic = pickFields(g, keep)
		}
		body, _ = json.Marshal(generic)
	}
	serveConditional(w, r, "application/json; charset=UTF-8", body, mod)
}

func pickFields(v any, keep []string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for _, f := range keep {
		f = strings.TrimSpace(f)
		top, sub, nested := strings.Cut(f, ".")
		val, ok := m[top]
		if !ok {
			continue
		}
		if !nested {
			out[top] = val
			continue
		}
		inner, ok := val.(map[string]any)
		if !ok {
			continue
		}
		dst, _ := out[top].(map[string]any)
		if dst == nil {
			dst = map[string]any{}
			out[top] = dst
		}
		if sv, ok := inner[sub]; ok {
			dst[sub] = sv
		}
	}
	return out
}

// serveEndlessPages answers the post list as a server that ignores the page
// parameter: every page is the first, and each claims a million pages and
// names the next one.
func (s *Site) serveEndlessPages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	first := r.Clone(r.Context())
	fq := first.URL.Query()
	fq.Del("page")
	first.URL.RawQuery = fq.Encode()
	status, hdr, body := s.render(first)
	h := w.Header()
	copyHeader(h, hdr)
	const pages = 1_000_000
	h.Set("X-WP-TotalPages", strconv.Itoa(pages))
	h.Set("X-WP-Total", strconv.Itoa(pages*10))
	v := url.Values{}
	for k, vs := range q {
		v[k] = vs
	}
	v.Set("page", strconv.Itoa(page+1))
	h.Set("Link", "<"+s.URL("/wp-json/wp/v2/posts")+"?"+v.Encode()+`>; rel="next"`)
	w.WriteHeader(status)
	w.Write(body)
}
