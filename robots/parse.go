package robots

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxBodySize is the most of a robots.txt file that is read and parsed:
// 500 KiB as RFC 9309 §2.5 requires at least. [Parse] drops the bytes beyond
// it and the partial line they cut.
const MaxBodySize = 512000

// Rules is a parsed robots.txt file. Build one with [Parse]; the zero value
// and a nil *Rules are an empty file, allowing everything. A Rules is
// immutable and safe for concurrent use.
type Rules struct {
	agents   []agentSet     // distinct product tokens ("*" included), in file order
	index    map[string]int // lower-cased token → agents index, when many
	star     int            // 1 + index into sets of the "*" group; 0 when none
	sets     []ruleSet
	sitemaps []string
}

type agentSet struct {
	name string // the product token as written in the file
	set  int32  // index into Rules.sets
	line int32  // 1-based line of the first user-agent line naming it
}

type ruleSet struct {
	rules    []rule // in file order
	delay    time.Duration
	hasDelay bool
}

type rule struct {
	pattern  string // normalised, without a trailing '$'
	prio     int32  // octets of the normalised pattern, '$' included
	line     int32  // 1-based line in the file
	allow    bool
	wild     bool // pattern holds '*'
	anchored bool // pattern ended with '$'
}

// parse-time group, before merging: its rules are all[start:end] of the
// parser's one rule slice (a group's rules are contiguous in the file).
type pgroup struct {
	start, end int
	delay      time.Duration
	hasDelay   bool
	sawRule    bool
}

// pagent is a user-agent line: its product token and its group.
type pagent struct {
	name  string
	group int32
	line  int32
}

type keyKind uint8

const (
	keyUnknown keyKind = iota
	keyUserAgent
	keyAllow
	keyDisallow
	keyCrawlDelay
	keySitemap
)

// keys lists the directive names accepted, case-insensitively, including the
// misspellings Google's parser accepts.
var keys = [...]struct {
	name string
	kind keyKind
}{
	{"user-agent", keyUserAgent}, {"useragent", keyUserAgent}, {"user agent", keyUserAgent},
	{"allow", keyAllow},
	{"disallow", keyDisallow}, {"dissallow", keyDisallow}, {"dissalow", keyDisallow},
	{"disalow", keyDisallow}, {"diasllow", keyDisallow}, {"disallaw", keyDisallow},
	{"crawl-delay", keyCrawlDelay}, {"crawldelay", keyCrawlDelay}, {"crawl delay", keyCrawlDelay},
	{"sitemap", keySitemap}, {"site-map", keySitemap},
}

func lookupKey(k string) keyKind {
	for _, e := range keys {
		if len(e.name) == len(k) && strings.EqualFold(e.name, k) {
			return e.kind
		}
	}
	return keyUnknown
}

// Parse parses a robots.txt body. It never fails: lines it does not
// understand are skipped and the rest stands. It reads at most
// [MaxBodySize] bytes, dropping the partial line the limit cuts. Parse
// copies what it keeps; body may be reused afterwards.
func Parse(body []byte) *Rules {
	if len(body) > MaxBodySize {
		complete := body[MaxBodySize] == '\n' || body[MaxBodySize] == '\r'
		body = body[:MaxBodySize]
		if !complete {
			i := max(lastIndexByte(body, '\n'), lastIndexByte(body, '\r'))
			body = body[:i+1]
		}
	}
	src := string(body)
	// A UTF-8 byte order mark, even a partial one, is skipped.
	for _, b := range [...]byte{0xEF, 0xBB, 0xBF} {
		if len(src) == 0 || src[0] != b {
			break
		}
		src = src[1:]
	}

	var (
		groups   = make([]pgroup, 0, 8)
		agents   = make([]pagent, 0, 16)
		all      = make([]rule, 0, min(strings.Count(src, "\n")+1, 4096))
		sitemaps []string
		seen     map[string]bool // sitemaps, once there are many
	)
	// nl and cr are the next '\n' and '\r' at or after pos (len(src) when
	// none), found once each so CR-only files stay linear.
	line, pos, nl, cr := 0, 0, -1, -1
	for pos < len(src) {
		line++
		if nl < pos {
			nl = indexFrom(src, '\n', pos)
		}
		if cr < pos {
			cr = indexFrom(src, '\r', pos)
		}
		end := min(nl, cr)
		l := src[pos:end]
		pos = end + 1
		if end == cr && cr+1 == nl {
			pos++ // CRLF is one line end
		}
		key, value, ok := splitLine(l)
		if !ok {
			continue
		}
		cur := len(groups) - 1
		switch k := lookupKey(key); k {
		case keyUserAgent:
			if cur < 0 || groups[cur].sawRule {
				groups = append(groups, pgroup{start: len(all), end: len(all)})
				cur++
			}
			if tok := agentToken(value); tok != "" {
				agents = append(agents, pagent{name: tok, group: int32(cur), line: int32(line)})
			}
		case keyAllow, keyDisallow:
			if cur < 0 {
				continue // rules before the first user-agent are ignored
			}
			g := &groups[cur]
			g.sawRule = true
			if value == "" {
				continue // an empty pattern matches nothing
			}
			allow := k == keyAllow
			all = append(all, newRule(escape(value, true), allow, line))
			if allow {
				// Google: "/index.html" and "/index.htm" stand for the
				// directory as well: Allow: /d/index.html allows /d/ too.
				if j := strings.LastIndexByte(value, '/'); j >= 0 && strings.HasPrefix(value[j:], "/index.htm") {
					all = append(all, newRule(escape(value[:j+1], true)+"$", true, line))
				}
			}
			g.end = len(all)
		case keyCrawlDelay:
			if cur < 0 {
				continue
			}
			if d, ok := parseDelay(value); ok {
				g := &groups[cur]
				if !g.hasDelay || d > g.delay {
					g.delay, g.hasDelay = d, true
				}
			}
		case keySitemap:
			if value == "" {
				continue
			}
			if len(sitemaps) < manySitemaps {
				if !slices.Contains(sitemaps, value) {
					sitemaps = append(sitemaps, value)
				}
				continue
			}
			if seen == nil {
				seen = make(map[string]bool, 2*manySitemaps)
				for _, sm := range sitemaps {
					seen[sm] = true
				}
			}
			if !seen[value] {
				seen[value] = true
				sitemaps = append(sitemaps, value)
			}
		}
	}
	return build(groups, agents, all, sitemaps)
}

// indexFrom returns the index of c in s at or after from, or len(s).
func indexFrom(s string, c byte, from int) int {
	if i := strings.IndexByte(s[from:], c); i >= 0 {
		return from + i
	}
	return len(s)
}

func lastIndexByte(b []byte, c byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}

func newRule(pattern string, allow bool, line int) rule {
	r := rule{pattern: pattern, prio: int32(min(len(pattern), math.MaxInt32)), line: int32(min(line, math.MaxInt32)), allow: allow}
	if strings.HasSuffix(pattern, "$") {
		r.anchored = true
		r.pattern = pattern[:len(pattern)-1]
	}
	r.wild = strings.IndexByte(r.pattern, '*') >= 0
	return r
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }

func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// splitLine cuts a line into key and value: comments removed, whitespace
// around both trimmed. As Google does, a missing colon is accepted when the
// line is exactly two words ("Disallow /x").
func splitLine(l string) (key, value string, ok bool) {
	if i := strings.IndexByte(l, '#'); i >= 0 {
		l = l[:i]
	}
	l = trimSpace(l)
	if l == "" {
		return "", "", false
	}
	sep := strings.IndexByte(l, ':')
	if sep < 0 {
		sep = strings.IndexAny(l, " \t")
		if sep < 0 {
			return "", "", false
		}
		if strings.ContainsAny(trimSpace(l[sep:]), " \t") {
			return "", "", false
		}
	}
	key, value = trimSpace(l[:sep]), trimSpace(l[sep+1:])
	return key, value, key != ""
}

// agentToken returns "*" for the global agent, else the product token: the
// leading run of letters, '-' and '_' (RFC 9309 §2.2.1), matched later
// case-insensitively.
func agentToken(v string) string {
	if len(v) > 0 && v[0] == '*' && (len(v) == 1 || isSpace(v[1])) {
		return "*"
	}
	return productToken(v)
}

func productToken(v string) string {
	i := 0
	for i < len(v) {
		c := v[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_' {
			i++
			continue
		}
		break
	}
	return v[:i]
}

func parseDelay(v string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0, false
	}
	if f >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(f * float64(time.Second)), true
}

// smallSet is the number of agents up to which a linear scan beats a map,
// manySitemaps the number of Sitemap lines.
const (
	smallSet     = 16
	manySitemaps = 64
)

func build(groups []pgroup, agents []pagent, all []rule, sitemaps []string) *Rules {
	r := &Rules{sitemaps: sitemaps}
	r.sets = make([]ruleSet, len(groups))
	for i, g := range groups {
		r.sets[i] = ruleSet{rules: all[g.start:g.end:g.end], delay: g.delay, hasDelay: g.hasDelay}
	}
	r.agents = make([]agentSet, 0, len(agents))
	// merged[k] lists the groups naming agent k, when more than one does.
	var merged map[int][]int32
	var order []int // keys of merged, in file order
	// With many agents, an index by lower-cased name; the names are
	// lower-cased into one string, so the keys cost one allocation.
	var lower string
	var offs []int
	if len(agents) > smallSet {
		n := 0
		for _, a := range agents {
			n += len(a.name)
		}
		buf := make([]byte, 0, n)
		offs = make([]int, len(agents)+1)
		for i, a := range agents {
			offs[i] = len(buf)
			for j := 0; j < len(a.name); j++ {
				c := a.name[j]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf = append(buf, c)
			}
		}
		offs[len(agents)] = len(buf)
		lower = string(buf)
	}
	key := func(ai int) string { return lower[offs[ai]:offs[ai+1]] }
	first := make([]int, 0, len(agents)) // first[k]: the index in agents of r.agents[k]
	for ai, a := range agents {
		k := r.findAgent(a.name)
		if k < 0 {
			r.agents = append(r.agents, agentSet{name: a.name, set: a.group, line: a.line})
			if lower == "" {
				continue
			}
			first = append(first, ai)
			if len(r.agents) > smallSet {
				if r.index == nil {
					r.index = make(map[string]int, len(agents))
					for i := range r.agents {
						r.index[key(first[i])] = i
					}
				}
				r.index[key(ai)] = len(r.agents) - 1
			}
			continue
		}
		if r.agents[k].set == a.group {
			continue // the same agent twice in one group
		}
		if merged == nil {
			merged = make(map[int][]int32)
		}
		gs := merged[k]
		if gs == nil {
			gs = []int32{r.agents[k].set}
			order = append(order, k)
		}
		// Agents come in file order, so a group repeats only at the end.
		if gs[len(gs)-1] != a.group {
			gs = append(gs, a.group)
		}
		merged[k] = gs
	}
	for _, k := range order {
		var s ruleSet
		for _, gi := range merged[k] {
			g := groups[gi]
			s.rules = append(s.rules, all[g.start:g.end]...)
			if g.hasDelay && (!s.hasDelay || g.delay > s.delay) {
				s.delay, s.hasDelay = g.delay, true
			}
		}
		r.agents[k].set = int32(len(r.sets))
		r.sets = append(r.sets, s)
	}
	if k := r.findAgent("*"); k >= 0 {
		r.star = int(r.agents[k].set) + 1
	}
	return r
}

// findAgent returns the index in r.agents of the token, or -1. It does not
// allocate for tokens of up to 64 bytes.
func (r *Rules) findAgent(tok string) int {
	if r.index != nil {
		var buf [64]byte
		if len(tok) <= len(buf) {
			b := buf[:len(tok)]
			for i := 0; i < len(tok); i++ {
				c := tok[i]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				b[i] = c
			}
			if k, ok := r.index[string(b)]; ok {
				return k
			}
			return -1
		}
		if k, ok := r.index[strings.ToLower(tok)]; ok {
			return k
		}
		return -1
	}
	for i := range r.agents {
		if len(r.agents[i].name) == len(tok) && strings.EqualFold(r.agents[i].name, tok) {
			return i
		}
	}
	return -1
}
