package feed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
)

// Bounds of an API walk.
const (
	// DefaultMaxPageBytes bounds one API page when APIWalker.MaxBytes is 0.
	DefaultMaxPageBytes = 8 << 20
	// DefaultMaxPages bounds the pages of one walk when APISpec.MaxPages is 0.
	DefaultMaxPages = 1000
	// maxPageItems bounds the items read from one page.
	maxPageItems = 10000
)

// APISpec describes a paginated JSON list of articles, newest first, as
// data: a new CMS needs a spec, not code. Paths are dot-separated object
// keys ("data.items"); "" is the document itself. It can be loaded from
// JSON.
type APISpec struct {
	// URL is the first page's address.
	URL string `json:"url"`
	// List is the path of the array of articles in a page.
	List string `json:"list"`
	// ID, Link, Published and Updated are paths within one article: its
	// CMS identifier (a string or a number), its address, and its
	// publication and modification dates. Only Link is required.
	ID        string `json:"id"`
	Link      string `json:"link"`
	Published string `json:"published"`
	Updated   string `json:"updated"`
	// DateLayouts are tried, in order, after RFC 3339; a date without a
	// zone is UTC. Empty: RFC 3339 only.
	DateLayouts []string `json:"date_layouts,omitempty"`
	// Pagination, the first that is set wins: Next is the path of the next
	// page's address in a page; NextLink follows the Link header's
	// rel="next"; PageParam is a query parameter counted up from FirstPage
	// (0: 1). With none set, only the first page is read.
	Next      string `json:"next,omitempty"`
	NextLink  bool   `json:"next_link,omitempty"`
	PageParam string `json:"page_param,omitempty"`
	FirstPage int    `json:"first_page,omitempty"`
	// TotalPagesHeader names a response header giving the page count
	// (WordPress: X-WP-TotalPages); no page beyond it is asked for.
	TotalPagesHeader string `json:"total_pages_header,omitempty"`
	// EndStatus lists statuses that, after the first page, mean "past the
	// end" rather than an error (WordPress answers 400
	// rest_post_invalid_page_number).
	EndStatus []int `json:"end_status,omitempty"`
	// MaxPages bounds the pages of one walk. 0: DefaultMaxPages.
	MaxPages int `json:"max_pages,omitempty"`
}

// WordPress returns the spec of a WordPress site's post list:
// /wp-json/wp/v2/posts, newest first, perPage posts a page (0: 100, the
// API's maximum), asking only for the fields needed (id, link, date_gmt,
// modified_gmt), with the post id as identifier. site is an origin such as
// "https://example.org".
func WordPress(site string, perPage int) APISpec {
	if perPage <= 0 || perPage > 100 {
		perPage = 100
	}
	q := url.Values{}
	q.Set("per_page", strconv.Itoa(perPage))
	q.Set("orderby", "date")
	q.Set("order", "desc")
	q.Set("_fields", "id,link,date_gmt,modified_gmt")
	return APISpec{
		URL:              strings.TrimSuffix(site, "/") + "/wp-json/wp/v2/posts?" + q.Encode(),
		ID:               "id",
		Link:             "link",
		Published:        "date_gmt",
		Updated:          "modified_gmt",
		DateLayouts:      []string{"2006-01-02T15:04:05"},
		PageParam:        "page",
		FirstPage:        1,
		TotalPagesHeader: "X-WP-TotalPages",
		EndStatus:        []int{http.StatusBadRequest},
	}
}

// APIWalker walks a paginated JSON API described by Spec, newest to oldest;
// a batch is one page. Set Client and Spec; the zero value of every
// other field works. It is safe for concurrent walks; do not change its
// fields after the first.
type APIWalker struct {
	// Client sends every request. Required: use the fetch client's Doer
	// for API lists, client.Doer(fetch.KindAPI).
	Client Doer
	// Spec describes the list.
	Spec APISpec
	// MaxBytes bounds one page. 0: DefaultMaxPageBytes.
	MaxBytes int64
	// Keep names the query parameters the source declares necessary (names
	// or "prefix*" patterns).
	Keep []string
	// Clock gives Stop.Now when it is zero. Nil: real time.
	Clock Clock
}

// Walk implements [Walker]. Pages are read in order; the walk ends at the
// last page, at an empty page, at MaxPages, or when a stop rule fires: a
// page holding a ref dated before the floor, or a page wholly known and
// beyond the window. A page answered 304 (the client sent validators, as the
// fetch chain does) is unchanged since the client last read it: every ref on
// it was yielded then, and the walk ends there too.
func (w *APIWalker) Walk(ctx context.Context, stop Stop) iter.Seq2[Ref, error] {
	return func(yield func(Ref, error) bool) {
		now := stop.Now
		if now.IsZero() {
			now = clock.Or(w.Clock).Now()
		}
		sp := w.Spec
		if err := sp.Validate(); err != nil {
			yield(Ref{}, err)
			return
		}
		maxPages := sp.MaxPages
		if maxPages <= 0 {
			maxPages = DefaultMaxPages
		}
		first := sp.FirstPage
		if first == 0 {
			first = 1
		}
		next, total := sp.URL, -1
		visited := map[string]bool{}
		for page := 0; next != ""; page++ {
			if page >= maxPages {
				yield(Ref{}, fmt.Errorf("feed: api walk %s: more than %d pages: %w", sp.URL, maxPages, ErrTooMany))
				return
			}
			if sp.PageParam != "" && total >= 0 && first+page > total {
				return
			}
			if visited[next] {
				return // a next link back to a page already read: the end
			}
			visited[next] = true
			u := next
			if sp.PageParam != "" {
				var err error
				if u, err = withParam(sp.URL, sp.PageParam, strconv.Itoa(first+page)); err != nil {
					yield(Ref{}, err)
					return
				}
			}
			refs, pg, err := w.page(ctx, u, page > 0)
			if err != nil {
				yield(Ref{}, err)
				return
			}
			if pg.end || len(refs) == 0 {
				return
			}
			v := stop.judge(refs, now)
			for _, r := range v.yield {
				if !yield(r, nil) {
					return
				}
			}
			if v.floor || v.known {
				return
			}
			if pg.total >= 0 {
				total = pg.total
			}
			switch {
			case sp.PageParam != "":
				next = fmt.Sprint("page ", first+page+1) // the address is made from PageParam
			case sp.Next != "" || sp.NextLink:
				next = pg.next
			default:
				next = ""
			}
		}
	}
}

// pageInfo is what one page says about pagination.
type pageInfo struct {
	next  string // the next page's address, "" when none
	total int    // the page count a header gave, -1 when none
	end   bool   // an EndStatus answer (past the last page) or a 304
}

// page reads one page and returns its refs.
func (w *APIWalker) page(ctx context.Context, u string, later bool) ([]Ref, pageInfo, error) {
	sp := w.Spec
	pi := pageInfo{total: -1}
	max := w.MaxBytes
	if max <= 0 {
		max = DefaultMaxPageBytes
	}
	links := newLinkCleaner(w.Keep)
	resp, err := get(ctx, w.Client, u, http.Header{"Accept": {"application/json"}}, max)
	if err != nil {
		return nil, pi, err
	}
	if resp.status == http.StatusNotModified {
		// The client's conditional GET: the page is unchanged since the
		// client last read it, so every ref on it was yielded then.
		pi.end = true
		return nil, pi, nil
	}
	if resp.status != http.StatusOK {
		if later && slices.Contains(sp.EndStatus, resp.status) {
			pi.end = true
			return nil, pi, nil
		}
		return nil, pi, &StatusError{URL: u, StatusCode: resp.status, RetryAfter: resp.header.Get("Retry-After")}
	}
	if h := sp.TotalPagesHeader; h != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(resp.header.Get(h))); err == nil && n >= 0 {
			pi.total = n
		}
	}
	if sp.NextLink {
		pi.next = linkNext(resp.header, resp.url, links)
	}
	refs, next, err := parsePage(resp.body, resp.url, sp, links)
	if err != nil {
		return nil, pi, &ParseError{URL: u, Format: "json", Err: err}
	}
	if sp.Next != "" {
		pi.next = next
	}
	return refs, pi, nil
}

// parsePage decodes one page of the list described by sp.
func parsePage(body []byte, base *url.URL, sp APISpec, links linkCleaner) (refs []Ref, next string, err error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, "", err
	}
	list, ok := lookup(doc, sp.List).([]any)
	if !ok {
		return nil, "", fmt.Errorf("no array at %q", sp.List)
	}
	if len(list) > maxPageItems {
		return nil, "", fmt.Errorf("more than %d items in a page: %w", maxPageItems, ErrTooMany)
	}
	for _, el := range list {
		link := links.link(base, scalar(lookup(el, sp.Link)))
		if link == "" {
			continue
		}
		r := Ref{URL: link}
		if sp.ID != "" {
			r.ID = scalar(lookup(el, sp.ID))
		}
		if sp.Published != "" {
			r.Published = apiDate(scalar(lookup(el, sp.Published)), sp.DateLayouts)
		}
		if sp.Updated != "" {
			r.Updated = apiDate(scalar(lookup(el, sp.Updated)), sp.DateLayouts)
		}
		refs = append(refs, r)
	}
	if sp.Next != "" {
		next = links.link(base, scalar(lookup(doc, sp.Next)))
	}
	return refs, next, nil
}

// lookup follows a dot path of object keys; nil when absent.
func lookup(v any, path string) any {
	if path == "" {
		return v
	}
	for key := range strings.SplitSeq(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[key]
	}
	return v
}

// scalar renders a JSON string or number as written; "" otherwise.
func scalar(v any) string {
	switch t := v.(type) {
	case string:
		return clean(t)
	case json.Number:
		return t.String()
	}
	return ""
}

// apiDate parses s as RFC 3339, then with each layout (UTC when zone-less).
func apiDate(s string, layouts []string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC()
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// withParam returns raw with the query parameter name set to value.
func withParam(raw, name, value string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("feed: bad api url %q: %w", raw, err)
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// linkNext returns the rel="next" target of the Link headers, resolved
// against base and cleaned; "" when none.
func linkNext(h http.Header, base *url.URL, links linkCleaner) string {
	for _, v := range h.Values("Link") {
		for part := range strings.SplitSeq(v, ",") {
			target, params, ok := strings.Cut(part, ";")
			if !ok {
				continue
			}
			target = strings.TrimSpace(target)
			if !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for p := range strings.SplitSeq(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "rel") && slices.Contains(strings.Fields(strings.ToLower(strings.Trim(val, `"`))), "next") {
					return links.link(base, target[1:len(target)-1])
				}
			}
		}
	}
	return ""
}

// Validate reports a spec that cannot work.
func (sp APISpec) Validate() error {
	if sp.URL == "" {
		return errors.New("feed: api spec has no url")
	}
	if sp.Link == "" {
		return errors.New("feed: api spec has no link path")
	}
	return nil
}
