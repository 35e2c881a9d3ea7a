package feed

import (
	"net/url"
	"path"
	"strings"

	"github.com/politefetch/politefetch/internal/tracking"
)

// IsTracking reports whether the query parameter name is a tracking or
// session parameter that [CleanURL] removes: the same table the fetch chain
// strips from the URLs it requests (utm_*, fbclid, gclid, mc_cid, session
// ids, …), compared without regard to case.
func IsTracking(name string) bool { return tracking.IsDefault(name) }

// CleanURL resolves ref against base (which may be nil) and removes the
// tracking parameters (V10) except those named in keep (compared
// case-insensitively), along with a ";jsessionid=" path parameter. The
// remaining parameters keep their order and encoding. It returns "" when ref
// is empty or cannot be parsed, or when the result is not an absolute http or
// https URL.
func CleanURL(base *url.URL, ref string, keep []string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return ""
	}
	if i := strings.Index(strings.ToLower(u.Path), ";jsessionid="); i >= 0 {
		u.Path = u.Path[:i]
		u.RawPath = ""
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		kept := parts[:0]
		for _, p := range parts {
			name, _, _ := strings.Cut(p, "=")
			if n, err := url.QueryUnescape(name); err == nil {
				name = n
			}
			if IsTracking(name) && !contains(keep, name) {
				continue
			}
			kept = append(kept, p)
		}
		u.RawQuery = strings.Join(kept, "&")
		u.ForceQuery = false
	}
	return u.String()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// CMSID returns the article identifier a CMS put in s, when it can be read
// (V3): "123" from a WordPress guid "https://example.org/?p=123" or from a
// REST address ".../wp-json/wp/v2/posts/123". It returns "" otherwise: an
// identifier is never derived from an ordinary article address.
func CMSID(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" {
		return ""
	}
	if rest, ok := cutAfter(u.Path, "/wp-json/wp/v2/posts/"); ok {
		rest = strings.TrimSuffix(rest, "/")
		if digits(rest) {
			return rest
		}
		return ""
	}
	if p := u.Query()["p"]; len(p) == 1 && digits(p[0]) {
		dir := u.Path
		if dir == "" || strings.HasSuffix(dir, "/") || path.Base(dir) == "index.php" {
			return p[0]
		}
	}
	return ""
}

func cutAfter(s, sep string) (string, bool) {
	i := strings.Index(s, sep)
	if i < 0 {
		return "", false
	}
	return s[i+len(sep):], true
}

func digits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
