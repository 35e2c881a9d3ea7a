package backoff_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
)

func TestParseRetryAfter_S4(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"   ", 0, false},
		{"0", 0, true},
		{"120", 2 * time.Minute, true},
		{" 120\t", 2 * time.Minute, true},
		{"007", 7 * time.Second, true},
		{"-1", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"5s", 0, false},
		{"1e3", 0, false},
		{"１２０", 0, false}, // full-width digits are not ASCII digits
		{"9223372036", 9223372036 * time.Second, true},
		{"9223372037", time.Duration(1<<63 - 1), true}, // saturates
		{"99999999999999999999999999999", time.Duration(1<<63 - 1), true},
		{"Mon, 30 Nov 2026 09:00:00 GMT", time.Hour, true},         // IMF-fixdate
		{"Monday, 30-Nov-26 09:30:00 GMT", 90 * time.Minute, true}, // RFC 850
		{"Mon Nov 30 10:00:00 2026", 2 * time.Hour, true},          // ANSI C asctime
		{"Mon, 30 Nov 2026 07:00:00 GMT", 0, true},                 // in the past
		{"Mon, 30 Nov 2026 09:00:00 +0100", 0, false},              // not an HTTP-date
		{"tomorrow", 0, false},
		{"Fri, 31 Dec 9999 23:59:59 GMT", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Sub(now), true},
	} {
		got, ok := backoff.ParseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.wantOK)
		}
	}
}

// FuzzRetryAfter: ParseRetryAfter never panics and never returns a
// negative delay; delta-seconds read back exactly; an HTTP-date agrees with
// http.ParseTime.
func FuzzRetryAfter(f *testing.F) {
	seeds, err := os.ReadFile(filepath.Join("testdata", "retry-after.txt"))
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(string(seeds), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			f.Add(line, int64(1764489600))
		}
	}
	f.Fuzz(func(t *testing.T, v string, unix int64) {
		now := time.Unix(unix%(1<<40), 0)
		d, ok := backoff.ParseRetryAfter(v, now)
		if d < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v < 0", v, d)
		}
		if !ok {
			if d != 0 {
				t.Fatalf("ParseRetryAfter(%q) = %v with ok false", v, d)
			}
			return
		}
		s := strings.Trim(v, " \t")
		if strings.Trim(s, "0123456789") == "" {
			want := time.Duration(1<<63 - 1)
			if n, err := strconv.ParseUint(s, 10, 64); err == nil && n <= uint64(want/time.Second) {
				want = time.Duration(n) * time.Second
			}
			if d != want {
				t.Fatalf("ParseRetryAfter(%q) = %v, want %v", v, d, want)
			}
			return
		}
		at, err := http.ParseTime(s)
		if err != nil {
			t.Fatalf("ParseRetryAfter(%q) ok, but it is neither digits nor an HTTP-date", v)
		}
		if want := max(at.Sub(now), 0); d != want {
			t.Fatalf("ParseRetryAfter(%q) = %v, want %v", v, d, want)
		}
	})
}
