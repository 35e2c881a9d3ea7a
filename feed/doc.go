// Package feed reads what publishers announce and what they list: feeds
// (RSS 0.9x/2.0, Atom 1.0, JSON Feed) as triggers, and backlog lists
// (sitemaps, the WordPress REST API, any paginated JSON API described as
// data) walked newest to oldest, references only.
//
// Every read goes through a [Doer]: an *http.Client works, and so does the
// politeness chain of package fetch, so robots.txt, pacing and refusals apply
// to feeds and backlogs exactly as to articles.
//
// Feeds are read with conditional GET (D4): a [Reader] keeps each feed's
// validators (ETag, Last-Modified) in a [Store] and sends If-None-Match and
// If-Modified-Since; a 304 comes back as [Result.NotModified] and costs no
// parse. Items come out normalised ([Item]): the publisher's identifier (the
// CMS id when it can be read, e.g. a WordPress ?p=123 guid, V3), an absolute
// link without tracking parameters (V10), and dates copied, never invented:
// a missing date stays the zero time. In trigger mode ([Reader.RefsOnly],
// V1) nothing of the feed's content is kept, only references.
//
// Backlog walkers ([SitemapWalker], [APIWalker], [WordPress]) yield
// [Ref] values through an iter.Seq2 and stop (V4) at the source's floor
// date, or as soon as a whole batch is already [Known] and lies entirely
// beyond the 48-hour window ([DefaultWindow]); the newest 48 hours are
// always re-read.
//
// Every read is bounded: feeds by [DefaultMaxFeedBytes] and
// [DefaultMaxItems], sitemaps by the sitemaps.org limits
// ([MaxSitemapBytes] decoded, [MaxSitemapURLs] entries), API pages by
// [DefaultMaxPageBytes] and [DefaultMaxPages]. Malformed or hostile input
// gives an error that wraps [ErrMalformed], never a panic.
//
// The package keeps no global mutable state; the zero value of each type
// works once its Client is set.
package feed
