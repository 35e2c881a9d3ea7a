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
	compactInstants = [...]string{
		"20060102T150405Z0700",
		"20060102T15:04:05Z07:00", // a basic date with an extended time
		"20060102T15:04:05Z0700",
		"20060102T15:04Z07:00",
	}
	textInstants = [...]string{
		time.RFC1123,
		time.RFC1123Z,
		"Mon, 2 Jan 2006 15:04:05 MST",
		"Mon, 2 Jan 2006 15:04:05 -0700",
		"2 Jan 2006 15:04 MST",
		"2 Jan 2006 15:04:05 MST",
		"Mon Jan 2 2006 15:04:05 GMT-0700", // JavaScript's Date.toString
		"Mon Jan _2 15:04:05 -0700 2006",   // date(1), its zone name read by zoneOffsets
		"Mon, 2 Jan 2006 15:04 -0700",
		"2 Jan 2006 15:04 -0700",
		"2 Jan 2006 15:04:05 -0700",
		"Jan 2, 2006 15:04 -0700",
		"January 2, 2006 15:04 -0700",
	}
	// zoneOffsets are the zone names whose offset is unambiguous, in
	// seconds east of UTC (UTC and GMT the layouts read themselves); a
	// name not here gives no instant: IST, CST, BST and EST each name
	// zones of several offsets.
	zoneOffsets = map[string]int{
		"UT": 0, "WET": 0, "WEST": 3600,
		"CET": 3600, "CEST": 7200, "MEZ": 3600, "MESZ": 7200, "EET": 7200, "EEST": 10800, "MSK": 10800,
		"EDT": -4 * 3600, "CDT": -5 * 3600, "MST": -7 * 3600, "MDT": -6 * 3600,
		"PST": -8 * 3600, "PDT": -7 * 3600, "AKST": -9 * 3600, "AKDT": -8 * 3600, "HST": -10 * 3600,
		"JST": 9 * 3600, "KST": 9 * 3600, "HKT": 8 * 3600, "SGT": 8 * 3600, "AEST": 10 * 3600, "AEDT": 11 * 3600,
		"NZST": 12 * 3600, "NZDT": 13 * 3600,
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
	if t, ok := dottedDate(s); ok {
		return t, true
	}
	s = padISODate(s)
	digits := 0
	for digits < len(s) && digits < 8 && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	var layouts []string
	switch {
	case digits == 4 && len(s) >= len("2006-01-02") && s[4] == '-':
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
		if !hasMonthName(s) {
			return time.Time{}, false // every textual form names its month
		}
		for _, l := range textDates {
			if t, ok := parseDate(l, s); ok {
				return t, true
			}
		}
		layouts = textInstants[:]
		s = numericZone(s)
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

// hasMonthName reports whether s holds an English month's name or its
// abbreviation, in any case (as time.Parse reads them): the test that
// spares a text that names no month the failures, each an allocated
// error, of every textual layout.
func hasMonthName(s string) bool {
	for i := 0; i+3 <= len(s); i++ {
		if s[i]|0x20 < 'a' || s[i]|0x20 > 'z' {
			continue
		}
		w := [3]byte{s[i] | 0x20, s[i+1] | 0x20, s[i+2] | 0x20}
		switch string(w[:]) {
		case "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec":
			return true
		}
	}
	return false
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

// padISODate writes an ISO 8601 date whose month or day has one digit
// ("2022-1-26T…") with two, so the layouts read it; other text is
// returned as it is.
func padISODate(s string) string {
	if len(s) < len("2006-1-2") || s[4] != '-' {
		return s
	}
	i := 5
	m := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		m++
	}
	if m < 1 || m > 2 || i >= len(s) || s[i] != '-' {
		return s
	}
	j := i + 1
	d := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
		d++
	}
	if d < 1 || d > 2 || m == 2 && d == 2 {
		return s
	}
	month, day := s[5:i], s[i+1:j]
	if m == 1 {
		month = "0" + month
	}
	if d == 1 {
		day = "0" + day
	}
	return s[:5] + month + "-" + day + s[j:]
}

// dottedDate reads a date written day first with dots, as German and many
// other European pages write it ("30.07.2019", "1.2.2020"): the order of
// a dotted date is not in doubt, unlike a slashed one.
func dottedDate(s string) (time.Time, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 || len(parts[2]) != 4 || len(parts[0]) < 1 || len(parts[0]) > 2 || len(parts[1]) < 1 || len(parts[1]) > 2 {
		return time.Time{}, false
	}
	var n [3]int
	for k, p := range parts {
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return time.Time{}, false
			}
			n[k] = n[k]*10 + int(p[i]-'0')
		}
	}
	t := time.Date(n[2], time.Month(n[1]), n[0], 0, 0, 0, 0, time.UTC)
	if t.Day() != n[0] || int(t.Month()) != n[1] || n[2] < 1900 {
		return time.Time{}, false
	}
	return t, true
}

// numericZone writes a zone name of zoneOffsets standing as a word of s
// ("Tue Jul 30 09:35:14 CEST 2019") as its numeric offset, so that
// the layouts with -0700 read it; GMT+0200 and other text are kept.
func numericZone(s string) string {
	f := strings.Fields(s)
	for i, w := range f {
		if off, ok := zoneOffsets[w]; ok {
			sign := byte('+')
			if off < 0 {
				sign, off = '-', -off
			}
			h, m := off/3600, off%3600/60
			f[i] = string([]byte{sign, byte('0' + h/10), byte('0' + h%10), byte('0' + m/10), byte('0' + m%10)})
			return strings.Join(f, " ")
		}
	}
	return s
}
