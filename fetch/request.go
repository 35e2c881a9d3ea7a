package fetch

import (
	"net/http"
)

// What the chain does with the header of a request a caller built (through
// [Client.HTTPClient], [Client.Transport] or a [Client.Doer]): a header is
// either kept, dropped, or the request is refused before anything is sent.
//
// Kept: Accept (it replaces the policy's for that request), If-None-Match and
// If-Modified-Since (a conditional request the caller asked for; dropped when
// the policy turns conditional GET off). Dropped, because the chain sets them
// itself or they say nothing to the publisher about what is asked: User-Agent
// (the policy's identity is sent), Accept-Encoding (the chain removes
// content-codings itself), Referer (see [GetOptions.Referer]), Connection,
// Keep-Alive, Cache-Control, Pragma, and the tracing headers X-Request-Id,
// X-Correlation-Id, Traceparent, Tracestate and Baggage. Any other header
// would change what the request means (Authorization, Cookie, Range,
// If-Match, Content-Type, an API key…) and is refused with a
// *[RequestError]: set a credential with [Policy.Credential] or [Source].
var callerHeaders = map[string]bool{ // true: kept; false: dropped
	"Accept":            true,
	"If-None-Match":     true,
	"If-Modified-Since": true,
	"User-Agent":        false,
	"Accept-Encoding":   false,
	"Referer":           false,
	"Connection":        false,
	"Keep-Alive":        false,
	"Cache-Control":     false,
	"Pragma":            false,
	"X-Request-Id":      false,
	"X-Correlation-Id":  false,
	"Traceparent":       false,
	"Tracestate":        false,
	"Baggage":           false,
}

// checkCallerRequest returns a *RequestError when req cannot be sent as the
// caller wrote it: a method other than GET or HEAD, a body, or a header that
// the chain would have to drop although it changes the request's meaning.
// Otherwise it returns the caller's Accept, if any.
func checkCallerRequest(req *http.Request) (accept string, err error) {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead:
	default:
		return "", &RequestError{Method: req.Method, Err: ErrUnsupportedMethod}
	}
	if (req.Body != nil && req.Body != http.NoBody) || req.ContentLength > 0 {
		return "", &RequestError{Method: methodOf(req), Err: ErrRequestBody}
	}
	for k, v := range req.Header {
		kept, known := callerHeaders[http.CanonicalHeaderKey(k)]
		if !known {
			return "", &RequestError{Method: methodOf(req), Header: http.CanonicalHeaderKey(k), Err: ErrUnsupportedHeader}
		}
		if kept && http.CanonicalHeaderKey(k) == "Accept" && len(v) > 0 {
			accept = v[0]
		}
	}
	return accept, nil
}

// hasConditional reports whether h carries a conditional header the caller set.
func hasConditional(h http.Header) bool {
	return len(h["If-None-Match"]) > 0 || len(h["If-Modified-Since"]) > 0
}

func methodOf(req *http.Request) string {
	if req.Method == "" {
		return http.MethodGet
	}
	return req.Method
}
