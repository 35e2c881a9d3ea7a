package fetch

import (
	"net/http"
	"net/textproto"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// sentHeader returns the header fields net/http writes for req, a request
// of the chain as the base transport was given it: Host (from req.Host,
// else the URL's host, IDNA A-labels, no zone), User-Agent, then req's own
// fields, each value with its line breaks made spaces and trimmed, fields
// whose name is not valid left out, as net/http's request writer does. The
// chain's requests are GETs and HEADs without a body on a kept-alive
// HTTP/1.1 connection with no compression of the transport's own, so
// net/http adds nothing else. The value of cred (a canonical header name,
// "" for none) is "[redacted]". The chain's field names are canonical (the
// identity layer makes every request's header), so each is kept as it is.
// It returns nil for a nil req.
//
// It is made once per Get, in one map and one slice of values, rather than
// recorded field by field as net/http writes them (a trace hook, and a slice
// of net/http's per field).
func sentHeader(req *http.Request, cred string) http.Header {
	if req == nil {
		return nil
	}
	host := req.Host
	if host == "" && req.URL != nil {
		host = req.URL.Host
	}
	if h, err := httpguts.PunycodeHostPort(host); err == nil {
		host = h
	}
	if !httpguts.ValidHostHeader(host) {
		host = ""
	}
	host = removeZone(host)
	n := 1
	for k, vs := range req.Header {
		if k == "Host" || !httpguts.ValidHeaderFieldName(k) {
			continue
		}
		n += len(vs)
	}
	vals := make([]string, 0, n)
	h := make(http.Header, len(req.Header)+1)
	vals = append(vals, host)
	h["Host"] = vals[0:1:1]
	ua := defaultUserAgent
	if vs, ok := req.Header["User-Agent"]; ok {
		ua = firstOf(vs) // net/http writes the first value only, and none if it is empty
	}
	if ua = wireValue(ua); ua != "" {
		vals = append(vals, ua)
		h["User-Agent"] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	for k, vs := range req.Header {
		if _, excluded := reqWriteExclude[k]; excluded || !httpguts.ValidHeaderFieldName(k) || len(vs) == 0 {
			continue
		}
		start := len(vals)
		for _, v := range vs {
			if k == cred {
				v = redacted
			}
			vals = append(vals, wireValue(v))
		}
		h[k] = vals[start:len(vals):len(vals)]
	}
	return h
}

// reqWriteExclude are the fields net/http writes itself, or not at all,
// for a request without a body (its reqWriteExcludeHeader).
var reqWriteExclude = map[string]struct{}{
	"Host": {}, "User-Agent": {}, "Content-Length": {}, "Transfer-Encoding": {}, "Trailer": {},
}

// defaultUserAgent is what net/http sends for a request without one.
const defaultUserAgent = "Go-http-client/1.1"

var headerNewlineToSpace = strings.NewReplacer("\n", " ", "\r", " ")

// wireValue is v as net/http writes it: line breaks made spaces, trimmed.
func wireValue(v string) string {
	if strings.ContainsAny(v, "\r\n") {
		v = headerNewlineToSpace.Replace(v)
	}
	return textproto.TrimString(v)
}

func firstOf(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// removeZone removes an IPv6 zone identifier from host, as net/http does
// (RFC 6874).
func removeZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	i := strings.LastIndex(host, "]")
	if i < 0 {
		return host
	}
	j := strings.LastIndex(host[:i], "%")
	if j < 0 {
		return host
	}
	return host[:j] + host[i:]
}
