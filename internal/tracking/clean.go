package tracking

import (
	"net/url"
	"strings"
)

// Strip removes from u, in place, its fragment and the query parameters that
// match table, except those that match keep (each a name or a "prefix*",
// compared without regard to case). The remaining parameters keep their
// order and their encoding, and an empty query loses its "?". A matrix-style
// ";jsessionid=…" path parameter (and everything after it in the path) is
// removed as well when table matches "jsessionid" and keep does not.
//
// Strip is the one URL cleaner of the module: the fetch chain calls it on
// every URL it requests, and package feed on every link it reads.
func Strip(u *url.URL, table, keep []string) {
	u.Fragment, u.RawFragment = "", ""
	if u.RawQuery != "" {
		pairs := strings.Split(u.RawQuery, "&")
		kept := pairs[:0]
		for _, p := range pairs {
			if p == "" {
				continue
			}
			k := QueryKey(p)
			if In(k, table) && !In(k, keep) {
				continue
			}
			kept = append(kept, p)
		}
		u.RawQuery = strings.Join(kept, "&")
	}
	u.ForceQuery = false
	if i := indexFoldASCII(u.Path, ";jsessionid="); i >= 0 && In("jsessionid", table) && !In("jsessionid", keep) {
		u.Path = u.Path[:i]
		u.RawPath = ""
	}
}

// QueryKey returns the decoded key of one raw "k=v" query pair (the raw key
// when it does not decode).
func QueryKey(pair string) string {
	k, _, _ := strings.Cut(pair, "=")
	if d, err := url.QueryUnescape(k); err == nil {
		return d
	}
	return k
}

// indexFoldASCII returns the byte offset in s of the first match of the ASCII
// string sub, ignoring ASCII case, or -1. (Lower-casing s first would not do:
// strings.ToLower changes the length of invalid UTF-8, and the offset would
// then point elsewhere in s.)
func indexFoldASCII(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		match := true
		for j := 0; j < len(sub); j++ {
			a, b := s[i+j], sub[j]
			if 'A' <= a && a <= 'Z' {
				a += 'a' - 'A'
			}
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			if a != b {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}
