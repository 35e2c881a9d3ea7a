package politetest

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// Hostile returns the hostile scenario: hosts sites, three articles each,
// every answer 1 to 5 ms late, four in five sites rude, and the rude sites
// dealt the traits of [HostileTraits] in turn, so that every misbehaviour
// of a hostile web is on some site at once (once four fifths of hosts,
// rounded, reaches len(HostileTraits)), beside well-behaved sites. The
// same seed and hosts always build the same web.
//
// A crawler that survives it politely sends nothing the auditor flags,
// stops at every bound, and still reads the well-behaved sites' articles
// (those whose [SiteInfo.Readable] is set).
func Hostile(seed int64, hosts int) Scenario {
	return Scenario{
		Hosts:           hosts,
		ArticlesPerHost: 3,
		Latency:         [2]time.Duration{time.Millisecond, 5 * time.Millisecond},
		RudeShare:       0.8,
		Traits:          HostileTraits(),
		Seed:            seed,
	}
}

// HostileTraits lists every trait a rude site of a [Scenario] may show
// (the five of [RudeTraits] first). "Articles" means every article's page;
// "the feed" /feed.xml and /atom.xml. Two more sites are built for the
// traits to point at (see [ScenarioInfo.Others]): elsewhere.<domain>, a
// host no source of the site admits, and intranet.<domain>, which resolves
// to the private address 10.0.0.1 (see [Site.ResolveTo]).
//
// Refusals and cool-downs:
//
//	429                  the feed answers 429, Retry-After 120 (seconds)
//	503                  the feed answers 503, Retry-After as an HTTP-date 10 min ahead
//	challenge            every path but robots.txt answers a Cloudflare-like challenge page (403)
//	articles-429         articles answer 429, Retry-After 60
//	articles-challenge   articles answer a challenge page with status 503
//	retry-after-forever  the feed answers 503, Retry-After 1000000000 (about 32 years)
//	retry-after-garbage  the feed answers 429, Retry-After "soon"
//	forbidden            every path but robots.txt answers 403
//	unauthorized         every path but robots.txt answers 401 with a WWW-Authenticate challenge
//	server-error         articles answer 500
//
// robots.txt:
//
//	robots-5xx           robots.txt answers 503 (the whole site is off limits)
//	disallow             robots.txt disallows /news/, where the articles live
//	robots-403           robots.txt answers 403 (allowed under RFC 9309, off limits under a strict policy)
//	robots-timeout       robots.txt never answers
//	robots-reset         robots.txt resets the connection
//	robots-redirect-loop robots.txt redirects to itself and back, forever
//	robots-huge          robots.txt allows everything, then 2 MiB of comments
//	robots-gzip-bomb     robots.txt is a gzip body inflating to 64 MiB
//	robots-html          robots.txt answers 200 with an HTML page (no rules: everything allowed)
//	crawl-delay-huge     robots.txt asks for a Crawl-delay of 86400 (a day)
//
// Bodies and headers:
//
//	gzip-bomb            articles are gzip bodies inflating to 64 MiB
//	oversize             articles are 32 MiB pages
//	endless-body         articles are pages that never end (no Content-Length)
//	trickle              the first article arrives 16 bytes every 50 ms
//	hang                 the feed never answers
//	truncate             articles declare their length and send half
//	unknown-encoding     articles come in Content-Encoding x-politetest
//	corrupt-gzip         articles say Content-Encoding gzip and are not
//	no-content-type      articles have no Content-Type
//	wrong-content-type   the feed is labelled image/png, articles application/octet-stream
//	malformed-feed       the feed is cut in half (complete on the wire, broken XML)
//	huge-header          the feed carries a 2 MiB header line
//
// Redirects:
//
//	redirect-loop        articles redirect to themselves and back, forever
//	redirect-chain       articles redirect 12 times before answering
//	redirect-to-http     the feed redirects to plain http
//	redirect-off-site    articles redirect to elsewhere.<domain>
//	redirect-to-private  articles redirect to intranet.<domain> (10.0.0.1)
//	redirect-to-metadata articles redirect to https://169.254.169.254/latest/meta-data/
//	redirect-to-loopback articles redirect to https://127.0.0.1/…
//	redirect-to-ftp      articles redirect to ftp://<site>/…
//	redirect-add-tracking articles redirect to themselves plus utm_source=politetest
//
// Links and lists (the articles stay readable):
//
//	duplicate-links      the RSS feed lists each article 4 times (tracking parameters, a fragment, the host in upper case)
//	foreign-links        the RSS feed also links off-site, to private, link-local and loopback addresses, other schemes, and a 16 KiB URL
//	endless-pages        the WordPress-like post list ignores page= and claims a million pages
//
// Connections:
//
//	reset                articles reset the connection (TCP RST)
//	hang-up              articles close the connection cleanly without answering
//	set-cookie           every answer sets a cookie
//	close-connection     every answer closes its connection
func HostileTraits() []string {
	out := make([]string, len(traitTable))
	for i, t := range traitTable {
		out[i] = t.name
	}
	return out
}

// trait is one way a rude site misbehaves.
type trait struct {
	name string
	// readable: a polite crawler reading the RSS feed can still deposit
	// every article, whatever its policy.
	readable bool
	apply    func(b *traitBuild)
}

// traitBuild is what a trait may change of the site being built.
type traitBuild struct {
	s        *Site
	si       *SiteInfo
	robots   *Robots
	sitemap  string   // robots.txt's Sitemap line, with its blank line before
	articles []string // the articles' paths
	domain   string
}

func (b *traitBuild) feed(x Behaviour) {
	b.s.Misbehave("/feed.xml", x)
	b.s.Misbehave("/atom.xml", x)
}

func (b *traitBuild) eachArticle(x Behaviour) {
	for _, p := range b.articles {
		b.s.Misbehave(p, x)
	}
}

func (b *traitBuild) eachArticleTo(target func(path string) string) {
	for _, p := range b.articles {
		b.s.Misbehave(p, Behaviour{Kind: RedirectTo, Location: target(p)})
	}
}

func (b *traitBuild) robotsKind(kind string, disallowed ...string) {
	b.si.Robots = kind
	b.si.Disallowed = disallowed
}

// The names of the two sites the traits point at.
func elsewhereHost(domain string) string { return "elsewhere." + domain }
func intranetHost(domain string) string  { return "intranet." + domain }

// intranetAddr is where intranet.<domain> resolves.
var intranetAddr = netip.MustParseAddr("10.0.0.1")

var traitTable = []trait{
	{name: "429", apply: func(b *traitBuild) {
		b.feed(Behaviour{Kind: TooManyRequests, RetryAfter: 120 * time.Second})
	}},
	{name: "503", apply: func(b *traitBuild) {
		b.feed(Behaviour{Kind: Unavailable, RetryAfter: 10 * time.Minute, RetryAfterDate: true})
	}},
	{name: "challenge", apply: func(b *traitBuild) { b.s.Misbehave("*", Behaviour{Kind: Challenge}) }},
	{name: "robots-5xx", apply: func(b *traitBuild) {
		*b.robots = Robots{Status: 503, Body: "Service Unavailable\n"}
		b.robotsKind("5xx", "/")
	}},
	{name: "disallow", apply: func(b *traitBuild) {
		b.robots.Body = "User-agent: *\nDisallow: /news/\n" + b.sitemap
		b.robotsKind("disallow-articles", "/news/")
	}},

	{name: "articles-429", apply: func(b *traitBuild) {
		b.eachArticle(Behaviour{Kind: TooManyRequests, RetryAfter: time.Minute})
	}},
	{name: "articles-challenge", apply: func(b *traitBuild) {
		b.eachArticle(Behaviour{Kind: Challenge, Status: 503})
	}},
	{name: "retry-after-forever", apply: func(b *traitBuild) {
		b.feed(Behaviour{Kind: Unavailable, RetryAfter: 1_000_000_000 * time.Second})
	}},
	{name: "retry-after-garbage", apply: func(b *traitBuild) {
		b.feed(Behaviour{Kind: TooManyRequests, RetryAfterText: "soon"})
	}},
	{name: "forbidden", apply: func(b *traitBuild) { b.s.Misbehave("*", Behaviour{Kind: Forbidden}) }},
	{name: "unauthorized", apply: func(b *traitBuild) { b.s.Misbehave("*", Behaviour{Kind: Unauthorized}) }},
	{name: "server-error", apply: func(b *traitBuild) { b.eachArticle(Behaviour{Kind: ServerError}) }},

	{name: "robots-403", apply: func(b *traitBuild) {
		*b.robots = Robots{Status: 403, Body: "Forbidden\n"}
		b.robotsKind("403")
	}},
	{name: "robots-timeout", apply: func(b *traitBuild) {
		*b.robots = Robots{Failure: FailTimeout}
		b.robotsKind("timeout", "/")
	}},
	{name: "robots-reset", apply: func(b *traitBuild) {
		*b.robots = Robots{Failure: FailReset}
		b.robotsKind("reset", "/")
	}},
	{name: "robots-redirect-loop", apply: func(b *traitBuild) {
		b.s.Misbehave("/robots.txt", Behaviour{Kind: RedirectLoop})
		b.robotsKind("redirect-loop")
	}},
	{name: "robots-huge", apply: func(b *traitBuild) {
		b.robots.Body = "User-agent: *\nAllow: /\n" + b.sitemap + strings.Repeat("# politetest padding, a comment line of sixty-four bytes......\n", 2<<20/64)
		b.robotsKind("huge")
	}},
	{name: "robots-gzip-bomb", apply: func(b *traitBuild) {
		b.s.Misbehave("/robots.txt", Behaviour{Kind: GzipBomb})
		b.robotsKind("gzip-bomb")
	}},
	{name: "robots-html", readable: true, apply: func(b *traitBuild) {
		b.robots.Body = "<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body><p>Nothing to see here.</p></body></html>\n"
		b.robotsKind("html")
	}},
	{name: "crawl-delay-huge", apply: func(b *traitBuild) {
		b.robots.Body = "User-agent: *\nCrawl-delay: 86400\nAllow: /\n" + b.sitemap
		b.robotsKind("crawl-delay-huge")
		b.si.CrawlDelay = 24 * time.Hour
	}},

	{name: "gzip-bomb", apply: func(b *traitBuild) { b.eachArticle(Behaviour{Kind: GzipBomb}) }},
	{name: "oversize", apply: func(b *traitBuild) { b.eachArticle(Behaviour{Kind: Oversize}) }},
	{name: "endless-body", apply: func(b *traitBuild) { b.eachArticle(Behaviour{Kind: Endless}) }},
	{name: "trickle", apply: func(b *traitBuild) {
		if len(b.articles) > 0 { // one is enough to hold a reader for its whole time-out
			b.s.Misbehave(b.articles[0], Behaviour{Kind: Trickle})
		}
	}},
	{name: "hang", apply: func(b *traitBuild) { b.feed(Behaviour{Kind: Hang}) }},
	{name: "truncate", apply: func(b *traitBuild) { b.eachArticle(Behaviour{Kind: Truncate}) }},
	{name: "unknown-encoding", apply: func(b *traitBuild) { b.eachArticle(Behaviour{Kind: UnknownEncoding}) }},
	{name: "corrupt-gzip", apply: func(b *traitBuild) {
		b.eachArticle(Behaviour{Kind: UnknownEncoding, Encoding: "gzip"})
	}},
	{name: "no-content-type", apply: func(b *traitBuild) { b.eachArticle(Behaviour{Kind: NoContentType}) }},
	{name: "wrong-content-type", apply: func(b *traitBuild) {
		b.feed(Behaviour{Kind: WrongContentType, ContentType: "image/png"})
		b.eachArticle(Behaviour{Kind: WrongContentType})
	}},
	{name: "malformed-feed", apply: func(b *traitBuild) { b.feed(Behaviour{Kind: Malformed}) }},
	{name: "huge-header", apply: func(b *traitBuild) { b.feed(Behaviour{Kind: HugeHeader, Size: 2 << 20}) }},

	{name: "redirect-loop", apply: func(b *traitBuild) { b.eachArticle(Behaviour{Kind: RedirectLoop}) }},
	{name: "redirect-chain", apply: func(b *traitBuild) { b.eachArticle(Behaviour{Kind: RedirectChain, Hops: 12}) }},
	{name: "redirect-to-http", apply: func(b *traitBuild) { b.feed(Behaviour{Kind: RedirectToHTTP}) }},
	{name: "redirect-off-site", apply: func(b *traitBuild) {
		b.eachArticleTo(func(p string) string { return "https://" + elsewhereHost(b.domain) + p })
	}},
	{name: "redirect-to-private", apply: func(b *traitBuild) {
		b.eachArticleTo(func(p string) string { return "https://" + intranetHost(b.domain) + p })
	}},
	{name: "redirect-to-metadata", apply: func(b *traitBuild) {
		b.eachArticleTo(func(string) string { return "https://169.254.169.254/latest/meta-data/" })
	}},
	{name: "redirect-to-loopback", apply: func(b *traitBuild) {
		b.eachArticleTo(func(p string) string { return "https://127.0.0.1" + p })
	}},
	{name: "redirect-to-ftp", apply: func(b *traitBuild) {
		b.eachArticleTo(func(p string) string { return "ftp://" + b.s.Name() + p })
	}},
	{name: "redirect-add-tracking", apply: func(b *traitBuild) {
		b.eachArticle(Behaviour{Kind: RedirectAddParam})
	}},

	{name: "duplicate-links", readable: true, apply: func(b *traitBuild) {
		b.s.Misbehave("/feed.xml", Behaviour{Kind: DuplicateLinks})
	}},
	{name: "foreign-links", readable: true, apply: func(b *traitBuild) {
		b.s.Misbehave("/feed.xml", Behaviour{Kind: ForeignLinks, Host: elsewhereHost(b.domain)})
	}},
	{name: "endless-pages", readable: true, apply: func(b *traitBuild) {
		b.s.Misbehave("/wp-json/wp/v2/posts", Behaviour{Kind: EndlessPages})
	}},

	{name: "reset", apply: func(b *traitBuild) { b.eachArticle(Behaviour{Kind: Reset}) }},
	{name: "hang-up", apply: func(b *traitBuild) { b.eachArticle(Behaviour{Kind: HangUp}) }},
	{name: "set-cookie", readable: true, apply: func(b *traitBuild) { b.s.Misbehave("*", Behaviour{Kind: SetCookie}) }},
	{name: "close-connection", readable: true, apply: func(b *traitBuild) {
		b.s.Misbehave("*", Behaviour{Kind: CloseConnection})
	}},
}

// traitNamed returns the trait called name.
func traitNamed(name string) (trait, bool) {
	for _, t := range traitTable {
		if t.name == name {
			return t, true
		}
	}
	return trait{}, false
}

// buildOthers makes the two sites the traits point at.
func buildOthers(w *Web, domain string) []string {
	names := []string{elsewhereHost(domain), intranetHost(domain)}
	for _, n := range names {
		s := w.Site(n)
		s.SetRobots(Robots{Body: "User-agent: *\nAllow: /\n"})
		s.SetLatency(0, 0)
	}
	w.Site(intranetHost(domain)).ResolveTo(intranetAddr)
	return names
}

// checkTraits says what is wrong with a Scenario's Traits, or "".
func checkTraits(traits []string) string {
	if traits != nil && len(traits) == 0 {
		return "is empty: a rude site needs a trait to show (nil: RudeTraits)"
	}
	for _, n := range traits {
		if _, ok := traitNamed(n); !ok {
			return fmt.Sprintf("names %q: not one of HostileTraits", n)
		}
	}
	return ""
}
