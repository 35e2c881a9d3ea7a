package extract

import (
	"strings"
	"time"
)

// The forms read, each date-time with its zone: RFC 3339 and the ISO 8601
// variants pages write (no seconds, no colon in the offset, a space for the
// T), the RFC 1123 forms of HTTP dates, and a few English ones. A date
// alone may be ISO 8601 or name its month in English ("January 2, 2006",
// "2 Jan 2006"), which is unambiguous, unlike 01/02/2006.
var (
	isoInstants = [...]string{
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
	}
	compactInstants = [...]string{"20060102T150405Z0700"}
	textInstants    = [...]string{
		time.RFC1123,
		time.RFC1123Z,
		"Mon, 2 Jan 2006 15:04:05 MST",
		"Mon, 2 Jan 2006 15:04:05 -0700",
		"2 Jan 2006 15:04 MST",
		"2 Jan 2006 15:04:05 MST",
		"Mon Jan 2 2006 15:04:05 GMT-0700", // JavaScript's Date.toString
	}
	textDates = [...]string{"January 2, 2006", "Jan 2, 2006", "Jan. 2, 2006", "2 January 2006", "2 Jan 2006"}
)

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

// parseInstant parses s; zero Time when no form fits. Only the forms
// that can fit s's shape are tried.
func parseInstant(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 8 || len(s) > 64 {
		return time.Time{}, false
	}
	digits := 0
	for digits < len(s) && digits < 8 && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	var layouts []string
	switch {
	case digits == 4 && s[4] == '-':
		if len(s) == len("2006-01-02") {
			return parseDate("2006-01-02", s)
		}
		layouts = isoInstants[:]
	case digits == 8:
		if len(s) == len("20060102") {
			return parseDate("20060102", s)
		}
		layouts = compactInstants[:]
	default:
		for _, l := range textDates {
			if t, ok := parseDate(l, s); ok {
				return t, true
			}
		}
		layouts = textInstants[:]
	}
	// A lower-case t or z is allowed by RFC 3339.
	if digits > 0 && strings.ContainsAny(s, "tz") {
		s = strings.ToUpper(s)
	}
	for _, l := range layouts {
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

func parseDate(layout, s string) (time.Time, bool) {
	t, err := time.ParseInLocation(layout, s, time.UTC)
	return t, err == nil
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
