package decode

import (
	"mime"
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

// The fast path agrees with mime.ParseMediaType wherever it answers, and
// the common values take it without allocating.
func TestSimpleMediaType(t *testing.T) {
	for _, v := range []string{"text/html", "text/html; charset=utf-8", "application/rss+xml;charset=UTF-8", " image/webp "} {
		got, ok := simpleMediaType(v)
		want, _, err := mime.ParseMediaType(v)
		if !ok || err != nil || got != want {
			t.Errorf("simpleMediaType(%q) = %q, %v; mime says %q, %v", v, got, ok, want, err)
		}
	}
	for _, v := range []string{"Text/HTML", "text/html; a=1; b=2", `text/html; charset="utf-8"`, "text/html; title*=utf-8''x", "text/html; charset", "text"} {
		if got, ok := simpleMediaType(v); ok {
			t.Errorf("simpleMediaType(%q) = %q, true; want the slow path", v, got)
		}
	}
	h := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	if n := testing.AllocsPerRun(100, func() { MediaType(h) }); n != 0 {
		t.Errorf("MediaType allocates %v times per call; want 0", n)
	}
}

// FuzzMediaType: MediaType's fast path never disagrees with
// mime.ParseMediaType.
func FuzzMediaType(f *testing.F) {
	for _, v := range []string{"text/html", "text/html; charset=utf-8", "a/b;c=d", "a/b; c = d ", "a/b;c*=d", "a/b;=d", "a/b;c=", "a/b/c", "a//b", "/b", "a/"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := simpleMediaType(v)
		if !ok {
			return
		}
		want, _, err := mime.ParseMediaType(v)
		if err != nil || got != want {
			t.Fatalf("simpleMediaType(%q) = %q; mime.ParseMediaType = %q, %v", v, got, want, err)
		}
	})
}
