package main

// The small pieces of text several commands print.

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// row prints one setting: the key in a fixed column, then its value.
func row(w io.Writer, key, value string) { fmt.Fprintf(w, "  %-28s %s\n", key, value) }

// fmtDuration writes 1h, 15m, 1s, 1h30m rather than 1h0m0s.
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// plural is "1 source", "2 sources".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
