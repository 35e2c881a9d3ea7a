package feed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/internal/decode"
	"github.com/politefetch/politefetch/robots"
)

// Bounds of a sitemap walk. The first two are sitemaps.org's limits for one
// sitemap file (uncompressed) and are enforced as errors.
const (
	MaxSitemapBytes        = 50 << 20 // 50 MB decoded, per file
	MaxSitemapURLs         = 50000    // entries per file
	DefaultMaxSitemapFiles = 100      // files read in one walk
	maxSitemapDepth        = 2        // an index within an index, at most
	maxXMLDepth            = 64
)

// newsNS is the Google News sitemap namespace.
const newsNS = "http://www.google.com/schemas/sitemap-news/0.9"

// SitemapWalker walks a site's sitemaps newest to oldest: sitemap
// indexes (recursing), urlsets with lastmod, news sitemaps
// (news:publication_date), plain-text sitemaps, each possibly gzipped. A
// batch is one sitemap file. A file answered 304 (the client sent
// validators, as the fetch chain does) is unchanged since the client last
// read it and is skipped. Set Client; the zero value of every other
// field works. It is safe for concurrent walks; do not change its fields
// after the first.
type SitemapWalker struct {
	// Client sends every request (robots.txt, each sitemap). Required: use
	// the fetch client's Doer for sitemaps, client.Doer(fetch.KindSitemap).
	Client Doer
	// URLs are the sitemaps or sitemap indexes to walk, in order. Empty:
	// those named in Site's robots.txt, else Site + "/sitemap.xml".
	URLs []string
	// Site is the site's origin, e.g. "https://example.org"; used only when
	// URLs is empty.
	Site string
	// MaxBytes bounds one sitemap file, decoded. 0: MaxSitemapBytes.
	MaxBytes int64
	// MaxURLs bounds the entries of one file. 0: MaxSitemapURLs.
	MaxURLs int
	// MaxFiles bounds the files read in one walk. 0: DefaultMaxSitemapFiles.
	MaxFiles int
	// Keep names the query parameters the source declares necessary (names
	// or "prefix*" patterns).
	Keep []string
	// Clock gives Stop.Now when it is zero. Nil: real time.
	Clock Clock
}

// sitemapEntry is one <url> or <sitemap> entry, or one text line.
type sitemapEntry struct {
	loc       string
	lastmod   time.Time
	published time.Time
}

// sitemapDoc is a parsed sitemap file.
type sitemapDoc struct {
	index   bool // a <sitemapindex>: entries are sitemaps
	entries []sitemapEntry
}

// Walk implements [Walker].
func (w *SitemapWalker) Walk(ctx context.Context, stop Stop) iter.Seq2[Ref, error] {
	return func(yield func(Ref, error) bool) {
		now := stop.Now
		if now.IsZero() {
			now = clock.Or(w.Clock).Now()
		}
		roots := w.URLs
		if len(roots) == 0 {
			var err error
			roots, err = SitemapsFromRobots(ctx, w.Client, w.Site)
			if err != nil {
				yield(Ref{}, err)
				return
			}
		}
		s := &sitemapWalk{w: w, ctx: ctx, stop: stop, now: now, yield: yield,
			visited: map[string]bool{}, seen: map[string]bool{}}
		for _, u := range roots {
			if !s.doc(u, 0) {
				return
			}
		}
	}
}

type sitemapWalk struct {
	w       *SitemapWalker
	ctx     context.Context
	stop    Stop
	now     time.Time
	yield   func(Ref, error) bool
	visited map[string]bool // sitemap files read
	seen    map[string]bool // ref URLs yielded
	files   int
}

// doc walks one sitemap file; it reports whether the walk goes on.
func (s *sitemapWalk) doc(u string, depth int) bool {
	if s.visited[u] {
		return true
	}
	s.visited[u] = true
	if err := s.ctx.Err(); err != nil {
		s.yield(Ref{}, err)
		return false
	}
	maxFiles := s.w.MaxFiles
	if maxFiles <= 0 {
		maxFiles = DefaultMaxSitemapFiles
	}
	if s.files++; s.files > maxFiles {
		s.yield(Ref{}, fmt.Errorf("feed: sitemap walk: more than %d files: %w", maxFiles, ErrTooMany))
		return false
	}
	d, err := s.w.read(s.ctx, u)
	if err != nil {
		return s.yield(Ref{}, err)
	}
	if d == nil {
		return true // 304: unchanged since the client last read it
	}
	if d.index {
		if depth >= maxSitemapDepth {
			return s.yield(Ref{}, &ParseError{URL: u, Format: "sitemap", Err: errors.New("sitemap indexes nested too deep")})
		}
		children := slices.Clone(d.entries)
		slices.SortStableFunc(children, func(a, b sitemapEntry) int { return cmpNewest(a.lastmod, b.lastmod) })
		for _, c := range children {
			// A sitemap last modified before the floor lists nothing newer.
			if !s.stop.Floor.IsZero() && !c.lastmod.IsZero() && c.lastmod.Before(s.stop.Floor) {
				continue
			}
			if !s.doc(c.loc, depth+1) {
				return false
			}
		}
		return true
	}
	batch := make([]Ref, 0, len(d.entries))
	for _, e := range d.entries {
		batch = append(batch, Ref{URL: e.loc, Published: e.published, Updated: e.lastmod})
	}
	v := s.stop.judge(batch, s.now)
	for _, r := range v.yield {
		if s.seen[r.URL] {
			continue
		}
		s.seen[r.URL] = true
		if !s.yield(r, nil) {
			return false
		}
	}
	// The floor ends this file (its older entries); a known batch ends the walk.
	return !v.known
}

// cmpNewest orders times newest first, zero times last.
func cmpNewest(a, b time.Time) int {
	switch {
	case a.IsZero() && b.IsZero():
		return 0
	case a.IsZero():
		return 1
	case b.IsZero():
		return -1
	}
	return b.Compare(a)
}

// read fetches and parses one sitemap file; a nil doc and no error for a
// 304 (the client sent validators: the file is unchanged since it last read
// it, and its refs were yielded then).
func (w *SitemapWalker) read(ctx context.Context, u string) (*sitemapDoc, error) {
	max := w.MaxBytes
	if max <= 0 {
		max = MaxSitemapBytes
	}
	resp, err := get(ctx, w.Client, u, http.Header{"Accept": {"application/xml, text/xml;q=0.9, application/gzip;q=0.8, text/plain;q=0.5"}}, max)
	if err != nil {
		return nil, err
	}
	if resp.status == http.StatusNotModified {
		return nil, nil
	}
	if resp.status != http.StatusOK {
		return nil, &StatusError{URL: u, StatusCode: resp.status, RetryAfter: resp.header.Get("Retry-After")}
	}
	body, err := gunzipFile(resp.body, max)
	if err != nil {
		return nil, &ParseError{URL: u, Format: "sitemap", Err: err}
	}
	maxURLs := w.MaxURLs
	if maxURLs <= 0 {
		maxURLs = MaxSitemapURLs
	}
	d, err := parseSitemap(body, resp.url, newLinkCleaner(w.Keep), maxURLs)
	if err != nil {
		return nil, &ParseError{URL: u, Format: "sitemap", Err: err}
	}
	return d, nil
}

// parseSitemap parses an XML (urlset or sitemapindex) or plain-text sitemap.
// Entries whose loc is not an absolute http(s) URL are dropped; more than
// maxURLs entries is an error wrapping ErrTooMany.
func parseSitemap(data []byte, base *url.URL, links linkCleaner, maxURLs int) (*sitemapDoc, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	trimmed = bytes.TrimPrefix(trimmed, []byte("\xef\xbb\xbf"))
	if len(trimmed) == 0 {
		return nil, errors.New("empty document")
	}
	if trimmed[0] != '<' {
		return parseTextSitemap(trimmed, base, links, maxURLs)
	}
	dec := xml.NewDecoder(bytes.NewReader(trimmed))
	dec.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		switch strings.ToLower(label) {
		case "utf-8", "utf8", "us-ascii", "ascii":
			return r, nil
		}
		return nil, fmt.Errorf("unsupported charset %q", label)
	}
	p := &sitemapParser{base: base, links: links, maxURLs: maxURLs}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			err = p.start(t)
		case xml.CharData:
			if p.text.Len() < 8<<10 {
				p.text.Write(t)
			}
		case xml.EndElement:
			err = p.end()
		}
		if err != nil {
			return nil, err
		}
	}
	if !p.root || len(p.stack) != 0 {
		return nil, errors.New("truncated document")
	}
	return &p.d, nil
}

// sitemapParser is the state of one XML sitemap's parse.
type sitemapParser struct {
	base    *url.URL
	links   linkCleaner
	maxURLs int

	d     sitemapDoc
	stack []xml.Name
	cur   *sitemapEntry // the entry being read, if any
	text  strings.Builder
	count int
	root  bool
}

// start opens element t: the root says which kind of sitemap it is, and an
// entry at depth one starts one.
func (p *sitemapParser) start(t xml.StartElement) error {
	if len(p.stack) >= maxXMLDepth {
		return errors.New("elements nested too deep")
	}
	switch len(p.stack) {
	case 0:
		p.root = true
		switch t.Name.Local {
		case "urlset":
		case "sitemapindex":
			p.d.index = true
		default:
			return fmt.Errorf("root element <%s> is not a sitemap", t.Name.Local)
		}
	case 1:
		if (!p.d.index && t.Name.Local == "url") || (p.d.index && t.Name.Local == "sitemap") {
			if p.count++; p.count > p.maxURLs {
				return fmt.Errorf("more than %d entries: %w", p.maxURLs, ErrTooMany)
			}
			p.cur = &sitemapEntry{}
		}
	}
	p.stack = append(p.stack, t.Name)
	p.text.Reset()
	return nil
}

// end closes the innermost element, recording what it held in the entry
// being read, and the entry once it ends.
func (p *sitemapParser) end() error {
	if len(p.stack) == 0 {
		return errors.New("unbalanced end element")
	}
	name := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	if p.cur == nil {
		return nil
	}
	val := strings.TrimSpace(p.text.String())
	switch {
	case len(p.stack) == 1: // the entry itself ends
		if loc := p.links.link(p.base, p.cur.loc); loc != "" {
			p.cur.loc = loc
			p.d.entries = append(p.d.entries, *p.cur)
		}
		p.cur = nil
	case len(p.stack) == 2 && name.Local == "loc":
		p.cur.loc = val
	case len(p.stack) == 2 && name.Local == "lastmod":
		p.cur.lastmod = w3cDate(val)
	case name.Local == "publication_date" && (name.Space == newsNS || p.stack[len(p.stack)-1].Local == "news"):
		p.cur.published = w3cDate(val)
	}
	p.text.Reset()
	return nil
}

func parseTextSitemap(data []byte, base *url.URL, links linkCleaner, maxURLs int) (*sitemapDoc, error) {
	var d sitemapDoc
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if len(d.entries) >= maxURLs {
			return nil, fmt.Errorf("more than %d entries: %w", maxURLs, ErrTooMany)
		}
		u, err := url.Parse(line)
		if err != nil || !u.IsAbs() {
			return nil, fmt.Errorf("text sitemap line %q is not an absolute URL", truncate(line, 80))
		}
		if loc := links.link(base, line); loc != "" {
			d.entries = append(d.entries, sitemapEntry{loc: loc})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return &d, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// w3cLayouts are the W3C Datetime forms sitemaps use, most precise first,
// plus the zone-less forms found in the wild (read as UTC).
var w3cLayouts = [...]string{
	time.RFC3339Nano,
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05",
	"2006-01-02",
	"2006-01",
	"2006",
}

// w3cDate parses a W3C Datetime; the zero time when it cannot.
func w3cDate(s string) time.Time {
	for _, l := range w3cLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// SitemapsFromRobots reads site's robots.txt through c and returns the
// sitemaps it names (Sitemap: lines, any group, as package robots reads
// them), absolute and cleaned. When robots.txt names none, or does not answer
// 200, it returns site + "/sitemap.xml". site is an origin such as
// "https://example.org". A refusal by the client is returned as an error.
func SitemapsFromRobots(ctx context.Context, c Doer, site string) ([]string, error) {
	base, err := url.Parse(strings.TrimSuffix(site, "/") + "/")
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("feed: bad site %q", site)
	}
	robotsURL := base.ResolveReference(&url.URL{Path: "/robots.txt"})
	resp, err := get(ctx, c, robotsURL.String(), http.Header{"Accept": {"text/plain"}}, robots.MaxBodySize)
	if err != nil && !errors.Is(err, ErrTooLarge) {
		return nil, err
	}
	var out []string
	if err == nil && resp.status == http.StatusOK {
		links := newLinkCleaner(nil)
		for _, sm := range robots.Parse(resp.body).Sitemaps() {
			if u := links.link(resp.url, sm); u != "" && !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	if len(out) == 0 {
		out = []string{base.ResolveReference(&url.URL{Path: "/sitemap.xml"}).String()}
	}
	return out, nil
}

// gunzipFile returns a sitemap file's XML or text: b itself, or, when b is a
// gzip file (sitemaps.org allows sitemap.xml.gz; its gzip is the file's
// format, not a content-coding the Doer removes), b decompressed by the
// module's one decoder, at most max bytes. A gzip bomb is an error wrapping
// [ErrTooLarge].
func gunzipFile(b []byte, max int64) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	body, err := decode.Read(bytes.NewReader(b), int64(len(b)), []string{"gzip"}, decode.Limits{MaxWire: max, MaxDecoded: max})
	switch {
	case errors.Is(err, decode.ErrDecodedTooLarge) || errors.Is(err, decode.ErrWireTooLarge):
		return nil, fmt.Errorf("gzip file: more than %d decoded bytes: %w", max, ErrTooLarge)
	case err != nil:
		return nil, fmt.Errorf("gzip file: %w", err)
	}
	return body.Envelope, nil
}
