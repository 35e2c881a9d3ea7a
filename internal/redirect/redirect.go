// Package redirect holds the one answer of politefetch to "is this status a
// redirect to follow?", for every place that follows redirects by hand (the
// robots.txt fetch) or checks a recorded chain of them (proof
// verification).
package redirect

// Is reports whether status is a redirect that names its target in
// Location and may be followed: 301, 302, 303, 307 or 308. 300 (multiple
// choices) and 304 (not modified) are not, nor is 305 (use proxy,
// deprecated).
func Is(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}
