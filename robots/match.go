package robots

import (
	"strings"
	"time"
)

// Decision explains an answer of [Rules.Explain] or [Cache.Explain]: which
// group applied and which rule decided and, from the Cache, the robots.txt
// record behind the answer and until when it stands.
type Decision struct {
	// Allowed is the answer.
	Allowed bool
	// Group is the user-agent of the group that applied, as written in the
	// file ("FooBot", or "*"); "" when no group applies to the agent.
	Group string
	// AgentLine is the 1-based line of the first User-agent line naming
	// Group, 0 when no group applies.
	AgentLine int
	// Rule is the deciding rule in a canonical form ("Disallow: /private"),
	// "" when none matched and the path is allowed by default.
	Rule string
	// Line is the 1-based line of the deciding rule in the file, 0 when none.
	Line int
	// Path is the normalised path, parameters and query that were matched.
	Path string

	// The fields below are the record behind a [Cache.Explain] answer;
	// [Rules.Explain] leaves them zero.

	// Site is the record's key: the host as every layer keys it, prefixed
	// with "http://" for a plain-http site.
	Site string
	// Outcome is what the robots.txt fetch decided for the whole site: a
	// DisallowAll answers false whatever the rules, AllowAll true.
	Outcome Outcome
	// Status is the HTTP status of that fetch, 0 when none arrived.
	Status int
	// Failure is the fetch's failure, "" when a response arrived in full.
	Failure string
	// FetchedAt is when the robots.txt behind the answer was fetched.
	FetchedAt time.Time
	// Expires is when robots.txt will be fetched again: the answer stands
	// until then.
	Expires time.Time
	// Stale reports a last good copy obeyed while robots.txt is
	// unreachable (UseLastGood).
	Stale bool
}

// Allowed reports whether the agent may fetch rawURL under these rules.
//
// userAgent is a bare product token ("FooBot") or a full User-Agent string
// ("FooBot/1.2 (+https://example.com/bot)"): its product token, the leading
// run of letters, '-' and '_', selects the group naming it exactly and
// case-insensitively, else the "*" group. rawURL is a path ("/a?b=1") or an
// absolute URL, whose path, parameters and query are matched. "/robots.txt"
// is always allowed. Allowed does not allocate for already-normalised paths.
func (r *Rules) Allowed(userAgent, rawURL string) bool {
	if r == nil {
		return true
	}
	path := normPath(rawURL)
	if isRobotsPath(path) {
		return true
	}
	s := r.set(userAgent)
	if s < 0 {
		return true
	}
	i := r.sets[s].match(path)
	return i < 0 || r.sets[s].rules[i].allow
}

// Explain is [Rules.Allowed] with its reasons.
func (r *Rules) Explain(userAgent, rawURL string) Decision {
	path := normPath(rawURL)
	d := Decision{Allowed: true, Path: path}
	if r == nil || isRobotsPath(path) {
		return d
	}
	s := r.set(userAgent)
	if s < 0 {
		return d
	}
	k := -1
	if tok := productToken(userAgent); tok != "" {
		k = r.findAgent(tok)
	}
	if k < 0 {
		k = r.findAgent("*")
	}
	if k >= 0 {
		d.Group, d.AgentLine = r.agents[k].name, int(r.agents[k].line)
	}
	i := r.sets[s].match(path)
	if i < 0 {
		return d
	}
	ru := r.sets[s].rules[i]
	d.Allowed = ru.allow
	d.Line = int(ru.line)
	d.Rule = "Disallow: "
	if ru.allow {
		d.Rule = "Allow: "
	}
	d.Rule += ru.pattern
	if ru.anchored {
		d.Rule += "$"
	}
	return d
}

// CrawlDelay returns the Crawl-delay of the group that applies to the agent
// (the largest, when the group gives several), and whether it gives one.
// Values are decimal seconds; malformed and negative ones are ignored.
func (r *Rules) CrawlDelay(userAgent string) (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	s := r.set(userAgent)
	if s < 0 {
		return 0, false
	}
	return r.sets[s].delay, r.sets[s].hasDelay
}

// Sitemaps returns the Sitemap URLs the file lists, in file order, without
// duplicates. The caller owns the returned slice.
func (r *Rules) Sitemaps() []string {
	if r == nil || len(r.sitemaps) == 0 {
		return nil
	}
	return append([]string(nil), r.sitemaps...)
}

// set returns the index of the rule set for the agent, or -1.
func (r *Rules) set(userAgent string) int {
	if tok := productToken(userAgent); tok != "" {
		if k := r.findAgent(tok); k >= 0 {
			return int(r.agents[k].set)
		}
	}
	return r.star - 1
}

func isRobotsPath(p string) bool {
	const rp = "/robots.txt"
	return strings.HasPrefix(p, rp) && (len(p) == len(rp) || p[len(rp)] == '?')
}

// match returns the index of the deciding rule, or -1: the matching rule
// with the longest pattern, an Allow winning a tie, the first in the file
// among equals.
func (s *ruleSet) match(path string) int {
	best := -1
	for i := range s.rules {
		ru := &s.rules[i]
		if best >= 0 {
			b := &s.rules[best]
			if ru.prio < b.prio || ru.prio == b.prio && (b.allow || !ru.allow) {
				continue // cannot beat the best so far
			}
		}
		if ru.matches(path) {
			best = i
		}
	}
	return best
}

// matches reports whether the rule's pattern matches a prefix of path (the
// whole of path when anchored). '*' matches any run of octets. It runs in
// time linear in len(path) per literal segment, without backtracking:
// leftmost placement of each segment is always safe.
func (ru *rule) matches(path string) bool {
	p := ru.pattern
	if !ru.wild {
		if ru.anchored {
			return path == p
		}
		return strings.HasPrefix(path, p)
	}
	i := strings.IndexByte(p, '*')
	if !strings.HasPrefix(path, p[:i]) {
		return false
	}
	pos := i
	p = p[i+1:]
	for {
		j := strings.IndexByte(p, '*')
		if j < 0 {
			break
		}
		seg := p[:j]
		k := strings.Index(path[pos:], seg)
		if k < 0 {
			return false
		}
		pos += k + len(seg)
		p = p[j+1:]
	}
	// p is the last segment, after the last '*'.
	if ru.anchored {
		return len(path)-len(p) >= pos && strings.HasSuffix(path, p)
	}
	return strings.Contains(path[pos:], p)
}

// normPath returns the path, parameters and query of rawURL, normalised
// like patterns. Following Google's reference parser, a leading "//" starts
// an authority, and "scheme://" is skipped when it comes before any '/', '?'
// or ';'; the fragment is dropped; an empty path is "/".
func normPath(raw string) string {
	start := 0
	if strings.HasPrefix(raw, "//") {
		start = 2
	}
	early := indexAny(raw, "/?;", start)
	proto := strings.Index(raw[start:], "://")
	if proto >= 0 {
		proto += start
	}
	if proto < 0 || (early >= 0 && early < proto) {
		proto = start
	} else {
		proto += 3
	}
	ps := indexAny(raw, "/?;", proto)
	if ps < 0 {
		return "/"
	}
	hash := strings.IndexByte(raw[start:], '#')
	end := len(raw)
	if hash >= 0 {
		hash += start
		if hash < ps {
			return "/"
		}
		end = hash
	}
	p := raw[ps:end]
	if p[0] != '/' {
		p = "/" + p
	}
	return escape(p, false)
}

func indexAny(s, chars string, from int) int {
	if from > len(s) {
		return -1
	}
	i := strings.IndexAny(s[from:], chars)
	if i < 0 {
		return -1
	}
	return i + from
}

const upperHex = "0123456789ABCDEF"

// escape normalises percent-encoding (RFC 9309 §2.2.2 and §2.2.3, RFC 3986
// §6.2.2): octets outside printable US-ASCII and the characters URIs may not
// hold are percent-encoded with upper-case hex; "%xx" escapes get upper-case
// hex, and those of unreserved characters are decoded ("%7E" → "~"; "%2F"
// stays); a '%' that starts no escape becomes "%25". In a pattern, '*' is the wildcard and a final '$' the anchor, so
// only a '$' elsewhere is encoded; in a path both are encoded ("%2A",
// "%24"), so a pattern matches them literally only in encoded form. It
// returns s itself when nothing changes.
func escape(s string, pattern bool) string {
	i := 0
	for ; i < len(s); i++ {
		if change(s, i, pattern) {
			break
		}
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case encode(s, i, pattern):
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(upperHex[v>>4])
				b.WriteByte(upperHex[v&15])
			}
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// change reports whether escape changes s at i.
func change(s string, i int, pattern bool) bool {
	if encode(s, i, pattern) {
		return true
	}
	if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
		return isUnreserved(unhex(s[i+1])<<4|unhex(s[i+2])) || isLowerHex(s[i+1]) || isLowerHex(s[i+2])
	}
	return false
}

// encode reports whether the octet at s[i] is to be percent-encoded.
func encode(s string, i int, pattern bool) bool {
	c := s[i]
	if c <= ' ' || c >= 0x7f {
		return true
	}
	switch c {
	case '"', '<', '>', '\\', '^', '`', '{', '|', '}':
		return true
	case '*':
		return !pattern
	case '$':
		return !pattern || i != len(s)-1
	case '%':
		// A '%' that starts no escape is the octet itself: encoded, it
		// cannot join the octets after it into an escape on a second
		// normalisation ("%7%30" would give "%70", then "p").
		return i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isLowerHex(c byte) bool { return 'a' <= c && c <= 'f' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}
