package robots

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestErrorStrings(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC)
	fe := &FetchError{URL: "https://a.example/robots.txt", Err: io.ErrUnexpectedEOF}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&RefusalError{URL: "https://a.example/x", Group: "*", Rule: "Disallow: /x", RetryAt: at},
			`robots: https://a.example/x disallowed by "Disallow: /x" in group "*" (robots.txt refetched at 2026-11-30T09:15:00Z)`},
		{&RefusalError{URL: "https://a.example/", Outcome: DisallowAll, Err: fe},
			"robots: https://a.example/ disallowed: robots.txt unreachable: robots: fetch https://a.example/robots.txt: unexpected EOF"},
		{&RefusalError{URL: "https://a.example/", Outcome: DisallowAll, Status: 403},
			"robots: https://a.example/ disallowed: robots.txt answered 403"},
		{&RefusalError{URL: "https://a.example/", Outcome: DisallowAll},
			"robots: https://a.example/ disallowed: disallow-all"},
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
	re := &RefusalError{Outcome: DisallowAll, Err: fe}
	if !errors.Is(re, ErrDisallowed) || !errors.Is(re, io.ErrUnexpectedEOF) {
		t.Error("RefusalError does not unwrap to ErrDisallowed and its failure")
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
