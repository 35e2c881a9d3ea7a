package backoff

import (
	"math"
	"net/http"
	"strings"
	"time"
)

// maxDelta is the largest delay ParseRetryAfter returns: a longer one is
// cut to it (a policy caps it far lower anyway).
const maxDelta = time.Duration(math.MaxInt64)

// ParseRetryAfter reads a Retry-After header value (RFC 9110 §10.2.3) as a
// delay from now. It accepts delta-seconds (one or more ASCII digits, any
// size: absurd values saturate) and every HTTP-date form [http.ParseTime]
// knows (IMF-fixdate, RFC 850, ANSI C asctime). A date in the past gives 0.
// Surrounding spaces and tabs are ignored. An empty, negative or otherwise
// malformed value gives ok false. The delay is never negative.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.Trim(v, " \t")
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		var secs uint64
		for i := 0; i < len(v); i++ {
			secs = secs*10 + uint64(v[i]-'0')
			if secs > uint64(maxDelta/time.Second) {
				return maxDelta, true
			}
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d = t.Sub(now) // saturates at the extremes
	if d < 0 {
		d = 0
	}
	return d, true
}

// retryAfter is o's Retry-After as a delay from now: an HTTP-date counts
// from the response's Date when that parses (the server's clock against
// its own), else from now.
func (o Outcome) retryAfter(now time.Time) (time.Duration, bool) {
	from := now // delta-seconds ignore it
	if d, err := http.ParseTime(strings.Trim(o.Date, " \t")); err == nil {
		from = d
	}
	return ParseRetryAfter(o.RetryAfter, from)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}
