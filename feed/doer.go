package feed

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Doer sends one request; package feed reads every feed, sitemap, API page
// and HTML page through one.
//
// Use the fetch client's Doer for the kind each read is: client.Doer with
// fetch.KindFeed for a [Reader], fetch.KindSitemap for a [SitemapWalker],
// fetch.KindAPI for an [APIWalker], fetch.KindArticle for [Discover]. Then
// robots.txt, per-host pacing, the refusal ledger, identity headers,
// conditional GET with the client's validator store, and decoding of every
// content-coding within bounds all apply, and the ledger judges each read by
// its kind: a host suspended for its articles still has its feeds, sitemaps
// and API lists read on schedule. Package feed does none of these itself.
//
// An *http.Client also satisfies Doer, for code without package fetch; it
// then loses all of the above: nothing obeys robots.txt or paces requests,
// no validators are sent (so no read is ever a 304 and every read is parsed
// again), and only the gzip coding net/http asks for is removed. Package feed
// still bounds what it reads.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// drainBytes is how much of an unusable (non-200) body is read and discarded
// so the connection can be reused.
const drainBytes = 64 << 10

// response is a bounded, fully read response.
type response struct {
	status int
	header http.Header
	body   []byte
	url    *url.URL // final URL after redirects
}

// get sends a GET for u with the extra headers and reads at most max bytes of
// body, as the Doer delivers it (decoded, when the Doer decodes). A longer
// body is an error wrapping [ErrTooLarge]. The body is always closed.
func get(ctx context.Context, c Doer, u string, hdr http.Header, max int64) (*response, error) {
	if c == nil {
		return nil, ErrNoClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("feed: get %s: %w", u, err)
	}
	defer resp.Body.Close()
	final := req.URL
	if resp.Request != nil && resp.Request.URL != nil {
		final = resp.Request.URL
	}
	r := &response{status: resp.StatusCode, header: resp.Header, url: final}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainBytes))
		return r, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("feed: read %s: %w", u, err)
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("feed: %s: more than %d bytes: %w", u, max, ErrTooLarge)
	}
	r.body = body
	return r, nil
}
