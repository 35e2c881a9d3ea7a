// Package robots decides whether a crawler may fetch a URL under a site's
// robots.txt: an RFC 9309 parser and matcher with Google's documented
// behaviour where the RFC leaves room, the status policies of the three
// seed crawlers, and a Cache that fetches each host's robots.txt before any
// other request to it.
//
// # Parsing and matching
//
// [Parse] never fails: lines it does not understand are skipped and the rest
// stands. It reads at most [MaxBodySize] bytes. [Rules.Allowed] selects the
// group naming the agent's product token exactly (case-insensitively), else
// the "*" group; groups naming the same agent are merged. The longest
// matching pattern wins, counted in octets of its percent-encoded form, and
// Allow wins a tie; '*' matches any run of octets and a final '$' anchors
// the end. Percent-encoding is normalised on both sides. Matching uses no
// regular expressions and, for paths already in normal form, does not
// allocate. [Rules.Explain] says which group applied and which rule
// decided.
//
// # Status policies
//
// A [StatusPolicy] maps a robots.txt fetch's status or network failure to an
// [Outcome]: [RFC9309] (4xx → allow all; 5xx and failures → disallow all),
// [Google] (429 → disallow all too) and [Strict] (401, 403 and 429 → disallow
// all: the strict news crawler, S3).
//
// # The cache
//
// [Cache.Allow] fetches https://host/robots.txt through the RoundTripper it
// is given (the fetch chain's ledger, pacer and identity layers) before
// answering for any other URL of that host, one fetch per host at a time,
// following at most [MaxRedirects] redirects and reading at most
// [MaxBodySize] bytes. A [Policy] sets the status policy, the TTL, the retry
// interval after a failure and what a failure does after a good copy;
// [NewsPolicy], [DigestPolicy] and [VaultPolicy] are the three seed
// documents' choices. State lives in a [Store]; [MemoryStore] is bounded by
// size and time, and package robotstest checks other implementations.
//
// # Performance
//
// On a typical 5 KB file, parsing plus one match runs about 7 times faster
// than github.com/temoto/robotstxt with 31 allocations instead of 2,327, and
// a match on a parsed file makes none. The per-request check of a cached
// host, [Cache.Allow] and then [Cache.CrawlDelay] as the fetch chain's
// robots gate asks them, makes no allocation either (one for a URL with a
// query), down from 2 allocations each, and runs 2.5–3 times faster than
// before in paired runs. BENCHMARKS.md beside this file has the figures and
// the command that reproduces them:
//
//	go test -run='^$' -bench=. -benchmem -count=3 ./robots/
package robots
