package fetch

import (
	"net/url"
	"strings"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/internal/hostkey"
	"github.com/politefetch/politefetch/internal/tracking"
)

// defaultTracking returns a fresh copy of the tracking parameters stripped when a
// Policy's Tracking is nil: utm_*, fbclid, gclid, mc_cid, session ids and the like.
func defaultTracking() []string {
	return tracking.Default()
}

// Kind says what a Get is for; the ledger suspends articles but not feeds,
// and images take their own redirect limit and Referer. It is
// [backoff.Kind], the one Kind of politefetch. The zero Kind is KindArticle.
type Kind = backoff.Kind

// The kinds of request.
const (
	KindArticle = backoff.Article // a page, an API document: the zero Kind
	KindFeed    = backoff.Feed    // an RSS, Atom or JSON feed
	KindRobots  = backoff.Robots  // a robots.txt file
	KindImage   = backoff.Image   // a share image
	KindSitemap = backoff.Sitemap // a sitemap or sitemap index
	KindAPI     = backoff.API     // a list from a publisher's API
)

// Source is what one source of the caller's configuration declares: the hosts it
// may be read from, the query parameters it needs, and its credential.
type Source struct {
	Admitted   []string   // as Policy.Admitted; empty: any host
	Params     []string   // as Policy.Params
	Credential Credential // as Policy.Credential
}

// normalizeList normalises host patterns; invalid ones are kept lower-cased so
// they match nothing by accident.
func normalizeList(hosts []string) []string {
	if len(hosts) == 0 {
		return nil
	}
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, hostPattern(h))
	}
	return out
}

// hostPattern returns the key form of one host pattern: a host key, or "*."
// and one; a name that is no valid host is lowercased.
func hostPattern(h string) string {
	name, wild := strings.CutPrefix(h, "*.")
	k, err := hostkey.Normalize(name)
	if err != nil {
		k = strings.ToLower(name)
	}
	if wild {
		k = "*." + k
	}
	return k
}

// hostIn reports whether the normalised host key matches one of the normalised
// patterns.
func hostIn(key string, patterns []string) bool {
	for _, p := range patterns {
		if p == key {
			return true
		}
		if rest, ok := strings.CutPrefix(p, "*."); ok && (key == rest || strings.HasSuffix(key, "."+rest)) {
			return true
		}
	}
	return false
}

// paramIn reports whether the query key k matches a name or "prefix*" in
// list, without regard to case.
func paramIn(k string, list []string) bool { return tracking.In(k, list) }

// addedParams returns the query keys of next that prev lacks and keep does not
// declare: a redirect adding one of them stops the read.
func addedParams(prev, next *url.URL, keep []string) []string {
	have := map[string]bool{}
	for _, p := range strings.Split(prev.RawQuery, "&") {
		if p != "" {
			have[tracking.QueryKey(p)] = true
		}
	}
	var added []string
	for _, p := range strings.Split(next.RawQuery, "&") {
		if p == "" {
			continue
		}
		if k := tracking.QueryKey(p); !have[k] && !paramIn(k, keep) {
			added = append(added, k)
		}
	}
	return added
}
