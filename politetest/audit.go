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
	// A request is in flight until its answer finished or its connection
	// closed, whichever came first.
	RuleInFlight Rule = "in-flight"
	// RuleRobotsFirst: a path fetched before the host's robots.txt had
	// been requested and answered (or the client had hung up on the answer,
	// having read what it needed). [RobotsRedirects] redirects in a row
	// count as an answer: robots.txt unavailable, everything allowed
	// (RFC 9309 §2.3.1.2).
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
	// host at once. A connection whose close the web recorded at most
	// [ConnReorder] after the next one opened, and which carried no request
	// after that opening, counts as closed by then (see ConnReorder).
	RuleConnections Rule = "connections"
	// RuleInsecure: a request over plain HTTP when the policy is HTTPSOnly
	// (the vault connector's "https only").
	RuleInsecure Rule = "insecure"
)

// Rules lists every rule, in the order reports print them.
func Rules() []Rule {
	return []Rule{RuleRobotsFirst, RuleDisallowed, RuleInterval, RuleInFlight, RuleConnections,
		RuleCooldown, RuleUserAgent, RuleHeader, RuleCookie, RuleInsecure}
}

// RobotsRedirects is how many robots.txt redirects in a row the auditor
// expects a client to follow before it may take robots.txt as unavailable
// (RFC 9309 §2.3.1.2: at least five).
const RobotsRedirects = 5

// DefaultChallengeCooldown is how long after a challenge page the auditor
// expects a host to be left alone when the Policy does not say (the strict
// news crawler's first back-off step).
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
	// disallowing the whole site. Otherwise a 4xx means no robots.txt
	// (RFC 9309). A 5xx or no answer always disallows the site.
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

// audit judges reqs and conns against p: it prepares each host's requests
// once (hostView), applies every per-request rule to each request in
// arrival order, then the connection rule, and sorts the violations by
// time.
func audit(p Policy, reqs []Request, conns []Conn) *Report {
	a := newAuditor(p, reqs, conns)
	for _, host := range a.hosts {
		hv := a.view(host)
		for k, i := range hv.idx {
			q := &reqs[i]
			a.checkUserAgent(host, q)
			a.checkInsecure(host, q)
			a.checkCookie(host, q)
			a.checkHeaders(host, q)
			verdict, asked := a.robotsInEffect(&hv, k, q)
			if !isRobotsPath(q.Path) {
				a.checkRobots(host, q, verdict, asked)
			}
			a.checkInterval(&hv, i, q, verdict)
			if k > 0 {
				a.checkInFlight(&hv, k, q)
				a.checkCooldown(&hv, k, q)
			}
		}
	}
	a.checkConnections(conns)
	if !a.rep.Start.IsZero() && a.rep.Hosts == 0 {
		a.rep.Hosts = len(connsByHost(conns))
	}
	sort.SliceStable(a.rep.Violations, func(i, j int) bool { return a.rep.Violations[i].At.Before(a.rep.Violations[j].At) })
	return a.rep
}

// auditor holds what the rules share: the policy, the records, the report
// being written and the robots.txt answers already read.
type auditor struct {
	p        Policy
	reqs     []Request
	rep      *Report
	allowed  map[string]bool // canonical header names the policy allows
	byHost   map[string][]int
	hosts    []string // in order of first request
	verdicts map[verdictKey]*robotsVerdict
	closed   map[int]time.Time // connection ID -> when it closed, if it did
}

func newAuditor(p Policy, reqs []Request, conns []Conn) *auditor {
	a := &auditor{p: p, reqs: reqs, allowed: map[string]bool{"Host": true},
		byHost: map[string][]int{}, verdicts: map[verdictKey]*robotsVerdict{}}
	a.rep = &Report{Policy: p, Requests: len(reqs), ByRule: map[Rule]int{}, ByHost: map[string]int{}}
	if len(reqs) > 0 {
		a.rep.Start = reqs[0].Arrived
	}
	a.closed = map[int]time.Time{}
	for _, c := range conns {
		if a.rep.Start.IsZero() || c.Opened.Before(a.rep.Start) {
			a.rep.Start = c.Opened
		}
		if !c.Closed.IsZero() {
			a.closed[c.ID] = c.Closed
		}
	}
	for _, h := range p.AllowedHeaders {
		a.allowed[http.CanonicalHeaderKey(h)] = true
	}
	for i := range reqs {
		h := reqs[i].Host
		if _, ok := a.byHost[h]; !ok {
			a.hosts = append(a.hosts, h)
		}
		a.byHost[h] = append(a.byHost[h], i)
	}
	a.rep.Hosts = len(a.hosts)
	return a
}

// add records v if the policy checks its rule.
func (a *auditor) add(v Violation) {
	if !a.p.checks(v.Rule) {
		return
	}
	a.rep.Violations = append(a.rep.Violations, v)
	a.rep.ByRule[v.Rule]++
	a.rep.ByHost[v.Host]++
}

// hostView is one host's requests, prepared once for the per-request rules.
type hostView struct {
	host string
	// idx lists the host's requests (indexes into reqs) in arrival order.
	idx []int
	// robotsPos and coolPos are the positions in idx of the robots.txt
	// requests and of the answers that announced a cool-down.
	robotsPos, coolPos []int
	// startedBefore maps a request to the one that started just before
	// it: starts are when the bytes arrived, which on several connections
	// need not follow the order the web handled the requests in (Seq), so
	// the host's requests are put in start order (handling order among
	// equal starts).
	startedBefore map[int]int
}

func (a *auditor) view(host string) hostView {
	hv := hostView{host: host, idx: a.byHost[host]}
	for k, i := range hv.idx {
		if isRobotsPath(a.reqs[i].Path) {
			hv.robotsPos = append(hv.robotsPos, k)
		}
		if t, _ := cooldownUntil(a.p, &a.reqs[i]); !t.IsZero() {
			hv.coolPos = append(hv.coolPos, k)
		}
	}
	byStart := slices.Clone(hv.idx)
	sort.SliceStable(byStart, func(x, y int) bool {
		return startOf(&a.reqs[byStart[x]]).Before(startOf(&a.reqs[byStart[y]]))
	})
	hv.startedBefore = make(map[int]int, len(byStart))
	for n := 1; n < len(byStart); n++ {
		hv.startedBefore[byStart[n]] = byStart[n-1]
	}
	return hv
}

// finishedBy reports whether r had finished by t.
func finishedBy(r *Request, t time.Time) bool { return !r.Finished.IsZero() && !r.Finished.After(t) }

// checkUserAgent: RuleUserAgent.
func (a *auditor) checkUserAgent(host string, q *Request) {
	ua := q.Header.Get("User-Agent")
	switch {
	case len(q.Header.Values("User-Agent")) == 0 || strings.TrimSpace(ua) == "":
		a.add(Violation{Rule: RuleUserAgent, Host: host, Request: *q, At: q.Arrived, Detail: "no User-Agent"})
	case anonymousAgent(ua):
		a.add(Violation{Rule: RuleUserAgent, Host: host, Request: *q, At: q.Arrived, Detail: fmt.Sprintf("anonymous User-Agent %q", ua)})
	case a.p.UserAgent != nil && !a.p.UserAgent.MatchString(ua):
		a.add(Violation{Rule: RuleUserAgent, Host: host, Request: *q, At: q.Arrived, Detail: fmt.Sprintf("User-Agent %q does not match %s", ua, a.p.UserAgent)})
	}
}

// checkInsecure: RuleInsecure.
func (a *auditor) checkInsecure(host string, q *Request) {
	if a.p.HTTPSOnly && !q.TLS {
		a.add(Violation{Rule: RuleInsecure, Host: host, Request: *q, At: q.Arrived, Detail: "plain HTTP: " + q.Method + " http://" + host + q.Target})
	}
}

// checkCookie: RuleCookie.
func (a *auditor) checkCookie(host string, q *Request) {
	if len(q.Header.Values("Cookie")) > 0 && !a.p.AllowCookies {
		a.add(Violation{Rule: RuleCookie, Host: host, Request: *q, At: q.Arrived, Detail: "Cookie: " + strings.Join(q.Header.Values("Cookie"), "; ")})
	}
}

// checkHeaders: RuleHeader (Cookie is RuleCookie's).
func (a *auditor) checkHeaders(host string, q *Request) {
	if a.p.AllowedHeaders == nil {
		return
	}
	var extra []string
	for k := range q.Header {
		if !a.allowed[k] && k != "Cookie" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		a.add(Violation{Rule: RuleHeader, Host: host, Request: *q, At: q.Arrived, Detail: "headers outside the allowed set: " + strings.Join(extra, ", ")})
	}
}

// robotsInEffect returns the robots.txt verdict in effect when the k-th
// request q of the host arrived (the last answer, not a redirect, that had
// finished by then, or whose connection the client had closed; nil if none)
// and the last robots.txt request before q, answered or not.
func (a *auditor) robotsInEffect(hv *hostView, k int, q *Request) (verdict *robotsVerdict, asked *Request) {
	redirects := 0 // consecutive robots.txt answers that were redirects
	for _, pos := range hv.robotsPos {
		if pos >= k {
			break
		}
		j := hv.idx[pos]
		r := &a.reqs[j]
		asked = r
		// Answered once the answer finished, or the client hung up on it
		// (having read what it needed: RFC 9309 asks a parser for the
		// first 500 KiB).
		if end := a.endOf(r); end.IsZero() || end.After(q.Arrived) {
			continue
		}
		if r.Status >= 300 && r.Status < 400 {
			// RFC 9309 §2.3.1.2: a crawler follows at least five
			// redirects, and may then take robots.txt as unavailable
			// (everything allowed).
			if redirects++; redirects >= RobotsRedirects {
				verdict = &robotsVerdict{by: r, agentRule: agentFor(a.p, q.Header.Get("User-Agent")), allowAll: true}
			}
			continue
		}
		redirects = 0
		key := verdictKey{j, agentFor(a.p, q.Header.Get("User-Agent"))}
		if a.verdicts[key] == nil {
			a.verdicts[key] = judgeRobots(a.p, r, key.agent)
		}
		verdict = a.verdicts[key]
	}
	return verdict, asked
}

// checkRobots: RuleRobotsFirst and RuleDisallowed, for a request that is
// not robots.txt itself.
func (a *auditor) checkRobots(host string, q *Request, verdict *robotsVerdict, asked *Request) {
	switch {
	case verdict == nil:
		v := Violation{Rule: RuleRobotsFirst, Host: host, Request: *q, At: q.Arrived, Detail: "robots.txt never requested before"}
		if asked != nil {
			o := *asked
			v.Other = &o
			v.Detail = "robots.txt requested but not yet answered"
		}
		a.add(v)
	case verdict.denyAll || (!verdict.allowAll && !verdict.rules.allowed(q.Target)):
		o := *verdict.by
		detail := fmt.Sprintf("robots.txt disallows %s for agent %q", q.Target, verdict.agentRule)
		if verdict.denyAll {
			detail = fmt.Sprintf("robots.txt answered %d: the whole site is off limits", verdict.by.Status)
		}
		a.add(Violation{Rule: RuleDisallowed, Host: host, Request: *q, At: q.Arrived, Other: &o, Detail: detail})
	}
}

// checkInterval: RuleInterval, start to start, lengthened by the
// Crawl-delay of the robots.txt in effect.
func (a *auditor) checkInterval(hv *hostView, i int, q *Request, verdict *robotsVerdict) {
	pi, ok := hv.startedBefore[i]
	need, why := a.p.Interval, "interval"
	if verdict != nil && !a.p.IgnoreCrawlDelay && verdict.rules.crawlDelay > need {
		need, why = verdict.rules.crawlDelay, "Crawl-delay"
	}
	if !ok || need <= 0 {
		return
	}
	prev := &a.reqs[pi]
	if gap := startOf(q).Sub(startOf(prev)); gap < need-a.p.Slack {
		o := *prev
		a.add(Violation{Rule: RuleInterval, Host: hv.host, Request: *q, Other: &o, At: startOf(q),
			NotBefore: startOf(prev).Add(need),
			Detail:    fmt.Sprintf("started %v after the previous start, %s is %v", gap.Round(time.Microsecond), why, need)})
	}
}

// checkInFlight: RuleInFlight, the host's requests unfinished when the
// k-th arrived.
func (a *auditor) checkInFlight(hv *hostView, k int, q *Request) {
	var busy []*Request
	for _, j := range hv.idx[:k] {
		r := &a.reqs[j]
		if end := a.endOf(r); end.IsZero() || end.After(q.Arrived) {
			busy = append(busy, r)
		}
	}
	if len(busy) >= a.p.maxInFlight() {
		o := *busy[0]
		a.add(Violation{Rule: RuleInFlight, Host: hv.host, Request: *q, Other: &o, At: q.Arrived,
			Detail: fmt.Sprintf("%d requests already in flight, at most %d allowed", len(busy), a.p.maxInFlight())})
	}
}

// endOf is when r stopped being in flight: when its answer finished, or
// its connection closed if that was earlier (a client that hung up on an
// answer it did not want is done with it, however long the web goes on
// writing). Zero: never.
func (a *auditor) endOf(r *Request) time.Time {
	end := r.Finished
	if c, ok := a.closed[r.Conn]; ok && r.Conn != 0 && (end.IsZero() || c.Before(end)) {
		end = c
	}
	return end
}

// checkCooldown: RuleCooldown, the latest-ending cool-down the host
// announced in an answer finished before the k-th request arrived.
func (a *auditor) checkCooldown(hv *hostView, k int, q *Request) {
	var until time.Time
	var by *Request
	var reason string
	for _, pos := range hv.coolPos {
		if pos >= k {
			break
		}
		r := &a.reqs[hv.idx[pos]]
		if !finishedBy(r, q.Arrived) {
			continue
		}
		if t, why := cooldownUntil(a.p, r); t.After(until) {
			until, by, reason = t, r, why
		}
	}
	if by != nil && q.Arrived.Before(until.Add(-a.p.Slack)) {
		o := *by
		a.add(Violation{Rule: RuleCooldown, Host: hv.host, Request: *q, Other: &o, At: q.Arrived, NotBefore: until,
			Detail: fmt.Sprintf("%v before the end of the cool-down (%s)", until.Sub(q.Arrived).Round(time.Millisecond), reason)})
	}
}

// connsByHost groups the connections whose host is known.
func connsByHost(conns []Conn) map[string][]Conn {
	m := map[string][]Conn{}
	for _, c := range conns {
		if c.Host != "" {
			m[c.Host] = append(m[c.Host], c)
		}
	}
	return m
}

// ConnReorder is how far the web's record of one connection's close may
// come after the next connection's opening, the old connection idle, and
// still count as a close before it. A client that closes its connection
// and then dials the next sends its FIN before its SYN, but the kernel
// stamps the two on different sockets, and on a loaded machine loopback
// packets queued on one CPU can be taken in after a later one queued on
// another: the hostile crawl showed a close recorded 5 ms after the next
// opening by a client that gives a host's connection slot back only once
// the old connection is closed. A second connection that is used while the
// first still carries requests, or that opens longer before the first
// closes, is still a violation.
const ConnReorder = 20 * time.Millisecond

// checkConnections: RuleConnections, connections open at once per host.
func (a *auditor) checkConnections(conns []Conn) {
	firstReq := map[int]*Request{}
	lastStart := map[int]time.Time{} // connection ID -> its last request's start
	for i := range a.reqs {
		r := &a.reqs[i]
		if r.Conn == 0 {
			continue
		}
		if _, ok := firstReq[r.Conn]; !ok {
			firstReq[r.Conn] = r
		}
		if s := startOf(r); s.After(lastStart[r.Conn]) {
			lastStart[r.Conn] = s
		}
	}
	for host, cs := range connsByHost(conns) {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Opened.Before(cs[j].Opened) })
		for k, c := range cs {
			var open []Conn
			for _, o := range cs[:k] {
				if !o.Closed.IsZero() && !o.Closed.After(c.Opened.Add(ConnReorder)) && !lastStart[o.ID].After(c.Opened) {
					continue // closed, or idle and its close recorded within ConnReorder of c's opening
				}
				if o.Closed.IsZero() || o.Closed.After(c.Opened) {
					open = append(open, o)
				}
			}
			if len(open) < a.p.maxConns() {
				continue
			}
			v := Violation{Rule: RuleConnections, Host: host, At: c.Opened,
				Detail: fmt.Sprintf("connection %d opened while %d were open (connection %d first), at most %d allowed", c.ID, len(open), open[0].ID, a.p.maxConns())}
			if r := firstReq[c.ID]; r != nil {
				v.Request = *r
			}
			if r := firstReq[open[0].ID]; r != nil {
				o := *r
				v.Other = &o
			}
			a.add(v)
		}
	}
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
