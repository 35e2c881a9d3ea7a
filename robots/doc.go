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
// all: the strict news crawler).
//
// # The cache
//
// [Cache.Allow] fetches the robots.txt of a URL's scheme, host and port
// through the RoundTripper it is given (the fetch chain's ledger, pacer and
// identity layers) before answering for any other URL of that site, one
// fetch per site at a time, following at most [MaxRedirects] redirects and
// reading at most [MaxBodySize] bytes. It reads https only unless
// Cache.AllowHTTP lets it read plain http too; an http site's robots.txt is
// then read over http and kept apart from the https one. A [Policy] sets
// the status policy, the TTL, the retry interval after a failure and what a
// failure does after a good copy; [StrictNews], [Digest] and [Vault] are
// the three seed documents' choices. [Cache.Explain] says why a URL may or
// may not be fetched: the group and rule that decided, their lines, and the
// record behind the answer.
//
// # State
//
// The state of each site is a [Record]: plain data (status, body, outcome,
// fetched-at, expiry), so a [Store] may keep it anywhere, a database or a
// network service included. The Cache parses each body once into its own
// in-memory view. [MemoryStore], the default, is bounded by size and time
// and keeps that view beside the record, so a cached host costs no parse
// and no allocation per request; package robotstest checks any other
// implementation. With another Store (a networked one, where each read is a
// round trip), the Cache answers from its view of a host's record for at
// most Cache.StoreRecheck before reading the Store again, and never past the
// record's Expires: a refresh stored by another process is seen as soon as
// the record it replaces is due.
package robots
