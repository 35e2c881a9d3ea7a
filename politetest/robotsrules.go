package politetest

import (
	"strconv"
	"strings"
	"time"
)

// robotsRules is the referee's reading of one robots.txt body for one agent:
// a simple approximation of RFC 9309 (groups by user-agent, falling back to
// "*"; longest-match Allow/Disallow with "*" and "$"; Allow wins a tie) plus
// the non-standard Crawl-delay. It is deliberately small: politetest must not
// depend on the parser it referees.
type robotsRules struct {
	rules      []robotsRule
	crawlDelay time.Duration
}

// maxCrawlDelay caps a Crawl-delay value so that a huge one cannot overflow.
const maxCrawlDelay = 24 * time.Hour

type robotsRule struct {
	allow   bool
	pattern string
}

type robotsGroup struct {
	agents     []string
	rules      []robotsRule
	crawlDelay time.Duration
	hasDelay   bool
}

// parseRobots reads body and keeps the groups that apply to agent (a product
// token such as "PoliteBot"), or else the "*" groups.
func parseRobots(body, agent string) robotsRules {
	var groups []*robotsGroup
	var cur *robotsGroup
	inAgents := false
	for _, line := range strings.Split(body, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		value = strings.TrimSpace(value)
		switch key {
		case "user-agent":
			if !inAgents || cur == nil {
				cur = &robotsGroup{}
				groups = append(groups, cur)
			}
			cur.agents = append(cur.agents, strings.ToLower(value))
			inAgents = true
		case "allow", "disallow":
			inAgents = false
			if cur == nil || value == "" {
				continue
			}
			cur.rules = append(cur.rules, robotsRule{allow: key == "allow", pattern: value})
		case "crawl-delay":
			inAgents = false
			if cur == nil {
				continue
			}
			if secs, err := strconv.ParseFloat(value, 64); err == nil && secs >= 0 {
				secs = min(secs, maxCrawlDelay.Seconds()) // also tames +Inf
				cur.crawlDelay = time.Duration(secs * float64(time.Second))
				cur.hasDelay = true
			}
		default:
			inAgents = false
		}
	}
	agent = strings.ToLower(agent)
	pick := func(match func(string) bool) (robotsRules, bool) {
		var out robotsRules
		found := false
		for _, g := range groups {
			for _, a := range g.agents {
				if match(a) {
					found = true
					out.rules = append(out.rules, g.rules...)
					if g.hasDelay && g.crawlDelay > out.crawlDelay {
						out.crawlDelay = g.crawlDelay
					}
					break
				}
			}
		}
		return out, found
	}
	if agent != "" && agent != "*" {
		if r, ok := pick(func(a string) bool { return a == agent }); ok {
			return r
		}
	}
	r, _ := pick(func(a string) bool { return a == "*" })
	return r
}

// allowed reports whether target (path and query) may be fetched.
func (rr robotsRules) allowed(target string) bool {
	if target == "/robots.txt" || strings.HasPrefix(target, "/robots.txt?") {
		return true
	}
	best, allow := -1, true
	for _, r := range rr.rules {
		if !robotsMatch(r.pattern, target) {
			continue
		}
		n := len(r.pattern)
		if n > best || (n == best && r.allow) {
			best, allow = n, r.allow
		}
	}
	return allow
}

// robotsMatch reports whether pattern (with "*" for any run of characters and
// a final "$" anchoring the end) matches the start of target.
func robotsMatch(pattern, target string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = strings.TrimSuffix(pattern, "$")
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(target, parts[0]) {
		return false
	}
	pos := len(parts[0])
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		if last && anchored {
			return len(target)-pos >= len(p) && strings.HasSuffix(target, p)
		}
		j := strings.Index(target[pos:], p)
		if j < 0 {
			return false
		}
		pos += j + len(p)
	}
	if anchored && len(parts) == 1 {
		return pos == len(target)
	}
	return true
}
