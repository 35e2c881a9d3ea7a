package fetch

import (
	"io"
	"net/http"
	"sync"
)

// identityLayer is the layer that sets the request headers, and only them:
// User-Agent, Accept, Accept-Encoding: identity, the credential header when one is
// configured, the request is https and its host is one of the credential's hosts
// (a credential that [Credential.Validate] refuses fails the request, and nothing
// is sent), and a Referer for an image
// fetched for an article. The request's own If-None-Match and
// If-Modified-Since are kept (a conditional request someone above asked for);
// every other header it carries — a cookie, a Referer added by a redirect, a
// copied credential — is dropped, and the request is never marked
// "Connection: close". Layers below ([Conditional]) may add conditional headers.
//
// What it reads from a request: its URL's host (is it one of the credential's
// hosts?), its If-None-Match and If-Modified-Since, and, under a [Client], the
// Accept, Referer and Source credential that the Get or Doer was given. What it
// adds: a header made of those and nothing else, on a shallow copy (the
// caller's request and header are never modified).
//
// The zero identityLayer sends DefaultAccept and an empty User-Agent, which Go's
// transport would replace with its own: always set UserAgent. Set the fields before
// the first RoundTrip; an identityLayer is safe for concurrent use.
type identityLayer struct {
	Next       http.RoundTripper // nil: http.DefaultTransport
	UserAgent  string            // the full User-Agent, see Policy.UserAgent
	Accept     string            // empty: DefaultAccept
	Credential Credential        // replaced per call by a Get's Source; sent over https only

	// noCred refuses every credential (Policy.NoCredential): a request
	// whose Source carries one fails before anything is sent.
	noCred bool

	once sync.Once
	vals identityValues
}

// identityValues are the header values every request shares: made once, never
// modified (layers below replace a header's values; they never edit them).
// plain is the whole header of a request with nothing of its own (no
// credential for its host, no Accept or Referer of its Get): shared by all
// such requests, since no layer below may modify a request's header (the
// http.RoundTripper contract; Conditional clones before adding to it).
type identityValues struct {
	ua, accept, identity []string
	plain                http.Header
}

func (id *identityLayer) values() *identityValues {
	id.once.Do(func() {
		ua := id.UserAgent
		if ua == "" {
			ua = " " // never let Go's transport add its own
		}
		accept := id.Accept
		if accept == "" {
			accept = DefaultAccept
		}
		id.vals = identityValues{ua: []string{ua}, accept: []string{accept}, identity: []string{"identity"}}
		id.vals.plain = http.Header{"User-Agent": id.vals.ua, "Accept": id.vals.accept, "Accept-Encoding": id.vals.identity}
	})
	return &id.vals
}

// RoundTrip sends a clone of req carrying exactly the identity headers. req is not
// modified.
func (id *identityLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	call := callFrom(ctx)
	var r *http.Request // a shallow copy: every field this layer changes is replaced, not modified
	if call != nil {
		r = call.firstRequest()
	}
	if r == nil {
		r = new(http.Request)
	}
	*r = *req
	r.Close = false
	v := id.values()
	cred := &id.Credential
	if call != nil && call.source != nil {
		cred = &call.source.Credential
	}
	credHost := false
	if cred.Header != "" {
		// A Source's credential reaches the chain unchecked: check it
		// here, before anything is sent.
		if err := id.check(cred); err != nil {
			return nil, err
		}
		if cred.sendable(r.URL.Scheme) && len(cred.Hosts) > 0 {
			if k, err := hostKey(ctx, r.URL); err == nil && hostIn(k, cred.Hosts) {
				credHost = true
			}
		}
	}
	if call != nil {
		call.credHeader = ""
	}
	conditional := hasConditional(req.Header)
	if !credHost && !conditional && (call == nil || call.accept == "" && call.referer == "") {
		r.Header = v.plain
		return checkedLocation(call, r, next(id.Next))
	}
	h := make(http.Header, 6)
	h["User-Agent"] = v.ua
	h["Accept"] = v.accept
	if call != nil && call.accept != "" {
		h["Accept"] = []string{call.accept}
	}
	h["Accept-Encoding"] = v.identity
	if credHost {
		h.Set(cred.Header, cred.Value.Reveal())
		if call != nil {
			call.credHeader = http.CanonicalHeaderKey(cred.Header)
		}
	}
	if call != nil && call.referer != "" {
		h["Referer"] = []string{call.referer}
	}
	if conditional {
		for _, k := range [...]string{"If-None-Match", "If-Modified-Since"} {
			if vs := req.Header[k]; len(vs) > 0 {
				h[k] = vs
			}
		}
	}
	r.Header = h
	return checkedLocation(call, r, next(id.Next))
}

// checkedLocation sends r through rt; a redirect whose Location has a host
// that cannot be parsed (percent-encoded, say) becomes a *RefusedError with
// Reason InvalidHost, its body drained and closed, so that http.Client above
// never fails on it with an error of bare text. A robots.txt fetch's answer
// is left as it is: the robots.txt cache reads its redirects itself, and
// records that one as a failure of the host's.
func checkedLocation(call *callInfo, r *http.Request, rt http.RoundTripper) (*http.Response, error) {
	resp, err := rt.RoundTrip(r)
	if err != nil || (call != nil && call.kind == KindRobots) {
		return resp, err
	}
	if rerr := locationRefusal(r, resp); rerr != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		return nil, rerr
	}
	return resp, nil
}

// check returns the error of a credential this layer will not handle: one
// Validate refuses, or any under a policy that sends none.
func (id *identityLayer) check(c *Credential) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if id.noCred {
		return &CredentialError{Field: "Header", Reason: "the policy sends no credential"}
	}
	return nil
}
