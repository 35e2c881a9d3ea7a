package politetest

import (
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const host = "news-1.example"

// auditCase drives a deliberately rude client and a careful one through the
// same site; the auditor must catch the rude one on rule and find nothing
// wrong with the careful one.
type auditCase struct {
	name    string
	rule    Rule
	req     string // a requirement the rule enforces
	policy  func(*Policy)
	setup   func(s *Site)
	rude    func(t *testing.T, w *Web)
	careful func(t *testing.T, w *Web)
	// wantTarget, if set, is the target of the offending request; a list
	// separated by "|" accepts any of them.
	wantTarget string
}

func auditCases() []auditCase {
	u := func(p string) string { return "https://" + host + p }
	return []auditCase{
		{
			name: "interval", rule: RuleInterval, req: "S2 D2 V7",
			rude: func(t *testing.T, w *Web) {
				c := rudeClient(w)
				for _, p := range []string{"/robots.txt", "/feed.xml", "/atom.xml", "/sitemap.xml"} {
					rudeGet(t, c, u(p), politeHeaders())
				}
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				for _, path := range []string{"/robots.txt", "/feed.xml", "/atom.xml", "/sitemap.xml"} {
					p.get(t, u(path))
				}
			},
			// The first request on a connection starts when the connection is
			// accepted, so on a loaded machine the TLS handshake can push the feed
			// past the interval; then a later read is the first that offends.
			wantTarget: "/feed.xml|/atom.xml|/sitemap.xml",
		},
		{
			name: "crawl-delay", rule: RuleInterval, req: "D1 V11",
			setup: func(s *Site) {
				// A second: far above a round trip on a loaded machine, so
				// the rude client's gap (its round trip and its 20 ms) is
				// always short of it.
				s.SetRobots(Robots{Body: "User-agent: PoliteBot\nCrawl-delay: 1\n\nUser-agent: *\nDisallow:\n"})
			},
			rude: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond) // paces the interval but ignores Crawl-delay
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, time.Second)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
			},
			wantTarget: "/feed.xml",
		},
		{
			name: "in-flight", rule: RuleInFlight, req: "D2",
			setup: func(s *Site) {
				s.Misbehave("/feed.xml", Behaviour{Kind: SlowFirstByte, Delay: 100 * time.Millisecond})
			},
			rude: func(t *testing.T, w *Web) {
				c := rudeClient(w)
				rudeGet(t, c, u("/robots.txt"), politeHeaders())
				var wg sync.WaitGroup
				for range 2 {
					wg.Go(func() { rudeGet(t, c, u("/feed.xml"), politeHeaders()) })
				}
				wg.Wait()
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
				p.get(t, u("/feed.xml"))
			},
			wantTarget: "/feed.xml",
		},
		{
			name: "robots-first", rule: RuleRobotsFirst, req: "D1 V11",
			rude: func(t *testing.T, w *Web) {
				c := rudeClient(w)
				rudeGet(t, c, u("/feed.xml"), politeHeaders())
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
			},
			wantTarget: "/feed.xml",
		},
		{
			name: "robots-first-unanswered", rule: RuleRobotsFirst, req: "V11",
			setup: func(s *Site) {
				s.Misbehave("/robots.txt", Behaviour{Kind: SlowFirstByte, Delay: 150 * time.Millisecond})
			},
			rude: func(t *testing.T, w *Web) {
				c := rudeClient(w)
				var wg sync.WaitGroup
				wg.Go(func() { rudeGet(t, c, u("/robots.txt"), politeHeaders()) })
				// The rude client does not wait for the answer: it sends
				// the feed request once robots.txt has been asked.
				waitFor(t, w, 1)
				rudeGet(t, c, u("/feed.xml"), politeHeaders())
				wg.Wait()
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
			},
			wantTarget: "/feed.xml",
		},
		{
			name: "disallowed", rule: RuleDisallowed, req: "D1 S3 V11",
			setup: func(s *Site) {
				s.SetRobots(Robots{Body: "User-agent: *\nDisallow: /private/\nAllow: /private/ok$\n"})
				s.Handle("/private/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) }))
			},
			rude: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/private/secret"))
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/private/ok"))
				p.get(t, u("/feed.xml"))
			},
			wantTarget: "/private/secret",
		},
		{
			name: "disallowed-robots-5xx", rule: RuleDisallowed, req: "S3 V11",
			setup: func(s *Site) { s.SetRobots(Robots{Status: 503}) },
			rude: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/robots.txt")) // asks again; reads nothing else
			},
			wantTarget: "/feed.xml",
		},
		{
			name: "disallowed-robots-403-strict", rule: RuleDisallowed, req: "S3",
			policy: func(p *Policy) { p.StrictRobots = true },
			setup:  func(s *Site) { s.SetRobots(Robots{Status: 403}) },
			rude: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
			},
			wantTarget: "/feed.xml",
		},
		{
			name: "cooldown-retry-after-seconds", rule: RuleCooldown, req: "S4 D5",
			setup: func(s *Site) {
				s.Misbehave("/feed.xml", Behaviour{Kind: TooManyRequests, RetryAfter: time.Second, Times: 1})
			},
			rude: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
				p.get(t, u("/feed.xml"))
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				resp, _ := p.get(t, u("/feed.xml"))
				if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
					t.Fatalf("feed answered %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
				}
				p.pace(time.Second)
				if resp, _ := p.get(t, u("/feed.xml")); resp.StatusCode != 200 {
					t.Fatalf("after the cool-down the feed answered %d", resp.StatusCode)
				}
			},
			wantTarget: "/feed.xml",
		},
		{
			name: "cooldown-retry-after-date", rule: RuleCooldown, req: "S4",
			setup: func(s *Site) {
				s.Misbehave("/feed.xml", Behaviour{Kind: Unavailable, RetryAfter: time.Second, RetryAfterDate: true, Times: 1})
			},
			rude: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
				p.get(t, u("/atom.xml"))
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				resp, _ := p.get(t, u("/feed.xml"))
				until, err := http.ParseTime(resp.Header.Get("Retry-After"))
				if resp.StatusCode != 503 || err != nil {
					t.Fatalf("feed answered %d Retry-After %q (%v)", resp.StatusCode, resp.Header.Get("Retry-After"), err)
				}
				p.pace(time.Until(until) + time.Millisecond)
				p.get(t, u("/feed.xml"))
			},
			wantTarget: "/atom.xml",
		},
		{
			name: "cooldown-challenge", rule: RuleCooldown, req: "S4",
			policy: func(p *Policy) { p.ChallengeCooldown = 50 * time.Millisecond },
			setup:  func(s *Site) { s.Misbehave("*", Behaviour{Kind: Challenge, Times: 1}) },
			rude: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
				p.get(t, u("/feed.xml"))
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				if resp, _ := p.get(t, u("/feed.xml")); resp.Header.Get("cf-mitigated") != "challenge" {
					t.Fatalf("no challenge: %d %v", resp.StatusCode, resp.Header)
				}
				p.pace(50 * time.Millisecond)
				p.get(t, u("/feed.xml"))
			},
			wantTarget: "/feed.xml",
		},
		{
			name: "header", rule: RuleHeader, req: "V9",
			rude: func(t *testing.T, w *Web) {
				c := rudeClient(w)
				h := politeHeaders()
				h["Referer"] = "https://elsewhere.example/"
				h["X-Requested-With"] = "politetest"
				rudeGet(t, c, u("/robots.txt"), h)
			},
			careful: func(t *testing.T, w *Web) {
				newCareful(w, 20*time.Millisecond).get(t, u("/robots.txt"))
			},
			wantTarget: "/robots.txt",
		},
		{
			name: "header-transport-gzip", rule: RuleHeader, req: "V9",
			policy: func(p *Policy) { p.AllowedHeaders = []string{"User-Agent", "Accept"} },
			rude: func(t *testing.T, w *Web) {
				// Go's transport adds Accept-Encoding: gzip on its own.
				c := &http.Client{Transport: w.Transport()}
				rudeGet(t, c, u("/robots.txt"), map[string]string{"User-Agent": botUA, "Accept": "*/*"})
			},
			careful: func(t *testing.T, w *Web) {
				c := rudeClient(w) // DisableCompression: nothing added
				rudeGet(t, c, u("/robots.txt"), map[string]string{"User-Agent": botUA, "Accept": "*/*"})
			},
			wantTarget: "/robots.txt",
		},
		{
			name: "insecure", rule: RuleInsecure, req: "V10",
			policy: func(p *Policy) { p.HTTPSOnly = true },
			rude: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, "http://"+host+"/robots.txt")
				p.get(t, "http://"+host+"/feed.xml")
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
			},
			wantTarget: "/robots.txt",
		},
		{
			name: "cookie", rule: RuleCookie, req: "V9",
			setup: func(s *Site) { s.Misbehave("*", Behaviour{Kind: SetCookie}) },
			rude: func(t *testing.T, w *Web) {
				c := rudeClient(w)
				jar, _ := cookiejar.New(nil)
				c.Jar = jar
				p := &careful{c: c, interval: 20 * time.Millisecond}
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				if resp, _ := p.get(t, u("/feed.xml")); len(resp.Cookies()) == 0 {
					t.Fatal("the site set no cookie")
				}
			},
			wantTarget: "/feed.xml",
		},
		{
			name: "user-agent", rule: RuleUserAgent, req: "S1 D3",
			rude: func(t *testing.T, w *Web) {
				c := rudeClient(w)
				for _, ua := range []string{"", "curl/8.5.0", "python-requests/2.31.0", "OtherBot/1.0 (+https://other.example)"} {
					rudeGet(t, c, u("/robots.txt"), map[string]string{"User-Agent": ua, "Accept": "*/*"})
					p := &careful{last: time.Now()}
					p.pace(20 * time.Millisecond)
				}
				req, _ := http.NewRequest(http.MethodGet, u("/robots.txt"), nil) // Go's default UA
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			},
			careful: func(t *testing.T, w *Web) {
				newCareful(w, 20*time.Millisecond).get(t, u("/robots.txt"))
			},
			wantTarget: "/robots.txt",
		},
		{
			name: "connections", rule: RuleConnections, req: "D2",
			rude: func(t *testing.T, w *Web) {
				a := newCareful(w, 20*time.Millisecond)
				b := newCareful(w, 20*time.Millisecond)
				a.get(t, u("/robots.txt"))
				b.last = a.last
				b.get(t, u("/feed.xml")) // a's connection is still open (idle)
			},
			careful: func(t *testing.T, w *Web) {
				p := newCareful(w, 20*time.Millisecond)
				p.get(t, u("/robots.txt"))
				p.get(t, u("/feed.xml"))
			},
			wantTarget: "/feed.xml",
		},
	}
}

// waitFor blocks until the web has recorded n requests (polling the log the
// test reads anyway; no fixed sleep).
func waitFor(t *testing.T, w *Web, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(w.Requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the web never recorded %d requests", n)
		}
		tick := time.NewTimer(time.Millisecond)
		<-tick.C
	}
}

func TestAuditCatchesEachRule(t *testing.T) {
	t.Parallel()
	covered := map[Rule]bool{}
	for _, tc := range auditCases() {
		covered[tc.rule] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pol := testPolicy()
			if tc.policy != nil {
				tc.policy(&pol)
			}
			t.Run("rude", func(t *testing.T) {
				t.Parallel()
				w := NewWeb(t)
				if s := w.Site(host); tc.setup != nil {
					tc.setup(s)
				}
				tc.rude(t, w)
				rep := w.Audit(pol)
				vs := rep.Of(tc.rule)
				if len(vs) == 0 {
					t.Fatalf("%s (%s): the auditor missed it:\n%s", tc.rule, tc.req, rep)
				}
				v := vs[0]
				if v.Host != host || v.Request.Seq == 0 || v.At.IsZero() || v.Detail == "" {
					t.Errorf("violation lacks host, request, time or detail: %+v", v)
				}
				if tc.wantTarget != "" && !slices.Contains(strings.Split(tc.wantTarget, "|"), v.Request.Target) {
					t.Errorf("violation names %s, want %s:\n%s", v.Request.Target, tc.wantTarget, rep)
				}
				if rep.ByHost[host] < len(vs) || rep.OK() {
					t.Errorf("summary counts wrong: ByHost %v, %d violations of %s", rep.ByHost, len(vs), tc.rule)
				}
			})
			t.Run("careful", func(t *testing.T) {
				t.Parallel()
				w := NewWeb(t)
				if s := w.Site(host); tc.setup != nil {
					tc.setup(s)
				}
				tc.careful(t, w)
				if rep := w.Audit(pol); !rep.OK() {
					t.Fatalf("careful client judged rude:\n%s", rep)
				}
			})
		})
	}
	for _, r := range Rules() {
		if !covered[r] {
			t.Errorf("no test case for rule %s", r)
		}
	}
}

func TestAuditDetailsAndPolicyKnobs(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	w.Site(host).SetRobots(Robots{Status: 403})
	a := newCareful(w, 20*time.Millisecond)
	b := newCareful(w, 20*time.Millisecond)
	a.get(t, "https://"+host+"/robots.txt")
	b.last = a.last
	b.get(t, "https://"+host+"/feed.xml")

	// V11: a 4xx robots.txt counts as absent unless the policy is strict.
	pol := testPolicy()
	pol.MaxConnsPerHost = 2
	if rep := w.Audit(pol); !rep.OK() {
		t.Fatalf("lenient policy with two connections allowed judged rude:\n%s", rep)
	}
	pol.StrictRobots = true
	pol.MaxConnsPerHost = 0
	rep := w.Audit(pol)
	if rep.Count(RuleDisallowed) != 1 || rep.Count(RuleConnections) != 1 || len(rep.Violations) != 2 {
		t.Fatalf("strict policy: want one disallowed and one connections violation:\n%s", rep)
	}
	if rep.Requests != 2 || rep.Hosts != 1 || rep.ByHost[host] != 2 {
		t.Fatalf("summary: requests %d hosts %d by host %v", rep.Requests, rep.Hosts, rep.ByHost)
	}
	s := rep.String()
	for _, want := range []string{"2 violations", "disallowed=1", "connections=1", host + "=2", "#2 GET /feed.xml", "robots.txt answered 403"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	pol.Ignore = []Rule{RuleDisallowed, RuleConnections}
	if rep := w.Audit(pol); !rep.OK() {
		t.Fatalf("ignored rules still reported:\n%s", rep)
	}
	w.Reset()
	if n := len(w.Requests()); n != 0 {
		t.Fatalf("Reset left %d requests", n)
	}
	if rep := w.Audit(Policy{}); !rep.OK() || rep.Requests != 0 {
		t.Fatalf("audit after Reset:\n%s", rep)
	}
}
