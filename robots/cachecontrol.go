package robots

import (
	"strconv"
	"strings"
	"time"
)

// maxAge returns the max-age a Cache-Control header value gives, and
// whether it gives a valid one. "no-store" and "no-cache" count as
// max-age=0 (the Cache then keeps the file for MinTTL). A malformed
// max-age is ignored.
func maxAge(cc string) (time.Duration, bool) {
	var age time.Duration
	found := false
	for cc != "" {
		var d string
		d, cc, _ = strings.Cut(cc, ",")
		d = strings.TrimSpace(d)
		name, val, hasVal := strings.Cut(d, "=")
		name = strings.TrimSpace(name)
		switch {
		case strings.EqualFold(name, "no-store"), strings.EqualFold(name, "no-cache"):
			return 0, true
		case strings.EqualFold(name, "max-age") && hasVal && !found:
			val = strings.Trim(strings.TrimSpace(val), `"`)
			n, err := strconv.ParseUint(val, 10, 64)
			if err != nil {
				if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
					n = 1 << 32
				} else {
					continue
				}
			}
			if n > 1<<32 {
				n = 1 << 32
			}
			age, found = time.Duration(n)*time.Second, true
		}
	}
	return age, found
}
