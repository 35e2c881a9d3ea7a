// Package crawl turns politefetch's parts into a crawler: sources as data,
// their schedules and passes, and the deposits they produce.
//
// A [Source] says what announces a publisher's articles (a feed, or a
// public API call: the trigger), where its backlog is listed, how an
// article is read (its page, a public API, or the CMS API with a credential
// given by reference), which hosts and query parameters it admits, how
// often its trigger is read (every [MinInterval] or less often), whether
// its licence allows full text, how its articles are identified, the
// policy it is read under, and whether it is active. [Source.Validate]
// refuses a source with a [*SourceError] naming the field.
//
// A [Crawler] reads each active source's trigger at its interval, walks its
// backlog at start-up and then every [DefaultBacklogInterval], and reads
// each announced article through one [fetch.Client], whose pacer is the
// only thing that spaces requests. Every read is made as its source
// ([fetch.GetOptions.Source]): a trigger, a backlog list or an article, or a
// redirect of one, on a host the source does not admit is refused unsent,
// and only the source's declared parameters are kept. A trigger read that
// never reached the publisher, for a failure of ours (a store of the
// chain's that did not answer, the host's turn not had in time), leaves
// the trigger due: [Crawler.Run] reads it again after [RetryAfterError],
// not at the next interval. One the publisher answered, even with a
// failure, waits out the interval, unless what it announced is not all in
// the State (a reference the State did not take, an answer the pass
// stopped reading as it lost its lease): that trigger stays due too, as
// does a backlog walk that named a reference not recorded, so that the
// next pass, in this process or another, reads it again instead of leaving
// the reference unknown. Work on a source happens in a pass, under
// a lease in the [State], so that no two passes of one source run at once,
// even in several processes sharing the State. A lease lasts
// [DefaultLeaseTTL] (30 s), renewed every third of it while its pass runs,
// so the sources of a worker that died resume within that time elsewhere;
// a crawler restarted on the same machine takes over at once the leases of
// a process that is gone (see [Crawler.Owner]). Within a pass, articles wait
// in per-host queues, each host read by its own goroutine, so a slow,
// cooling or suspended host holds up no other. The articles a trigger
// announces join their host's queue as each is recorded, so a host's first
// article is read as soon as its interval allows, however long the State
// takes to record the others (a sitemap backlog walked after the trigger
// completes what is known of them first); what is read flows through
// bounded queues to the extractors and then to one depositor, so a slow
// extractor or store holds the readers back instead of growing memory.
//
// An article is read only while it is not deposited, and always
// unconditionally ([fetch.GetOptions.Unconditional]), so a read whose
// deposit failed, or that a stopped process never deposited, is answered in
// full the next time, never with a 304 standing for nothing kept. Feeds, API
// triggers and backlog lists are read conditionally, but with
// [fetch.GetOptions.DeferValidators]: a list's validators are kept ([fetch.Client.SaveValidators]) only once
// every reference it names is recorded in the State (for a backlog, once
// the whole walk is), so a list read just before a process stopped is read
// in full after the restart and its references learnt. Only a final 200
// received in full is deposited, with its decoded
// envelope, its proof of fetch and the article extracted from it, and only
// when the identifiers the trigger, the backlog list and the article give
// agree. A source without a full-text licence, or an article the publisher
// or the chain refuses, is kept as the feed's excerpt, labelled, with a
// link to the original; under the vault policy nothing of the trigger is
// kept. Gated articles are never deposited. With [Crawler.Images] set, the
// share image each strict news story names (the article's, else the
// feed's) is checked once per image URL through the same client, between
// the extractors and the depositor, and the answer kept with the story in
// [Deposit.Image]; no image is read for a digest or vault source. An article is read at most
// [DefaultMaxReads] times in a pass, and [DefaultMaxFailures] consecutive
// deposit failures stop the pass; both counts live in the State. Only our
// own failures to deposit count (the [Deposits] store failing or refusing
// a write): a publisher's answer that is not a complete 200 fails its
// article, which is read again on a later pass, and the refusal ledger
// slows the host down, but the pass goes on.
//
// What a crawl remembers lives in a [State] (schedules, leases, known
// references with their first-seen instants, per-pass counters) and what
// it keeps in [Deposits]. [MemoryState] and [MemoryDeposits] hold both in
// memory; package crawltest holds the conformance suites any other
// implementation must pass. Events ([Crawler.OnEvent], [Crawler.Logger],
// [Crawler.SourceCounts]) say what happened, per source and per host.
package crawl
