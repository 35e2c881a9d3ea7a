package fetch

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// Doer sends one request and returns its response; *http.Client satisfies it,
// and so does the value [Client.Doer] returns. Package feed reads through one.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Doer returns a [Doer] that reads through the Client's chain as kind k: the
// ledger counts each read as k (a host suspended for articles still has its
// feeds read), tracking parameters are stripped, redirects follow the
// policy, and the policy's Timeout bounds each Do.
//
// Its reads are conditional: a GET for a URL the chain has validators for (from
// an earlier complete 200 through [Client.Get] or a Doer) carries them, and a
// 304 is returned as a 304 with an empty body, since the caller opted into
// conditional reads by using a Doer. Every response body has already been read
// in full within the policy's caps, its content-codings removed (no
// Content-Encoding header remains, Content-Length is the decoded length): the
// caller reads it from memory and must still close it. A body that could not
// be read in full returns no response and an error matching ErrTruncated,
// ErrWireTooLarge, ErrDecodedTooLarge, ErrUnknownCoding or ErrCorrupt.
//
// The request's method must be GET or HEAD, and its header follows the rules
// of [Client.HTTPClient]; a refusal is a *[RefusedError] or a *[RequestError],
// with no response. The Doer is safe for concurrent use and shares the Client's
// state; it must not be used after the Client is closed.
//
// opts, merged once as a Get's are, apply to every Do as they would to a
// Get: [GetOptions.Source] reads as that source (its admitted hosts, checked
// on every hop, its declared parameters and its credential),
// [GetOptions.Unconditional] sends no validators of the chain's. The
// caller's own Accept still replaces the option's.
func (c *Client) Doer(k Kind, opts ...GetOptions) Doer {
	d := &kindDoer{c: c, kind: k}
	for i := range opts {
		d.opts[0] = d.opts[0].merge(&opts[i])
	}
	if s := d.opts[0].Source; s != nil {
		d.opts[0].Source = keyedSource(s) // once, not for every Do
	}
	return d
}

type kindDoer struct {
	c    *Client
	kind Kind
	opts [1]GetOptions // the Doer's, merged
}

// Do reads req as the Doer's kind.
func (d *kindDoer) Do(req *http.Request) (*http.Response, error) {
	c := d.c
	accept, err := checkCallerRequest(req)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	call := c.newCall(d.kind, d.opts[:])
	if accept != "" {
		call.accept = accept
	}
	ctx := withCall(req.Context(), call)
	u := *req.URL // ours to clean
	out, cancel, err := c.request(ctx, call, &u, methodOf(req))
	if err != nil {
		return nil, err
	}
	defer cancel()
	if hasConditional(req.Header) && !c.policy.NoConditional {
		out.Header = make(http.Header, 2)
		for _, h := range [...]string{"If-None-Match", "If-Modified-Since"} {
			if v := req.Header.Get(h); v != "" {
				out.Header.Set(h, v)
			}
		}
	}
	resp, err := c.follow(out)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	decoded := *resp
	decoded.Header = resp.Header.Clone()
	decoded.Header.Del("Content-Encoding")
	if resp.StatusCode == http.StatusNotModified || out.Method == http.MethodHead {
		drain(resp.Body)
		decoded.Body, decoded.ContentLength = http.NoBody, 0
		decoded.Header.Del("Content-Length")
		return &decoded, nil
	}
	body, err := c.readBody(out.Context(), resp)
	if err != nil {
		return nil, err
	}
	decoded.Body = io.NopCloser(bytes.NewReader(body.Envelope))
	decoded.ContentLength = int64(len(body.Envelope))
	decoded.Header.Set("Content-Length", strconv.Itoa(len(body.Envelope)))
	decoded.Uncompressed = len(body.Removed) > 0
	return &decoded, nil
}

// drain reads a little of a body that is discarded, so its connection can be
// reused.
func drain(body io.Reader) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 4<<10))
}
