package decode

import (
	"net/http"
	"testing"
)

// V12: a missing or invalid media type refuses the deposit.
func TestMediaTypeV12(t *testing.T) {
	t.Parallel()
	tests := []struct {
		values []string
		want   string
		ok     bool
	}{
		{nil, "", false},
		{[]string{""}, "", false},
		{[]string{"text/html"}, "text/html", true},
		{[]string{"Text/HTML; charset=UTF-8"}, "text/html", true},
		{[]string{"application/rss+xml;charset=utf-8"}, "application/rss+xml", true},
		{[]string{"text/html; charset"}, "text/html", true}, // bad parameter, good type
		{[]string{"text"}, "", false},
		{[]string{"text/"}, "", false},
		{[]string{"/html"}, "", false},
		{[]string{"text/html/x"}, "", false},
		{[]string{"text html"}, "", false},
		{[]string{"text/html", "text/html"}, "text/html", true},
		{[]string{"text/html", "application/json"}, "", false},
	}
	for _, tt := range tests {
		h := http.Header{}
		for _, v := range tt.values {
			h.Add("Content-Type", v)
		}
		got, ok := MediaType(h)
		if got != tt.want || ok != tt.ok {
			t.Errorf("MediaType(%q) = %q, %v; want %q, %v", tt.values, got, ok, tt.want, tt.ok)
		}
	}
}
