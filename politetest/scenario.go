package politetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Scenario describes a whole web in a few numbers; [Scenario.Build] makes it.
// The same Scenario (Seed included) always builds the same web. Every field
// means what it says: a value that cannot describe a web (no sites, a
// negative count or latency, a share outside 0–1) is a *[ScenarioError],
// never a silent default. Hosts must be set; the other zero values mean no
// articles, no latency, no rude sites, robots.txt allowing everything, and
// the "example" domain.
type Scenario struct {
	// Hosts is the number of sites, named "news-1.example" …; at least 1.
	Hosts int
	// ArticlesPerHost is the number of articles on each site; 0 or more.
	ArticlesPerHost int
	// Latency is the [min, max] range of every answer's added latency:
	// neither negative, min not above max.
	Latency [2]time.Duration
	// RudeShare is the share (0–1) of sites that misbehave: each rude site
	// gets one trait, drawn from [RudeTraits] when Traits is nil.
	RudeShare float64
	// Traits, if not nil, lists the traits the rude sites show (each a
	// name from [HostileTraits]), dealt in turn in an order the seed
	// shuffles, so that each is shown once there are as many rude sites
	// as traits. nil: each rude site draws one of [RudeTraits].
	Traits []string
	// RobotsMix sets the robots.txt of the well-behaved sites.
	RobotsMix RobotsMix
	// Seed makes the choices; the same seed builds the same web.
	Seed int64
	// Domain is the names' suffix. "": "example".
	Domain string
	// Furniture is the bytes of page furniture (navigation, inline
	// scripts) each article page carries beyond its story (see
	// [Article.Furniture]); 0: none, so pages are about 1.2 KB. Real news
	// pages weigh 50 to 200 KB. At most 8 MiB.
	Furniture int
	// Now, when set, is the web's clock: articles are dated in the hours
	// before it, the newest in the last hour, as a live site's are, so a
	// digest of "today's" stories finds them. Zero: articles are dated from
	// 2026-01-01, and the same seed builds the same web byte for byte.
	Now time.Time
}

// RobotsMix gives the shares (each 0–1, summing to at most 1) of
// well-behaved sites whose robots.txt is of each kind; the rest allow
// everything.
type RobotsMix struct {
	// Disallow: "Disallow: /private/" and "Disallow: /search" for everyone.
	Disallow float64
	// CrawlDelay: "Crawl-delay: N" for everyone, N being CrawlDelaySeconds.
	CrawlDelay float64
	// CrawlDelaySeconds is the Crawl-delay those sites ask for, in whole
	// seconds. 0: 1.
	CrawlDelaySeconds int
	// Missing: robots.txt answers 404 (everything allowed).
	Missing float64
	// Redirect: robots.txt is reached through two redirects.
	Redirect float64
}

// RudeTraits lists what a rude site of a Scenario may do, one trait per
// site:
//
//	429         /feed.xml and /atom.xml answer 429, Retry-After 120 (seconds)
//	503         /feed.xml and /atom.xml answer 503, Retry-After as an HTTP-date 10 min ahead
//	challenge   every path but robots.txt answers a Cloudflare-like challenge page (403)
//	robots-5xx  robots.txt answers 503 (the whole site is off limits)
//	disallow    robots.txt disallows /news/, where the articles live
func RudeTraits() []string {
	return []string{"429", "503", "challenge", "robots-5xx", "disallow"}
}

// ScenarioInfo says what a Scenario built: which site is what, so a test
// can assert on it.
type ScenarioInfo struct {
	// Seed is the scenario's seed.
	Seed int64
	// Sites lists the sites in name order (news-1, news-2, …).
	Sites []SiteInfo
	// Others names the sites built for the traits to point at (see
	// [HostileTraits]), nil when no trait needs them. They have no
	// articles, and no source of a site in Sites should admit them.
	Others []string
}

// SiteInfo describes one site a Scenario built.
type SiteInfo struct {
	// Name is the host name.
	Name string
	// Rude reports whether the site misbehaves; Trait says how (one of
	// [HostileTraits], "" for a well-behaved site).
	Rude  bool
	Trait string
	// Readable reports that nothing the site does stands in the way of a
	// polite crawler, under any policy, reading every article it learns
	// from the RSS feed: true for every well-behaved site and for the
	// traits that leave the articles alone (duplicate or foreign links,
	// cookies, closed connections, …).
	Readable bool
	// Robots names the robots.txt kind: "allow-all", "disallow",
	// "crawl-delay", "missing", "redirect", or for rude sites "5xx",
	// "disallow-articles", or the robots.txt traits' own ("403",
	// "timeout", "reset", "redirect-loop", "huge", "gzip-bomb", "html",
	// "crawl-delay-huge").
	Robots string
	// RobotsBody is what robots.txt says (when it answers 200).
	RobotsBody string
	// Disallowed lists the path prefixes robots.txt disallows.
	Disallowed []string
	// CrawlDelay is robots.txt's Crawl-delay (0 if none).
	CrawlDelay time.Duration
	// Latency is the site's [min, max] added latency.
	Latency [2]time.Duration
	// Articles are the site's articles, as published.
	Articles []Article
}

// Site returns the description of the named site, or nil.
func (si *ScenarioInfo) Site(name string) *SiteInfo {
	name = canonicalHost(name)
	for i := range si.Sites {
		if si.Sites[i].Name == name {
			return &si.Sites[i]
		}
	}
	return nil
}

// Rude returns the rude sites.
func (si *ScenarioInfo) Rude() []SiteInfo {
	var out []SiteInfo
	for _, s := range si.Sites {
		if s.Rude {
			out = append(out, s)
		}
	}
	return out
}

// Names returns every site's name, in order.
func (si *ScenarioInfo) Names() []string {
	out := make([]string, len(si.Sites))
	for i, s := range si.Sites {
		out[i] = s.Name
	}
	return out
}

// String is one compact line per site: name, articles, robots kind, rude
// trait.
func (si *ScenarioInfo) String() string {
	var b strings.Builder
	for _, s := range si.Sites {
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// String describes the site on one line.
func (s SiteInfo) String() string {
	line := fmt.Sprintf("%-20s %3d articles  robots=%s", s.Name, len(s.Articles), s.Robots)
	if s.CrawlDelay > 0 {
		line += fmt.Sprintf(" (crawl-delay %v)", s.CrawlDelay)
	}
	if s.Latency[1] > 0 {
		line += fmt.Sprintf("  latency %v–%v", s.Latency[0], s.Latency[1])
	}
	if s.Rude {
		line += "  RUDE: " + s.Trait
	}
	return line
}

// ErrScenario is matched (with errors.Is) by every *[ScenarioError].
var ErrScenario = errors.New("politetest: impossible scenario")

// ScenarioError reports a Scenario field whose value cannot describe a web.
type ScenarioError struct {
	Field  string // the field, such as "Hosts" or "RobotsMix.Missing"
	Reason string // what is wrong with its value
}

// Error implements error.
func (e *ScenarioError) Error() string {
	return "politetest: impossible scenario: " + e.Field + " " + e.Reason
}

// Unwrap returns ErrScenario.
func (e *ScenarioError) Unwrap() error { return ErrScenario }

// Validate returns a *[ScenarioError] for the first field that cannot
// describe a web, or nil.
func (sc Scenario) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &ScenarioError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	share := func(f float64) bool { return f >= 0 && f <= 1 } // false for NaN
	m := sc.RobotsMix
	switch {
	case sc.Hosts < 1:
		return bad("Hosts", "is %d: a web needs at least one site", sc.Hosts)
	case sc.ArticlesPerHost < 0:
		return bad("ArticlesPerHost", "is %d: not a number of articles", sc.ArticlesPerHost)
	case sc.Furniture < 0 || sc.Furniture > 8<<20:
		return bad("Furniture", "is %d: a page's furniture is 0 to 8 MiB", sc.Furniture)
	case sc.Latency[0] < 0 || sc.Latency[1] < 0:
		return bad("Latency", "is %v: a latency cannot be negative", sc.Latency)
	case sc.Latency[0] > sc.Latency[1]:
		return bad("Latency", "is %v: its minimum is above its maximum", sc.Latency)
	case !share(sc.RudeShare):
		return bad("RudeShare", "is %v: a share is between 0 and 1", sc.RudeShare)
	case !share(m.Disallow):
		return bad("RobotsMix.Disallow", "is %v: a share is between 0 and 1", m.Disallow)
	case m.CrawlDelaySeconds < 0 || m.CrawlDelaySeconds > 60:
		return bad("RobotsMix.CrawlDelaySeconds", "is %d: a Crawl-delay is 1 to 60 seconds (0 means 1)", m.CrawlDelaySeconds)
	case !share(m.CrawlDelay):
		return bad("RobotsMix.CrawlDelay", "is %v: a share is between 0 and 1", m.CrawlDelay)
	case !share(m.Missing):
		return bad("RobotsMix.Missing", "is %v: a share is between 0 and 1", m.Missing)
	case !share(m.Redirect):
		return bad("RobotsMix.Redirect", "is %v: a share is between 0 and 1", m.Redirect)
	case m.Disallow+m.CrawlDelay+m.Missing+m.Redirect > 1+1e-9:
		return bad("RobotsMix", "shares sum to %v: more than every site", m.Disallow+m.CrawlDelay+m.Missing+m.Redirect)
	}
	if why := checkTraits(sc.Traits); why != "" {
		return bad("Traits", "%s", why)
	}
	if d := strings.Trim(sc.Domain, "."); d != "" && !validDomain(d) {
		return bad("Domain", "is %q: not a domain name", sc.Domain)
	}
	return nil
}

// validDomain reports whether d is dot-separated labels of letters, digits
// and hyphens, none empty, none starting or ending with a hyphen.
func validDomain(d string) bool {
	for _, l := range strings.Split(d, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return len(d) <= 253
}

// Build creates the scenario's sites on w and says what it built. Sites
// that already exist on w are reconfigured. A Scenario that does not
// [Scenario.Validate] builds nothing and returns its *[ScenarioError].
func (sc Scenario) Build(w *Web) (*ScenarioInfo, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	hosts, per, lat := sc.Hosts, sc.ArticlesPerHost, sc.Latency
	domain := strings.Trim(sc.Domain, ".")
	if domain == "" {
		domain = "example"
	}
	rng := rand.New(rand.NewPCG(uint64(sc.Seed), 0x706f6c6974657465))

	// Exactly round(RudeShare × hosts) rude sites, chosen by the seed.
	rude := make([]bool, hosts)
	nRude := int(sc.RudeShare*float64(hosts) + 0.5)
	for _, i := range rng.Perm(hosts)[:min(nRude, hosts)] {
		rude[i] = true
	}
	traits, deal := RudeTraits(), false
	if sc.Traits != nil {
		traits, deal = nil, true
		for _, i := range rng.Perm(len(sc.Traits)) {
			traits = append(traits, sc.Traits[i])
		}
	}
	sections := []string{"news"}

	info := &ScenarioInfo{Seed: sc.Seed}
	dealt := 0
	for i := 0; i < hosts; i++ {
		name := "news-" + strconv.Itoa(i+1) + "." + domain
		s := w.Site(name)
		si := SiteInfo{Name: name, Latency: lat}
		s.SetLatency(lat[0], lat[1])
		paths := make([]string, per)
		for j := range paths {
			paths[j] = fmt.Sprintf("/%s/article-%d/", sections[0], j+1)
		}
		for _, p := range append([]string{"*", "/feed.xml", "/atom.xml", "/robots.txt", "/wp-json/wp/v2/posts"}, paths...) {
			s.Misbehave(p, Behaviour{})
		}

		sitemap := "\nSitemap: https://" + name + "/sitemap_index.xml\n"
		robots := Robots{Body: "User-agent: *\nAllow: /\n" + sitemap}
		si.Robots = "allow-all"
		if rude[i] {
			si.Rude = true
			if deal {
				si.Trait = traits[dealt%len(traits)]
				dealt++
			} else {
				si.Trait = traits[rng.IntN(len(traits))]
			}
			t, _ := traitNamed(si.Trait)
			si.Readable = t.readable
			t.apply(&traitBuild{s: s, si: &si, robots: &robots, sitemap: sitemap, articles: paths, domain: domain})
		} else {
			si.Readable = true
			x := rng.Float64()
			m := sc.RobotsMix
			switch {
			case x < m.Disallow:
				robots.Body = "User-agent: *\nDisallow: /private/\nDisallow: /search\n" + sitemap
				si.Robots = "disallow"
				si.Disallowed = []string{"/private/", "/search"}
			case x < m.Disallow+m.CrawlDelay:
				secs := max(m.CrawlDelaySeconds, 1)
				robots.Body = fmt.Sprintf("User-agent: *\nCrawl-delay: %d\nAllow: /\n", secs) + sitemap
				si.Robots = "crawl-delay"
				si.CrawlDelay = time.Duration(secs) * time.Second
			case x < m.Disallow+m.CrawlDelay+m.Missing:
				robots = Robots{Status: 404, Body: "Not Found\n"}
				si.Robots = "missing"
			case x < m.Disallow+m.CrawlDelay+m.Missing+m.Redirect:
				robots.Redirects = 2
				si.Robots = "redirect"
			}
		}
		s.SetRobots(robots)
		if robots.Status == 0 || robots.Status == 200 {
			si.RobotsBody = robots.Body
		}

		epoch := articleEpoch
		if !sc.Now.IsZero() {
			epoch = sc.Now.Add(-time.Duration(per+1) * time.Hour).Truncate(time.Second)
		}
		for j := 1; j <= per; j++ {
			section := sections[0]
			published := epoch.Add(time.Duration(j)*time.Hour + time.Duration(rng.IntN(3600))*time.Second)
			a := s.AddArticle(Article{
				ID:        j,
				Path:      paths[j-1],
				Title:     fmt.Sprintf("Story %d from %s", j, name),
				Section:   section,
				Published: published,
				Furniture: sc.Furniture,
			})
			si.Articles = append(si.Articles, a)
		}
		info.Sites = append(info.Sites, si)
	}
	if deal {
		info.Others = buildOthers(w, domain)
	}
	return info, nil
}

// NewScenarioWeb starts a Web for a test (see [NewWeb]) and builds sc on it.
// It fails the test if sc does not [Scenario.Validate].
func NewScenarioWeb(tb testing.TB, sc Scenario) (*Web, *ScenarioInfo) {
	tb.Helper()
	if err := sc.Validate(); err != nil {
		tb.Fatal(err)
	}
	w := NewWeb(tb)
	info, err := sc.Build(w)
	if err != nil {
		tb.Fatal(err)
	}
	return w, info
}
