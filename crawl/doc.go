// Package crawl turns politefetch's parts into a crawler: sources as data,
// their schedules and passes, and the deposits they produce.
//
// A [Source] says what announces a publisher's articles (a feed, or a
// public API call: the trigger, V1), where its backlog is listed (V4), how
// an article is read (its page, a public API, or the CMS API with a
// credential given by reference, V2), which hosts and parameters it admits
// (V10), how often its trigger is read (15 minutes or more, S2, V7),
// whether its licence allows full text (S6), how its articles are
// identified (V3), the policy it is read under, and whether it is active
// (V13). [Source.Validate] refuses a source with a [*SourceError] naming
// the field.
//
// A [Crawler] reads each active source's trigger at its interval, walks its
// backlog at start-up and then every [DefaultBacklogInterval], and reads
// each announced article through one [fetch.Client], the only thing that
// spaces requests. What a crawl has done is kept in a [State] (schedules,
// a pass lease so that no two passes of one source run at once, even across
// processes, known references, attempt and failure counters), and what it
// read is written to [Deposits]. [MemoryState] and [MemoryDeposits] keep
// both in memory; package crawltest holds the conformance suites any other
// implementation must pass.
//
// Only a final 200 received in full is deposited (V12), with its decoded
// envelope, its proof of fetch and the article extracted from it; a source
// without a full-text licence, or an article the publisher refuses, is kept
// as the feed's excerpt, labelled, with a link to the original (S5, S6).
// Gated articles are never deposited (D12).
package crawl
