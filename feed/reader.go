package feed

import (
	"context"
	"net/http"
)

// Bounds of a feed read.
const (
	// DefaultMaxFeedBytes bounds a feed document (the bytes the Doer
	// delivers) when Reader.MaxBytes is zero. The fetch client applies its
	// own caps first.
	DefaultMaxFeedBytes = 10 << 20
	// DefaultMaxItems bounds the items kept from one feed when
	// Reader.MaxItems is zero; further items are dropped and
	// Result.Truncated is set.
	DefaultMaxItems = 1000
)

// feedAccept is the Accept header a Reader sends. The fetch chain's identity
// layer may replace it with the policy's own.
const feedAccept = "application/rss+xml, application/atom+xml, application/feed+json, application/xml;q=0.9, text/xml;q=0.9, application/json;q=0.8, */*;q=0.1"

// Reader reads and normalises feeds. Set Client; every other field's zero
// value works. A Reader is safe for concurrent use; do not change its fields
// after the first Read.
//
// A Reader keeps no state between reads: conditional GET is the Client's.
// Through the fetch client's Doer for feeds, the second read of an
// unchanged feed is a 304, which the Reader reports as [Result.NotModified]
// without parsing anything.
type Reader struct {
	// Client sends every request. Required: use the fetch client's Doer
	// for feeds, client.Doer(fetch.KindFeed) (see [Doer] for what a plain
	// *http.Client loses).
	Client Doer
	// MaxBytes bounds a feed's body. 0: DefaultMaxFeedBytes.
	MaxBytes int64
	// MaxItems bounds the items kept from one feed. 0: DefaultMaxItems.
	MaxItems int
	// Keep names the query parameters the source declares necessary (names
	// or "prefix*" patterns): they survive tracking-parameter stripping.
	Keep []string
	// RefsOnly is trigger mode: only references are kept (identifier,
	// link, dates); nothing of the feed's content is.
	RefsOnly bool
	// OnParse, when set, is called once for every feed document parsed (a
	// 304 calls nothing): a hook for metrics.
	OnParse func(url string)
}

// Result is the outcome of one feed read.
type Result struct {
	// URL is the address read, after any redirects.
	URL string
	// NotModified reports a 304: the Client sent validators and the feed
	// is unchanged since, so nothing was parsed. Feed is nil then.
	NotModified bool
	// Feed is the normalised feed; nil when NotModified.
	Feed *Feed
	// Truncated reports that items beyond MaxItems were dropped.
	Truncated bool
	// Header is the response's header (ETag, Last-Modified, Cache-Control,
	// …), as the Client returned it.
	Header http.Header
}

// Read reads the feed at feedURL through the Client. On a 304 (the Client's
// conditional GET) it returns a Result with NotModified set without parsing
// anything; on a 200 it parses the feed and returns it normalised. Any other
// status is a *[StatusError]; a document that is not a feed, or is
// malformed, a *[ParseError]. A refusal made by the Client (robots.txt,
// cool-down, …) comes back wrapped, for errors.As.
func (r *Reader) Read(ctx context.Context, feedURL string) (*Result, error) {
	max := r.MaxBytes
	if max <= 0 {
		max = DefaultMaxFeedBytes
	}
	resp, err := get(ctx, r.Client, feedURL, http.Header{"Accept": {feedAccept}}, max)
	if err != nil {
		return nil, err
	}
	res := &Result{URL: resp.url.String(), Header: resp.header}
	switch resp.status {
	case http.StatusNotModified:
		res.NotModified = true
		return res, nil
	case http.StatusOK:
	default:
		return nil, &StatusError{URL: feedURL, StatusCode: resp.status, RetryAfter: resp.header.Get("Retry-After")}
	}
	if r.OnParse != nil {
		r.OnParse(feedURL)
	}
	maxItems := r.MaxItems
	if maxItems <= 0 {
		maxItems = DefaultMaxItems
	}
	f, truncated, err := normalize(resp.body, resp.url, parseConfig{links: newLinkCleaner(r.Keep), maxItems: maxItems, refsOnly: r.RefsOnly})
	if err != nil {
		return nil, err
	}
	res.Feed, res.Truncated = f, truncated
	return res, nil
}
