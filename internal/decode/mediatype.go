package decode

import (
	"mime"
	"net/http"
	"strings"
)

// MediaType returns the media type of h's Content-Type, lower case and
// without parameters ("text/html"), and true; or "" and false when the
// header is missing, empty, not "type/subtype", or given several times with
// different values (V12: a missing media type refuses the deposit). Invalid
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
