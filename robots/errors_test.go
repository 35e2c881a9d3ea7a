package robots

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/internal/decode"
)

func TestErrorStrings(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC)
	fe := &FetchError{URL: "https://a.example/robots.txt", Err: io.ErrUnexpectedEOF}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&DisallowedError{URL: "https://a.example/x", Group: "*", Rule: "Disallow: /x", Line: 3, RetryAt: at},
			`robots: https://a.example/x disallowed by robots.txt: "Disallow: /x" (line 3) in group "*", until robots.txt is read again at 2026-11-30T09:15:00Z`},
		{&DisallowedError{URL: "https://a.example/", Outcome: DisallowAll, Err: fe},
			"robots: https://a.example/ disallowed by robots.txt: robots.txt unreachable: unexpected EOF"},
		{&DisallowedError{URL: "https://a.example/", Outcome: DisallowAll, Err: &FetchError{Text: "connection reset"}},
			"robots: https://a.example/ disallowed by robots.txt: robots.txt unreachable: connection reset"},
		{&DisallowedError{URL: "https://a.example/", Outcome: DisallowAll, Status: 200, Err: &bodyError{ErrTruncated,
			&decode.TruncatedError{Got: 35, Want: 71, Err: io.ErrUnexpectedEOF}, decode.ErrTruncated}},
			"robots: https://a.example/ disallowed by robots.txt: robots.txt answered 200, then failed: robots.txt body truncated: 35 of 71 bytes: unexpected EOF"},
		{&DisallowedError{URL: "https://a.example/", Outcome: DisallowAll, Status: 403},
			"robots: https://a.example/ disallowed by robots.txt: robots.txt answered 403"},
		{&DisallowedError{URL: "https://a.example/", Outcome: DisallowAll},
			"robots: https://a.example/ disallowed by robots.txt: disallow-all"},
		{&FetchError{URL: "https://a.example/robots.txt", Text: "connection reset"},
			"robots: fetch https://a.example/robots.txt: connection reset"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q\nwant      %q", got, tc.want)
		}
		if !strings.HasPrefix(tc.err.Error(), "robots: ") {
			t.Errorf("%q lacks the package prefix", tc.err.Error())
		}
	}
	re := &DisallowedError{Outcome: DisallowAll, Err: fe}
	if !errors.Is(re, ErrDisallowed) || !errors.Is(re, io.ErrUnexpectedEOF) {
		t.Error("DisallowedError does not unwrap to ErrDisallowed and its failure")
	}
	var got *FetchError
	if !errors.As(re, &got) || got != fe {
		t.Error("errors.As cannot reach the FetchError")
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	for v, want := range map[interface{ String() string }]string{
		ParseBody: "parse-body", AllowAll: "allow-all", DisallowAll: "disallow-all", Outcome(9): "outcome(9)",
		RFC9309: "rfc9309", Google: "google", Strict: "strict",
		Disallow403 | DisallowTooManyRedirects: "disallow-403+disallow-redirects",
	} {
		if got := v.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}
