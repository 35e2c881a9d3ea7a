package tracking

import (
	"net/url"
	"os"
	"strings"
	"testing"
)

// FuzzStrip: Strip never panics, never leaves a tracking parameter that was
// not kept, and is idempotent (V10). Seeded from testdata/urls.txt.
func FuzzStrip(f *testing.F) {
	data, err := os.ReadFile("testdata/urls.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			f.Add(line, "id")
		}
	}
	f.Fuzz(func(t *testing.T, raw, keep string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		table := Default()
		keepList := []string{keep}
		Strip(u, table, keepList)
		for _, p := range strings.Split(u.RawQuery, "&") {
			if p == "" {
				continue
			}
			if k := QueryKey(p); In(k, table) && !In(k, keepList) {
				t.Fatalf("Strip(%q) kept tracking parameter %q", raw, k)
			}
		}
		once := u.String()
		Strip(u, table, keepList)
		if again := u.String(); again != once {
			t.Fatalf("Strip is not idempotent: %q then %q", once, again)
		}
		if u.Fragment != "" {
			t.Fatalf("Strip(%q) kept the fragment", raw)
		}
	})
}
