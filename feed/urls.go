package feed

import (
	"net/url"
	"path"
	"strings"

	"github.com/politefetch/politefetch/internal/hostkey"
	"github.com/politefetch/politefetch/internal/tracking"
)

// linkCleaner makes the links a document names absolute and strips their
// tracking parameters with the module's one cleaner (internal/tracking), the
// same the fetch chain applies to every URL it requests. The zero
// value strips nothing: use newLinkCleaner.
type linkCleaner struct {
	table []string // the tracking parameters stripped
	keep  []string // those the source declares necessary
}

// newLinkCleaner returns a cleaner of the default tracking table that keeps
// the parameters named in keep (names or "prefix*" patterns, compared
// without regard to case).
func newLinkCleaner(keep []string) linkCleaner {
	return linkCleaner{table: tracking.Default(), keep: keep}
}

// link resolves ref against base (which may be nil) and strips it (see
// tracking.Strip: tracking parameters but those kept, the fragment, a
// ";jsessionid=" path parameter). It returns "" when ref is empty or cannot
// be parsed, or when the result is not an absolute http or https URL with a
// valid host.
func (c linkCleaner) link(base *url.URL, ref string) string {
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
	if u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	if _, err := hostkey.FromURL(u); err != nil {
		return "" // no host, or one no request could be sent to
	}
	tracking.Strip(u, c.table, c.keep)
	out := u.String()
	if strings.IndexByte(u.Host, ':') >= 0 {
		// A port, or a host such as "::" that prints as a URL no parser
		// reads back.
		if _, err := url.Parse(out); err != nil {
			return ""
		}
	}
	return out
}

// CMSID returns the article identifier a CMS put in s, when it can be read:
// "123" from a WordPress guid "https://example.org/?p=123" or from a
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
