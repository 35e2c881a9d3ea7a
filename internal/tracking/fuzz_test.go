package fetch

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzClean: Clean never panics, never leaves a tracking parameter that was not
// declared, keeps every other parameter, and is idempotent (V10). Seeded from
// testdata/urls.txt.
func FuzzClean(f *testing.F) {
	for _, s := range seedURLs(f) {
		f.Add(s, "id")
	}
	f.Fuzz(func(t *testing.T, raw, keep string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		tracking := DefaultTracking()
		keepList := []string{keep}
		c := Clean(u, tracking, keepList)
		for _, p := range strings.Split(c.RawQuery, "&") {
			if p == "" {
				continue
			}
			if k := queryKey(p); paramIn(k, tracking) && !paramIn(k, keepList) {
				t.Fatalf("Clean(%q) kept tracking parameter %q", raw, k)
			}
		}
		if again := Clean(c, tracking, keepList); again.String() != c.String() {
			t.Fatalf("Clean is not idempotent: %q then %q", c, again)
		}
		if c.Fragment != "" {
			t.Fatalf("Clean(%q) kept the fragment", raw)
		}
	})
}

func seedURLs(f *testing.F) []string {
	data, err := readTestdata("urls.txt")
	if err != nil {
		f.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(data, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}
