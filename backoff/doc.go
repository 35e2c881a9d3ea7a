// Package backoff is politefetch's per-host refusal ledger.
//
// When a publisher refuses a request (a refusal status such as 401, 403 or
// 429, or a bot-challenge page) or asks to slow down (Retry-After), the
// [Ledger] remembers it per host (or per registrable domain), honours it
// exactly, and answers every later [Ledger.Check] with a [Decision]: allowed,
// or refused until a given instant and why. It never helps to get around a
// refusal: there is no override, no "force" flag and no fail-open path; a
// [Store] that cannot answer refuses the request.
//
// The fetch chain calls [Ledger.Check] before sending and [Ledger.Observe]
// after each response, building the [Outcome] with [NewOutcome] from the
// status, the headers and the first [ChallengePeek] bytes of the body. Check
// reads the Store before every request, so a refusal another process
// recorded is honoured from our next request on. A success at a host whose
// Check found no record ([Decision].Recorded false, passed on as
// Outcome.NoRecord) has nothing to clear and costs no Store call at all: the
// common request costs a networked Store one read.
//
// A [Policy] is data. Three presets reproduce the project's documents:
// [StrictNews] (5 min doubling up to 6 h, five refusals in a row suspend
// the host's articles with a daily re-check), [Digest] (exponential
// back-off with jitter, cool-downs of 30–60 min, never under 15 min after a
// 429) and [Vault] (refusals recorded, no back-off of its own, but a
// server's Retry-After honoured exactly, never rude).
//
// Time is a parameter: Check and Observe take now, so six-hour back-offs are
// tested in microseconds.
//
// # Memory and locking
//
// A host read successfully leaves nothing behind; a host holding a refusal
// keeps one packed record (instants as Unix nanoseconds, small fields in a
// few bytes), so a crawl of many hosts costs memory only for the hosts that
// refused. Check on a host with no record allocates nothing. No lock is
// held across Store I/O: the in-memory store locks one of 64 shards for a
// map operation.
package backoff
