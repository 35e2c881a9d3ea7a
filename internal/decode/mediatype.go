package decode

import (
	"mime"
	"net/http"
	"strings"
)

// MediaType returns the media type of h's Content-Type, lower case and
// without parameters ("text/html"), and true; or "" and false when the
// header is missing, empty, not "type/subtype", or given several times with
// different values (a missing media type refuses the deposit). Invalid
// parameters do not hide a valid media type.
func MediaType(h http.Header) (string, bool) {
	values := h.Values("Content-Type")
	if len(values) == 0 {
		return "", false
	}
	for _, v := range values[1:] {
		if v != values[0] {
			return "", false
		}
	}
	if mt, ok := simpleMediaType(values[0]); ok {
		return mt, true
	}
	mt, _, err := mime.ParseMediaType(values[0])
	if err != nil && err != mime.ErrInvalidMediaParameter {
		return "", false
	}
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || typ == "" || sub == "" || strings.Contains(sub, "/") {
		return "", false
	}
	return mt, true
}

// simpleMediaType is MediaType's fast path for the common header values: a
// lower-case "type/subtype" with no parameter or a single plain one
// ("text/html; charset=utf-8"). It reports false for anything else, which
// mime.ParseMediaType then judges; where it reports true, ParseMediaType
// agrees (FuzzMediaType). It does not allocate.
func simpleMediaType(v string) (string, bool) {
	base, params, hasParams := strings.Cut(v, ";")
	base = strings.TrimSpace(base)
	typ, sub, ok := strings.Cut(base, "/")
	if !ok || !isLowerToken(typ) || !isLowerToken(sub) {
		return "", false
	}
	if hasParams {
		key, val, ok := strings.Cut(params, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || !isToken(key) || strings.HasSuffix(key, "*") || !isToken(val) {
			return "", false
		}
	}
	return base, true
}

// isLowerToken reports whether s is a non-empty RFC 9110 token without
// upper-case letters.
func isLowerToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return false
		}
	}
	return isToken(s)
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}
