package extract

import (
	"strings"
	"time"
)

// instantLayouts are the date-time forms read, each with its zone: RFC
// 3339 and the ISO 8601 variants pages write (no seconds, no colon in the
// offset, a space for the T), and the RFC 1123 forms of HTTP dates.
var instantLayouts = [...]string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15Z07:00",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05Z0700",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02 15:04:05 Z0700",
	"2006-01-02 15:04Z07:00",
	"20060102T150405Z0700",
	time.RFC1123,
	time.RFC1123Z,
	"Mon, 2 Jan 2006 15:04:05 MST",
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"2 Jan 2006 15:04 MST",
	"2 Jan 2006 15:04:05 MST",
	"Mon Jan 2 2006 15:04:05 GMT-0700", // JavaScript's Date.toString
}

// dateLayouts are the forms of a date alone.
// The English forms ("January 2, 2006", "2 Jan 2006") are read too: a
// month's name is unambiguous, unlike 01/02/2006.
var dateLayouts = [...]string{"2006-01-02", "20060102", "January 2, 2006", "Jan 2, 2006", "2 January 2006", "2 Jan 2006", "Jan. 2, 2006"}

// instantOf reads text as an Instant. Time is set only when the text
// states a zone (or is a date alone, then DateOnly): a date-time with no
// offset keeps only its text, since the instant it names is not stated.
func instantOf(text, source string) Instant {
	if isPlaceholderDate(text) {
		return Instant{}
	}
	in := Instant{Field: Field{Value: text, Source: source}}
	in.Time, in.DateOnly = parseInstant(text)
	return in
}

// parseInstant parses s; zero Time when no layout fits.
func parseInstant(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 8 || len(s) > 64 {
		return time.Time{}, false
	}
	for _, l := range dateLayouts {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			return t, true
		}
	}
	// A lower-case t or z is allowed by RFC 3339.
	u := strings.ToUpper(s)
	if u[0] >= '0' && u[0] <= '9' {
		s = u
	}
	for _, l := range instantLayouts {
		t, err := time.ParseInLocation(l, s, time.UTC)
		if err != nil {
			continue
		}
		// time.Parse reads an unknown zone abbreviation as a zero
		// offset; only UTC and GMT name their offset.
		if name, off := t.Zone(); off == 0 && name != "" && name != "UTC" && name != "GMT" {
			return time.Time{}, false
		}
		return t, false
	}
	return time.Time{}, false
}

// sameInstant reports whether two instants agree: the same text, the same
// instant, or a date alone that is the other's date in its own zone.
func sameInstant(a, b Instant) bool {
	if a.Value == b.Value {
		return true
	}
	if a.Time.IsZero() || b.Time.IsZero() {
		return false
	}
	switch {
	case a.DateOnly && b.DateOnly:
		return a.Time.Equal(b.Time)
	case a.DateOnly:
		return sameDate(a.Time, b.Time)
	case b.DateOnly:
		return sameDate(b.Time, a.Time)
	}
	return a.Time.Equal(b.Time)
}

func sameDate(d, t time.Time) bool {
	y, m, dd := t.Date()
	y2, m2, d2 := d.Date()
	return y == y2 && m == m2 && dd == d2
}

// isPlaceholderDate reports a CMS's marker for a date it does not have:
// year 0 or year 1 (a zero time printed as a date), which states nothing.
func isPlaceholderDate(s string) bool {
	return strings.HasPrefix(s, "0000-") || strings.HasPrefix(s, "0001-01-01")
}
