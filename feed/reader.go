package feed

import (
	"context"
	"fmt"
	"net/http"
)

// Bounds of a feed read.
const (
	// DefaultMaxFeedBytes bounds a feed document (decoded bytes) when
	// Reader.MaxBytes is zero. The fetch client applies its own caps first.
	DefaultMaxFeedBytes = 10 << 20
	// DefaultMaxItems bounds the items kept from one feed when
	// Reader.MaxItems is zero; further items are dropped and
	// Result.Truncated is set.
	DefaultMaxItems = 1000
)

// feedAccept is the Accept header a Reader sends. The fetch chain's identity
// layer may replace it with the policy's own.
const feedAccept = "application/rss+xml, application/atom+xml, application/feed+json, application/xml;q=0.9, text/xml;q=0.9, application/json;q=0.8, */*;q=0.1"

// Reader reads feeds with conditional GET (D4). Set Client; every other
// field's zero value works. A Reader is safe for concurrent use; do not
// change its fields after the first Read.
type Reader struct {
	// Client sends every request. Required: use the fetch client's
	// HTTPClient() so robots.txt, pacing and refusals apply.
	Client Doer
	// Store keeps each feed's validators. Nil: an in-memory store, made on
	// first use and owned by the Reader.
	Store Store
	// MaxBytes bounds a feed's body. 0: DefaultMaxFeedBytes.
	MaxBytes int64
	// MaxItems bounds the items kept from one feed. 0: DefaultMaxItems.
	MaxItems int
	// Keep names the query parameters the source declares necessary: they
	// survive tracking-parameter stripping (V10).
	Keep []string
	// RefsOnly is trigger mode (V1): only references are kept (identifier,
	// link, dates); nothing of the feed's content is.
	RefsOnly bool
	// OnParse, when set, is called once for every feed document parsed (a
	// 304 calls nothing): a hook for metrics and for proving D4.
	OnParse func(url string)

	mem MemStore
}

// Result is the outcome of one feed read.
type Result struct {
	// URL is the address read, after any redirects.
	URL string
	// NotModified reports a 304: the feed is unchanged since the validators
	// kept for it, and nothing was parsed (D4). Feed is nil then.
	NotModified bool
	// Feed is the normalised feed; nil when NotModified.
	Feed *Feed
	// Truncated reports that items beyond MaxItems were dropped.
	Truncated bool
	// Validators are what the server sent with the feed (kept for the next
	// read).
	Validators Validators
}

func (r *Reader) store() Store {
	if r.Store != nil {
		return r.Store
	}
	return &r.mem
}

// Read reads the feed at feedURL. It sends the validators kept for feedURL
// (If-None-Match, If-Modified-Since); on a 304 it returns a Result with
// NotModified set without parsing anything. On a 200 it parses the feed,
// keeps the new validators and returns the normalised feed. Any other status
// is a *StatusError; a document that is not a feed, or is malformed, a
// *ParseError. A refusal made by the client (robots.txt, cool-down, …)
// comes back wrapped, for errors.As.
func (r *Reader) Read(ctx context.Context, feedURL string) (*Result, error) {
	st := r.store()
	v, err := st.Validators(ctx, feedURL)
	if err != nil {
		return nil, fmt.Errorf("feed: validators for %s: %w", feedURL, err)
	}
	hdr := http.Header{"Accept": {feedAccept}}
	if v.ETag != "" {
		hdr.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		hdr.Set("If-Modified-Since", v.LastModified)
	}
	max := r.MaxBytes
	if max <= 0 {
		max = DefaultMaxFeedBytes
	}
	resp, err := get(ctx, r.Client, feedURL, hdr, max)
	if err != nil {
		return nil, err
	}
	res := &Result{URL: resp.url.String()}
	switch resp.status {
	case http.StatusNotModified:
		res.NotModified = true
		res.Validators = v
		return res, nil
	case http.StatusOK:
	default:
		return nil, &StatusError{URL: feedURL, StatusCode: resp.status, RetryAfter: resp.header.Get("Retry-After")}
	}
	body, err := gunzip(resp.body, max)
	if err != nil {
		return nil, &ParseError{URL: feedURL, Format: "feed", Err: err}
	}
	if r.OnParse != nil {
		r.OnParse(feedURL)
	}
	maxItems := r.MaxItems
	if maxItems <= 0 {
		maxItems = DefaultMaxItems
	}
	f, truncated, err := normalize(body, resp.url, parseConfig{keep: r.Keep, maxItems: maxItems, refsOnly: r.RefsOnly})
	if err != nil {
		return nil, err
	}
	res.Feed, res.Truncated = f, truncated
	res.Validators = Validators{ETag: resp.header.Get("ETag"), LastModified: resp.header.Get("Last-Modified")}
	if err := st.SetValidators(ctx, feedURL, res.Validators); err != nil {
		return nil, fmt.Errorf("feed: keep validators for %s: %w", feedURL, err)
	}
	return res, nil
}
