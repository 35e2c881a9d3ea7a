package politetest

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Rule names a politeness rule the auditor checks.
type Rule string

// The rules the auditor checks, one per kind of violation.
const (
	// RuleInterval: two request starts (see [Request.Start]) to one host
	// closer than the policy's Interval, or than the host's robots.txt
	// Crawl-delay when that is longer (unless the policy ignores
	// Crawl-delay).
	RuleInterval Rule = "interval"
	// RuleInFlight: more than MaxInFlight requests in flight to one host.
	RuleInFlight Rule = "in-flight"
	// RuleRobotsFirst: a path fetched before the host's robots.txt had
	// been requested and answered.
	RuleRobotsFirst Rule = "robots-first"
	// RuleDisallowed: a path fetched that the host's robots.txt, as last
	// answered, disallows for the policy's agent.
	RuleDisallowed Rule = "disallowed"
	// RuleCooldown: a request to a host while a cool-down the host itself
	// announced was running: a Retry-After (seconds, counted from when the
	// answer finished, or an HTTP-date) on a 429 or 503, or a challenge page
	// (an answer carrying "cf-mitigated: challenge", as [Challenge] serves;
	// then the policy's ChallengeCooldown). robots.txt requests count too.
	RuleCooldown Rule = "cooldown"
	// RuleHeader: a request header outside the policy's AllowedHeaders.
	RuleHeader Rule = "header"
	// RuleCookie: a Cookie header sent.
	RuleCookie Rule = "cookie"
	// RuleUserAgent: a missing or anonymous User-Agent (empty, or a
	// library's default such as Go-http-client/1.1, curl/8, or
	// python-requests/2), or one the policy's UserAgent rule rejects.
	RuleUserAgent Rule = "user-agent"
	// RuleConnections: more than MaxConnsPerHost connections open to one
	// host at once.
	RuleConnections Rule = "connections"
	// RuleInsecure: a request over plain HTTP when the policy is HTTPSOnly
	// (the vault connector's "https only", V10).
	RuleInsecure Rule = "insecure"
)

// Rules lists every rule, in the order reports print them.
func Rules() []Rule {
	return []Rule{RuleRobotsFirst, RuleDisallowed, RuleInterval, RuleInFlight, RuleConnections,
		RuleCooldown, RuleUserAgent, RuleHeader, RuleCookie, RuleInsecure}
}

// DefaultChallengeCooldown is how long after a challenge page the auditor
// expects a host to be left alone when the Policy does not say (the strict
// news crawler's first back-off step, S4).
const DefaultChallengeCooldown = 5 * time.Minute

// Policy is the politeness a client claims; the auditor checks the recorded
// traffic against it. The zero value checks: robots.txt first and obeyed
// (Crawl-delay honoured), one request in flight and one connection per host,
// cool-downs honoured (DefaultChallengeCooldown after a challenge), no
// cookies, and a User-Agent that is neither missing nor anonymous; it sets
// no minimum interval and allows any header.
type Policy struct {
	// Interval is the minimum time between two request starts to one host.
	// 0: none (the host's Crawl-delay still applies).
	Interval time.Duration
	// IgnoreCrawlDelay stops the auditor from lengthening Interval to the
	// host's robots.txt Crawl-delay.
	IgnoreCrawlDelay bool
	// MaxInFlight is the most requests allowed in flight to one host at
	// once. 0: 1.
	MaxInFlight int
	// MaxConnsPerHost is the most connections allowed open to one host at
	// once. 0: 1.
	MaxConnsPerHost int
	// AllowedHeaders, if not nil, is the complete set of request headers
	// allowed (case-insensitive; Host is always allowed). nil: any header.
	AllowedHeaders []string
	// AllowCookies allows the Cookie header.
	AllowCookies bool
	// UserAgent, if set, must match every request's User-Agent.
	UserAgent *regexp.Regexp
	// RobotsAgent is the product token whose robots.txt group applies
	// (else the "*" group). "": each request's User-Agent product token
	// (the part before the first "/").
	RobotsAgent string
	// StrictRobots treats a robots.txt answering 401, 403 or 429 as
	// disallowing the whole site (S3). Otherwise a 4xx means no robots.txt
	// (RFC 9309, V11). A 5xx or no answer always disallows the site.
	StrictRobots bool
	// ChallengeCooldown is how long a host must be left alone after it
	// served a challenge page. 0: DefaultChallengeCooldown.
	ChallengeCooldown time.Duration
	// Slack is a tolerance taken off every required gap (interval,
	// Crawl-delay, cool-down), for clients that pace by their own send
	// times. On Linux request starts are the kernel's receive times (see
	// [Request.Start]), so a millisecond or two covers clock granularity
	// however loaded the machine; elsewhere starts are when the web began
	// handling, which scheduling on a loaded machine can shift by tens of
	// milliseconds. (Cool-downs are judged by Arrived, which only lags:
	// in the client's favour.) 0: none.
	Slack time.Duration
	// HTTPSOnly makes every plain-HTTP request a violation (RuleInsecure).
	HTTPSOnly bool
	// Ignore lists rules not to check.
	Ignore []Rule
}

func (p Policy) maxInFlight() int { return max(p.MaxInFlight, 1) }
func (p Policy) maxConns() int    { return max(p.MaxConnsPerHost, 1) }
func (p Policy) challengeWait() time.Duration {
	if p.ChallengeCooldown > 0 {
		return p.ChallengeCooldown
	}
	return DefaultChallengeCooldown
}

func (p Policy) checks(r Rule) bool {
	for _, x := range p.Ignore {
		if x == r {
			return false
		}
	}
	return true
}

// Violation is one breach of a rule.
type Violation struct {
	// Rule is the rule broken.
	Rule Rule
	// Host is the host wronged.
	Host string
	// Request is the offending request (for RuleConnections, the first
	// request on the extra connection; zero if it carried none).
	Request Request
	// Other is the other request involved, if any: the previous start
	// (interval), a request still in flight, the refusal that started a
	// cool-down, the robots.txt answer that disallowed, or the first
	// request on a connection already open.
	Other *Request
	// At is when the violation happened: the request's arrival, or the
	// extra connection's opening.
	At time.Time
	// NotBefore, when set, is the earliest time the request would have
	// been polite (interval and cool-down rules).
	NotBefore time.Time
	// Detail says what was wrong, in words.
	Detail string
}

// String describes the violation on one line, with times as given.
func (v Violation) String() string { return v.format(time.Time{}) }

func (v Violation) format(origin time.Time) string {
	at := func(t time.Time) string {
		if origin.IsZero() {
			return t.Format("15:04:05.000000")
		}
		return "+" + t.Sub(origin).Round(time.Microsecond).String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s at %s", v.Rule, v.Host, describe(v.Request), at(v.At))
	if v.Other != nil {
		fmt.Fprintf(&b, "; other %s at %s", describe(*v.Other), at(v.Other.Arrived))
	}
	if !v.NotBefore.IsZero() {
		fmt.Fprintf(&b, "; not before %s", at(v.NotBefore))
	}
	if v.Detail != "" {
		b.WriteString(": " + v.Detail)
	}
	return b.String()
}

func describe(r Request) string {
	if r.Seq == 0 {
		return "(no request)"
	}
	s := "#" + strconv.Itoa(r.Seq) + " " + r.Method + " " + r.Target
	if r.Conn != 0 {
		s += " (conn " + strconv.Itoa(r.Conn) + ")"
	}
	return s
}

// Report is the auditor's verdict on the recorded traffic.
type Report struct {
	// Policy is the policy checked.
	Policy Policy
	// Start is when the first recorded request arrived (or the first
	// connection opened); String prints times relative to it.
	Start time.Time
	// Requests and Hosts count what was judged.
	Requests, Hosts int
	// Violations lists every breach, ordered by time.
	Violations []Violation
	// ByRule and ByHost count the violations.
	ByRule map[Rule]int
	ByHost map[string]int
}

// OK reports whether there was no violation.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

// Count returns how many violations of rule there were.
func (r *Report) Count(rule Rule) int { return r.ByRule[rule] }

// Of returns the violations of rule.
func (r *Report) Of(rule Rule) []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if v.Rule == rule {
			out = append(out, v)
		}
	}
	return out
}

// String is a readable summary: the verdict, counts per rule and per host,
// then each violation (at most 50) on its own line.
func (r *Report) String() string {
	var b strings.Builder
	if r.OK() {
		fmt.Fprintf(&b, "politetest audit: OK (%d requests to %d hosts, no violations)\n", r.Requests, r.Hosts)
		return b.String()
	}
	fmt.Fprintf(&b, "politetest audit: %d violations (%d requests to %d hosts)\n", len(r.Violations), r.Requests, r.Hosts)
	b.WriteString("by rule:")
	for _, rule := range Rules() {
		if n := r.ByRule[rule]; n > 0 {
			fmt.Fprintf(&b, " %s=%d", rule, n)
		}
	}
	b.WriteString("\nby host:")
	hosts := make([]string, 0, len(r.ByHost))
	for h := range r.ByHost {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		fmt.Fprintf(&b, " %s=%d", h, r.ByHost[h])
	}
	b.WriteString("\n")
	for i, v := range r.Violations {
		if i == 50 {
			fmt.Fprintf(&b, "… and %d more\n", len(r.Violations)-50)
			break
		}
		b.WriteString("  " + v.format(r.Start) + "\n")
	}
	return b.String()
}

// Audit judges everything recorded so far against p. Requests still in
// flight count as in flight until now. It may be called at any time, any
// number of times.
func (w *Web) Audit(p Policy) *Report {
	return audit(p, w.Requests(), w.Connections())
}

// anonymousAgents are User-Agent prefixes (lower case) of HTTP libraries'
// defaults: a request carrying one says nothing about who sends it.
var anonymousAgents = []string{
	"go-http-client", "curl/", "wget/", "python-requests", "python-urllib", "python-httpx",
	"python/", "aiohttp", "httpx", "okhttp", "java/", "apache-httpclient", "jakarta commons-httpclient",
	"libwww-perl", "lwp::", "node-fetch", "undici", "axios/", "got (", "ruby", "faraday",
	"guzzlehttp", "php/", "postmanruntime", "insomnia", "reqwest/", "scrapy/", "httpie/",
	"winhttp", "dart:io",
}

func anonymousAgent(ua string) bool {
	ua = strings.ToLower(strings.TrimSpace(ua))
	if ua == "" {
		return true
	}
	for _, a := range anonymousAgents {
		if strings.HasPrefix(ua, a) {
			return true
		}
	}
	return false
}

func productToken(ua string) string {
	ua = strings.TrimSpace(ua)
	if i := strings.IndexAny(ua, "/ ;("); i >= 0 {
		ua = ua[:i]
	}
	return ua
}

type robotsVerdict struct {
	by        *Request
	allowAll  bool
	denyAll   bool
	rules     robotsRules
	agentRule string
}

func audit(p Policy, reqs []Request, conns []Conn) *Report {
	rep := &Report{Policy: p, Requests: len(reqs), ByRule: map[Rule]int{}, ByHost: map[string]int{}}
	if len(reqs) > 0 {
		rep.Start = reqs[0].Arrived
	}
	for _, c := range conns {
		if rep.Start.IsZero() || c.Opened.Before(rep.Start) {
			rep.Start = c.Opened
		}
	}
	add := func(v Violation) {
		if !p.checks(v.Rule) {
			return
		}
		rep.Violations = append(rep.Violations, v)
		rep.ByRule[v.Rule]++
		rep.ByHost[v.Host]++
	}
	allowed := map[string]bool{"Host": true}
	for _, h := range p.AllowedHeaders {
		allowed[http.CanonicalHeaderKey(h)] = true
	}
	finishedBy := func(r *Request, t time.Time) bool { return !r.Finished.IsZero() && !r.Finished.After(t) }

	byHost := map[string][]int{}
	var hosts []string
	for i := range reqs {
		h := reqs[i].Host
		if _, ok := byHost[h]; !ok {
			hosts = append(hosts, h)
		}
		byHost[h] = append(byHost[h], i)
	}
	rep.Hosts = len(hosts)

	verdicts := map[verdictKey]*robotsVerdict{}
	for _, host := range hosts {
		idx := byHost[host]
		// Positions (in idx) of the robots.txt requests and of the
		// answers that announced a cool-down.
		var robotsPos, coolPos []int
		for k, i := range idx {
			if isRobotsPath(reqs[i].Path) {
				robotsPos = append(robotsPos, k)
			}
			if t, _ := cooldownUntil(p, &reqs[i]); !t.IsZero() {
				coolPos = append(coolPos, k)
			}
		}
		// The interval rule compares each request with the one that started
		// just before it. Starts are when the bytes arrived, which on
		// several connections need not follow the order the web handled
		// the requests in (Seq), so the host's requests are put in start
		// order first (handling order among equal starts).
		byStart := slices.Clone(idx)
		sort.SliceStable(byStart, func(a, b int) bool {
			return startOf(&reqs[byStart[a]]).Before(startOf(&reqs[byStart[b]]))
		})
		startedBefore := make(map[int]int, len(byStart))
		for n := 1; n < len(byStart); n++ {
			startedBefore[byStart[n]] = byStart[n-1]
		}
		for k, i := range idx {
			q := &reqs[i]
			robots := isRobotsPath(q.Path)

			// Identity and headers.
			ua := q.Header.Get("User-Agent")
			switch {
			case len(q.Header.Values("User-Agent")) == 0 || strings.TrimSpace(ua) == "":
				add(Violation{Rule: RuleUserAgent, Host: host, Request: *q, At: q.Arrived, Detail: "no User-Agent"})
			case anonymousAgent(ua):
				add(Violation{Rule: RuleUserAgent, Host: host, Request: *q, At: q.Arrived, Detail: fmt.Sprintf("anonymous User-Agent %q", ua)})
			case p.UserAgent != nil && !p.UserAgent.MatchString(ua):
				add(Violation{Rule: RuleUserAgent, Host: host, Request: *q, At: q.Arrived, Detail: fmt.Sprintf("User-Agent %q does not match %s", ua, p.UserAgent)})
			}
			if p.HTTPSOnly && !q.TLS {
				add(Violation{Rule: RuleInsecure, Host: host, Request: *q, At: q.Arrived, Detail: "plain HTTP: " + q.Method + " http://" + host + q.Target})
			}
			if len(q.Header.Values("Cookie")) > 0 && !p.AllowCookies {
				add(Violation{Rule: RuleCookie, Host: host, Request: *q, At: q.Arrived, Detail: "Cookie: " + strings.Join(q.Header.Values("Cookie"), "; ")})
			}
			if p.AllowedHeaders != nil {
				var extra []string
				for k := range q.Header {
					if !allowed[k] && k != "Cookie" {
						extra = append(extra, k)
					}
				}
				if len(extra) > 0 {
					sort.Strings(extra)
					add(Violation{Rule: RuleHeader, Host: host, Request: *q, At: q.Arrived, Detail: "headers outside the allowed set: " + strings.Join(extra, ", ")})
				}
			}

			// robots.txt in effect at arrival: the last answer (not a
			// redirect) that had finished by then.
			var verdict *robotsVerdict
			var robotsAsked *Request
			for _, pos := range robotsPos {
				if pos >= k {
					break
				}
				j := idx[pos]
				r := &reqs[j]
				robotsAsked = r
				if !finishedBy(r, q.Arrived) || (r.Status >= 300 && r.Status < 400) {
					continue
				}
				key := verdictKey{j, agentFor(p, ua)}
				if verdicts[key] == nil {
					verdicts[key] = judgeRobots(p, r, key.agent)
				}
				verdict = verdicts[key]
			}

			if !robots {
				if verdict == nil {
					v := Violation{Rule: RuleRobotsFirst, Host: host, Request: *q, At: q.Arrived, Detail: "robots.txt not yet answered"}
					if robotsAsked != nil {
						o := *robotsAsked
						v.Other = &o
						v.Detail = "robots.txt requested but not yet answered"
					} else {
						v.Detail = "robots.txt never requested before"
					}
					add(v)
				} else if verdict.denyAll || (!verdict.allowAll && !verdict.rules.allowed(q.Target)) {
					o := *verdict.by
					detail := fmt.Sprintf("robots.txt disallows %s for agent %q", q.Target, verdict.agentRule)
					if verdict.denyAll {
						detail = fmt.Sprintf("robots.txt answered %d: the whole site is off limits", verdict.by.Status)
					}
					add(Violation{Rule: RuleDisallowed, Host: host, Request: *q, At: q.Arrived, Other: &o, Detail: detail})
				}
			}

			// Interval (start to start), lengthened by Crawl-delay.
			pi, ok := startedBefore[i]
			prev := &reqs[pi]
			need := p.Interval
			why := "interval"
			if verdict != nil && !p.IgnoreCrawlDelay && verdict.rules.crawlDelay > need {
				need, why = verdict.rules.crawlDelay, "Crawl-delay"
			}
			if ok && need > 0 {
				if gap := startOf(q).Sub(startOf(prev)); gap < need-p.Slack {
					o := *prev
					add(Violation{Rule: RuleInterval, Host: host, Request: *q, Other: &o, At: startOf(q),
						NotBefore: startOf(prev).Add(need),
						Detail:    fmt.Sprintf("started %v after the previous start, %s is %v", gap.Round(time.Microsecond), why, need)})
				}
			}
			if k == 0 {
				continue
			}
			// In flight.
			var busy []*Request
			for _, j := range idx[:k] {
				r := &reqs[j]
				if r.Finished.IsZero() || r.Finished.After(q.Arrived) {
					busy = append(busy, r)
				}
			}
			if len(busy) >= p.maxInFlight() {
				o := *busy[0]
				add(Violation{Rule: RuleInFlight, Host: host, Request: *q, Other: &o, At: q.Arrived,
					Detail: fmt.Sprintf("%d requests already in flight, at most %d allowed", len(busy), p.maxInFlight())})
			}
			// Cool-downs the host announced.
			var until time.Time
			var by *Request
			var reason string
			for _, pos := range coolPos {
				if pos >= k {
					break
				}
				r := &reqs[idx[pos]]
				if !finishedBy(r, q.Arrived) {
					continue
				}
				if t, why := cooldownUntil(p, r); t.After(until) {
					until, by, reason = t, r, why
				}
			}
			if by != nil && q.Arrived.Before(until.Add(-p.Slack)) {
				o := *by
				add(Violation{Rule: RuleCooldown, Host: host, Request: *q, Other: &o, At: q.Arrived, NotBefore: until,
					Detail: fmt.Sprintf("%v before the end of the cool-down (%s)", until.Sub(q.Arrived).Round(time.Millisecond), reason)})
			}
		}
	}

	// Connections open at once, per host.
	connHost := map[string][]Conn{}
	for _, c := range conns {
		if c.Host != "" {
			connHost[c.Host] = append(connHost[c.Host], c)
		}
	}
	firstReq := map[int]*Request{}
	for i := range reqs {
		if _, ok := firstReq[reqs[i].Conn]; !ok && reqs[i].Conn != 0 {
			firstReq[reqs[i].Conn] = &reqs[i]
		}
	}
	for host, cs := range connHost {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Opened.Before(cs[j].Opened) })
		for k, c := range cs {
			var open []Conn
			for _, o := range cs[:k] {
				if o.Closed.IsZero() || o.Closed.After(c.Opened) {
					open = append(open, o)
				}
			}
			if len(open) < p.maxConns() {
				continue
			}
			v := Violation{Rule: RuleConnections, Host: host, At: c.Opened,
				Detail: fmt.Sprintf("connection %d opened while %d were open (connection %d first), at most %d allowed", c.ID, len(open), open[0].ID, p.maxConns())}
			if r := firstReq[c.ID]; r != nil {
				v.Request = *r
			}
			if r := firstReq[open[0].ID]; r != nil {
				o := *r
				v.Other = &o
			}
			add(v)
		}
	}
	if !rep.Start.IsZero() {
		if rep.Hosts == 0 {
			rep.Hosts = len(connHost)
		}
	}
	sort.SliceStable(rep.Violations, func(i, j int) bool { return rep.Violations[i].At.Before(rep.Violations[j].At) })
	return rep
}

// verdictKey names a robots.txt answer (by index) read for an agent.
type verdictKey struct {
	index int
	agent string
}

// agentFor is the robots.txt product token the auditor reads rules for.
func agentFor(p Policy, ua string) string {
	if p.RobotsAgent != "" {
		return p.RobotsAgent
	}
	return productToken(ua)
}

// startOf is r.Start, or r.Arrived for a record made without one.
func startOf(r *Request) time.Time {
	if r.Start.IsZero() {
		return r.Arrived
	}
	return r.Start
}

// judgeRobots reads the robots.txt answer r for agent.
func judgeRobots(p Policy, r *Request, agent string) *robotsVerdict {
	v := &robotsVerdict{by: r, agentRule: agent}
	switch {
	case r.Status >= 200 && r.Status < 300:
		v.rules = parseRobots(r.robotsBody, agent)
	case r.Status >= 400 && r.Status < 500:
		if p.StrictRobots && (r.Status == 401 || r.Status == 403 || r.Status == 429) {
			v.denyAll = true
		} else {
			v.allowAll = true
		}
	default: // 5xx, no answer (timeout, reset)
		v.denyAll = true
	}
	return v
}

// cooldownUntil returns the end of the cool-down answer r announced (zero if
// none) and why.
func cooldownUntil(p Policy, r *Request) (time.Time, string) {
	h := r.ResponseHeader
	if h == nil {
		return time.Time{}, ""
	}
	if strings.EqualFold(h.Get("Cf-Mitigated"), "challenge") {
		return r.Finished.Add(p.challengeWait()), fmt.Sprintf("challenge page, cool-down %v", p.challengeWait())
	}
	if r.Status != http.StatusTooManyRequests && r.Status != http.StatusServiceUnavailable {
		return time.Time{}, ""
	}
	ra := strings.TrimSpace(h.Get("Retry-After"))
	if ra == "" {
		return time.Time{}, ""
	}
	if secs, err := strconv.ParseInt(ra, 10, 64); err == nil && secs >= 0 {
		return r.Finished.Add(time.Duration(secs) * time.Second), fmt.Sprintf("%d answered Retry-After: %s", r.Status, ra)
	}
	if t, err := http.ParseTime(ra); err == nil {
		return t, fmt.Sprintf("%d answered Retry-After: %s", r.Status, ra)
	}
	return time.Time{}, ""
}
