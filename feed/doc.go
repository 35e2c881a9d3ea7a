// Package feed reads what publishers announce and what they list: feeds
// (RSS 0.9x/2.0, Atom 1.0, JSON Feed) as triggers, and backlog lists
// (sitemaps, the WordPress REST API, any paginated JSON API described as
// data) walked newest to oldest, references only.
//
// The package parses, normalises and walks; it sends nothing itself. Every
// read goes through a [Doer], and the politeness is the Doer's: give each
// reader and walker the fetch client's Doer for the kind it reads (see
// [Doer]), and robots.txt, pacing, the refusal ledger, conditional GET and
// decoding apply exactly as to articles, with each read judged by its kind:
// a host suspended for its articles still has its feeds, sitemaps and API
// lists read on schedule. An *http.Client works too, without any of that.
//
// A 304 the Doer returns (its conditional GET, with the validators it keeps)
// comes back as [Result.NotModified] and costs no parse; a walker treats a
// 304 as a batch it has already yielded. Items come out normalised ([Item]):
// the publisher's identifier (the CMS id when it can be read, e.g. a
// WordPress ?p=123 guid), an absolute link cleaned of tracking parameters by
// the same cleaner the fetch chain applies to the URLs it requests, and
// dates copied, never invented: a missing date stays the zero time. In
// trigger mode ([Reader.RefsOnly]) nothing of the feed's content is kept,
// only references.
//
// Backlog walkers ([SitemapWalker], [APIWalker], [WordPress]) yield
// [Ref] values through an iter.Seq2 and stop at the source's floor date, or
// as soon as a whole batch is already [Known] and lies entirely beyond the
// 48-hour window ([DefaultWindow]); the newest 48 hours are always re-read.
// The sitemaps a site's robots.txt names are read with package robots'
// parser.
//
// Every read is bounded, whatever the Doer: feeds by [DefaultMaxFeedBytes]
// and [DefaultMaxItems], sitemaps by the sitemaps.org limits
// ([MaxSitemapBytes] decoded, [MaxSitemapURLs] entries), API pages by
// [DefaultMaxPageBytes] and [DefaultMaxPages]. Malformed or hostile input
// gives an error that wraps [ErrMalformed], never a panic.
//
// [Discover] and [DiscoverLinks] read the feeds an HTML page announces, with
// golang.org/x/net/html, the HTML parser package extract uses for articles.
//
// The package keeps no global mutable state; the zero value of each type
// works once its Client is set.
package feed
