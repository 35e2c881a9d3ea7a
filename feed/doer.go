package feed

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Doer sends one request. An *http.Client satisfies it, and so does the
// fetch client's HTTPClient(): use the latter so robots.txt, pacing, the
// refusal ledger and the identity headers apply to every read.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// response is a bounded, fully read response.
type response struct {
	status int
	header http.Header
	body   []byte
	url    *url.URL // final URL after redirects
}

// get sends a GET for u with the extra headers and reads at most max bytes of
// body. A longer body is an error wrapping [ErrTooLarge]. The body is always
// closed.
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
		// Nothing of an unusable body is read beyond a small, drained prefix.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
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

// gunzip decodes b when it is a gzip stream (by its magic bytes, whatever
// the Content-Type says) and returns it unchanged otherwise. At most max
// decoded bytes are accepted: a gzip bomb is an error wrapping [ErrTooLarge].
func gunzip(b []byte, max int64) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > max {
		return nil, fmt.Errorf("more than %d decoded bytes: %w", max, ErrTooLarge)
	}
	return out, nil
}
