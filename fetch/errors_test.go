package fetch

import (
	"errors"
	"strings"
	"testing"

	"github.com/politefetch/politefetch/internal/decode"
)

// TestBodyError_Texts: a body that could not be read in full matches this
// package's sentinel and keeps its cause, and its text says what went wrong
// once, naming no internal package.
func TestBodyError_Texts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		body      string
		length    int64
		codings   []string
		lim       decode.Limits
		sentinel  error
		wantInMsg string
	}{
		{"wire limit", "abcdef", -1, nil, decode.Limits{MaxWire: 2}, ErrWireTooLarge, "more than 2 bytes"},
		{"unknown coding", "abc", 3, []string{"x-foo"}, decode.Limits{}, ErrUnknownCoding, `"x-foo"`},
		{"truncated gzip", "abc", 3, []string{"gzip"}, decode.Limits{}, ErrTruncated, "gzip"},
		{"short body", "abc", 10, nil, decode.Limits{}, ErrTruncated, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, derr := decode.Read(strings.NewReader(tc.body), tc.length, tc.codings, tc.lim)
			err := bodyError(derr)
			if !errors.Is(err, tc.sentinel) || !errors.Is(err, derr) {
				t.Fatalf("%v does not match %v and its cause", err, tc.sentinel)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.sentinel.Error()) || strings.Count(msg, "fetch:") != 1 || strings.Contains(msg, "decode:") ||
				strings.Count(msg, unprefixed(tc.sentinel)) != 1 || !strings.Contains(msg, tc.wantInMsg) {
				t.Fatalf("text %q", msg)
			}
		})
	}
}
