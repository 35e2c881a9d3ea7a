// Package politetest is a simulated web of publishers and a politeness
// referee, for testing crawlers the way [net/http/httptest] tests handlers.
//
// A [Web] is one loopback HTTPS server (HTTP/1.1, with its own throwaway CA
// and a certificate per virtual host name, made on demand from the TLS SNI)
// answering for any number of virtual sites such as "news-17.example". A
// client reaches them with no DNS through [Web.Transport] or [Web.Client]
// (or, for a client that builds its own transport, [Web.RootCAs],
// [Web.DialContext] and [Web.LookupNetIP]). Nothing leaves loopback: a name
// that is not a site does not resolve, and http:// URLs reach a plain-HTTP
// twin of the server that answers the same.
//
// Each [Site] serves, at its standard paths:
//
//	/robots.txt                  any body, status, or failure (timeout, reset, redirect chain)
//	/feed.xml, /atom.xml         RSS 2.0 and Atom, with ETag, Last-Modified and real 304s
//	/sitemap_index.xml           a sitemap index naming the two below
//	/sitemap.xml                 a urlset with lastmod
//	/news-sitemap.xml            a Google News sitemap
//	/wp-json/wp/v2/posts[/<id>]  a WordPress-like REST API (per_page, page, _fields,
//	                             X-WP-Total, X-WP-TotalPages, 400 past the last page)
//	Article.Path                 article pages with JSON-LD NewsArticle, OpenGraph and meta tags
//	/images/<id>.jpg|png|webp|gif  real image bytes; /images/fake*.jpg is HTML sent as image/jpeg
//
// and misbehaves on demand ([Site.Misbehave], [Kind]): 429 and 503 with
// Retry-After, 401, 403, a Cloudflare-like challenge page, slow or trickling
// or truncated bodies, an unknown Content-Encoding, a gzip bomb, an oversize
// or endless body, a missing or wrong Content-Type, a broken document, a
// huge header, redirect loops and chains, redirects to http, to another host,
// to any URL or adding a query parameter, feeds with duplicate or foreign
// links, endless pagination, Set-Cookie or Connection: close on every
// answer, a hang, a hang-up or a reset. [Site.Handle] adds any handler;
// [Site.ResolveTo] makes a name resolve to a private address for SSRF tests.
//
// The web records every request as it arrives ([Web.Requests]): time, host,
// SNI, connection, method, target, every header as received, the answer's
// status and headers, and when the answer finished. [Web.Audit] judges the
// record against a stated [Policy] and returns a [Report] listing each
// [Violation] under its [Rule]: interval and Crawl-delay, requests in flight,
// connections open, robots.txt first and obeyed, announced cool-downs,
// headers, cookies, User-Agent, and plain HTTP under an https-only policy.
//
// The auditor's robots.txt reading is a referee's approximation of RFC 9309
// (user-agent groups falling back to "*", longest-match Allow/Disallow with
// "*" and "$", Allow winning ties, Crawl-delay in seconds); it is not the
// reference parser, and does not decode percent-escapes.
//
// Times are the web's wall-clock times. A request starts when its bytes
// reached the web: on Linux that is the kernel's receive timestamp, so a
// web scheduled late on a loaded machine still sees when the client wrote;
// elsewhere it is when the web began handling the request. The first
// request on a new connection starts when the connection opened (so the
// TLS handshake does not count against a client that paces its sends; see
// [Request.Start]). So on Linux [Policy.Slack] need only absorb clock
// granularity (a millisecond or two); elsewhere it absorbs what scheduling
// adds, tens of milliseconds under load. Tests that go through politetest
// state short intervals (say 20 ms) and the auditor checks exactly what
// they state.
//
// A [Scenario] builds a whole web of hundreds of sites, deterministically,
// from a few numbers. [Hostile] is the scenario of a hostile web: every
// misbehaviour of [HostileTraits] at once, each on a few sites, beside
// well-behaved ones.
package politetest
