package fetch

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// SaveValidators keeps the validators of h (its ETag and Last-Modified, as a
// 200 for rawURL carried them) for rawURL, so that the chain's next read of
// it is conditional on them: the counterpart of [GetOptions.DeferValidators],
// called once the caller has recorded what it learnt from that 200.
//
// rawURL is keyed as a Get's request for it is (see "State and keys" in the
// package doc: tracking parameters stripped, the host in its key form, no
// fragment); pass the URL the response answered (after redirects: the
// Doer's resp.Request.URL, [Result.FinalURL]) and the options the read was
// made with, since [GetOptions.Source]'s declared parameters survive the
// stripping.
//
// A header with neither validator keeps nothing and leaves what was kept, as
// the chain does with such a 200; so does a Client whose policy has
// NoConditional. The error is the URL's (it does not parse, its host has no
// key form: an *[RefusedError] with InvalidHost) or the ValidatorStore's,
// wrapped.
func (c *Client) SaveValidators(ctx context.Context, rawURL string, h http.Header, opts ...GetOptions) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("fetch: save validators: %w", err)
	}
	call := c.newCall(KindArticle, opts)
	ctx = withCall(ctx, call)
	if err := c.requestURL(ctx, call, u); err != nil {
		return invalidHost(u, err)
	}
	val := Validator{ETag: h.Get("ETag"), LastModified: h.Get("Last-Modified")}
	if c.validators == nil || (val.ETag == "" && val.LastModified == "") {
		return nil
	}
	key := validatorKey(&http.Request{URL: u})
	if err := c.validators.store().Put(ctx, key, val); err != nil {
		return fmt.Errorf("fetch: save validators of %s: %w", u.Redacted(), err)
	}
	return nil
}
