package fetch

import (
	"net/http"
	"strings"
)

// checkRedirect is the Client's redirect policy: at most the
// policy's number of redirects (the image limit for images), https only, admitted
// hosts only, no undeclared query parameter added; and Go's Referer and copied
// credential dropped (the Identity layer sets every hop's headers anyway). Each hop
// then passes the robots and ledger gates and the pacer for its own host, since it
// goes through the same chain.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	err := c.redirectPolicy(req, via)
	if err != nil && c.observe != nil {
		c.refused(kindOf(req), err)
	}
	return err
}

func (c *Client) redirectPolicy(req *http.Request, via []*http.Request) error {
	call := callFrom(req.Context())
	limit := c.policy.MaxRedirects
	if call != nil && call.kind == KindImage && c.policy.ImageMaxRedirects != 0 {
		limit = c.policy.ImageMaxRedirects
	}
	limit = max(limit, 0)
	host, err := hostKey(req.Context(), req.URL)
	if err != nil {
		return invalidHost(req.URL, err)
	}
	refuse := func(r Reason) error {
		return &RefusedError{Host: host, URL: req.URL.Redacted(), Reason: r}
	}
	if len(via) > limit {
		return refuse(TooManyRedirects)
	}
	if !strings.EqualFold(req.URL.Scheme, "https") && !(c.policy.AllowHTTP && strings.EqualFold(req.URL.Scheme, "http")) {
		return refuse(NotHTTPS)
	}
	src := c.source(call)
	if len(src.Admitted) > 0 && !hostIn(host, src.Admitted) {
		return refuse(HostNotAdmitted)
	}
	if added := addedParams(via[len(via)-1].URL, req.URL, src.Params); len(added) > 0 {
		re := refuse(UndeclaredParam).(*RefusedError)
		re.Err = &paramError{Params: added}
		return re
	}
	req.Header.Del("Referer")
	if cred := src.Credential.Header; cred != "" {
		req.Header.Del(cred)
	}
	if cred := c.policy.Credential.Header; cred != "" {
		req.Header.Del(cred)
	}
	return nil
}

// paramError names the query parameters a redirect added without the source
// declaring them; it is the Err of a *RefusedError with Reason UndeclaredParam.
type paramError struct {
	Params []string
}

// Error lists the parameters.
func (e *paramError) Error() string {
	return "fetch: undeclared parameters " + strings.Join(e.Params, ", ")
}
