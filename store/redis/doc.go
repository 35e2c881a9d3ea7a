// Package redis keeps politefetch's shared state in one Redis, so that
// several worker processes, on one machine or many, are exactly as polite
// together as one process is: a publisher sees one budget per host however
// many workers ask.
//
// A [Store] holds a go-redis client and a key prefix, and hands out one
// implementation of each pluggable store, each passing its package's
// conformance suite unchanged:
//
//   - [Store.Schedule], a fetch.Schedule: each host's latest start and its
//     in-flight slots, for fetch.Stores.Schedule;
//   - [Store.Ledger], a backoff.Store: the refusal ledger, for
//     fetch.Stores.Ledger;
//   - [Store.Robots], a robots.Store: robots.txt records, with a fetch lease
//     per host, for fetch.Stores.Robots;
//   - [Store.Validators], a fetch.ValidatorStore: ETag and Last-Modified
//     per URL, for fetch.Stores.Validators;
//   - [Store.State], a crawl.State: per source its schedule, pass lease,
//     counters and known references, for crawl.Crawler's State.
//
// A worker builds its client and crawler over them:
//
//	rc := goredis.NewClient(&goredis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
//	st := &redis.Store{Client: rc, Prefix: "newsroom:"}
//	fs, cs := st.Stores()
//	c, err := fetch.New(policy, fetch.WithStores(fs))
//	…
//	cr := &crawl.Crawler{Client: c, State: cs.State, Sources: sources}
//
// The same Store works over a Redis Cluster: give it a go-redis
// ClusterClient (made with ContextTimeoutEnabled). Every script and every
// transaction touches the keys of one host or one source only, which share
// a hash tag and so one slot (see Keys); the cluster checks it, and the
// package's tests run every conformance suite and a crawl by three worker
// processes on a real cluster of three masters and three replicas. Each
// script reads the clock of the node holding its keys: the nodes' clocks
// must agree within a few milliseconds (NTP), as one offset is kept per
// Store. A Prefix must not hold an unmatched brace, which would move the
// hash tag.
//
// Workers divide the work through the crawl state: any worker may run any
// due source whose pass lease is free; a worker that dies loses its leases
// when they expire, and another takes its sources over. Hosts are shared
// the same way, through the schedule's leases. The repository's SCALING.md
// says what a request and a host cost, how a cluster fails over, when one
// Redis stops being enough, and what then.
//
// # Time
//
// Intervals and leases are decided on one clock, Redis's (TIME, read inside
// the scripts), never the workers': a worker whose clock is skewed or jumps
// can neither shorten an interval nor take or keep a lease early or late.
// The instants the other stores keep (cool-downs, robots.txt expiries,
// source schedules) are given by the workers on their own clocks; a Store
// measures the offset between its caller's clock ([Store].Clock) and Redis's
// on the calls that read the time (one TIME in the same round trip) and
// stores every instant on Redis's clock, so that a cool-down one worker
// recorded ends at the same moment for a worker whose clock is an hour
// ahead. A reference's instants (first seen, settled) are kept as given.
// CallerClock turns all of this off, for processes sharing one clock.
//
// # Failures
//
// Every call is bounded by [Store].Timeout and the caller's context, and
// fails with an [*Error] when Redis is unreachable, slow past that bound or
// answers an error. The politefetch layers treat an error as a refusal: no
// request leaves without its claim and its slot, a ledger that cannot be
// read refuses, a crawl pass whose state cannot be written stops. Nothing
// falls back to local state. Two writes that failed are owed, not lost: a
// refusal the ledger could not record, and the release of a lease, are
// kept by the process and written, refusals first, at the start of its
// next call that reaches Redis. A lease whose owner died is released by
// nobody: it expires.
//
// Pass leases are on Redis's clock and renewed by their holder (crawl
// renews at a third of its LeaseTTL), so across machines they should be
// short: with a 45 s TTL a dead worker's sources are free for the others
// within 45 s of its last renewal, however skewed the workers' clocks. A
// process that knows a lease's owner is dead (a restart replacing its own
// predecessor on one machine) need not wait: ReleaseLease is a
// compare-and-delete on the owner, so releasing the dead owner's lease by
// its name and acquiring it again takes it over at once; of several doing
// so, one wins.
//
// Redis itself must not lose what it was told: run it with an append-only
// file (appendonly yes; appendfsync everysec loses at most a second of
// writes at a crash) and maxmemory-policy noeviction, since an evicted
// ledger record is a forgotten refusal. A Redis restarted empty forgets
// every cool-down.
//
// # Keys
//
// Every key starts with the prefix ("politefetch:" by default). The
// subject, a host key, a URL or a source id, is in braces: a Redis Cluster
// hash tag, so that every key of one host, or one source, lives on one
// slot. Instants are Unix time on Redis's clock: µs in the schedule and the
// pass lease (the scripts' own arithmetic), ns elsewhere.
//
//	key                      type        holds                                      expiry                                       written by
//	sched:{host}             hash        last: latest start (µs); seq               max(gap, lease TTL) + ScheduleRetain (1 h)   Schedule.Acquire, Started
//	lease:{host}             sorted set  owner token → lease expiry (µs)            as sched:{host}                              Schedule.Acquire, Renew, Release
//	wait:{host}              sorted set  waiting claim's owner → order of asking    as sched:{host}; a waiter leaves at its      Schedule.Acquire
//	                                     (sched:{host}'s seq counts the askers)     grant or its poll-by
//	waitby:{host}            sorted set  waiting claim's owner → poll-by (µs)       as wait:{host}                               Schedule.Acquire
//	ledger:{host}            string      JSON of backoff.State (ns)                 none while it holds strikes or a suspension  Ledger.Update (deleted when it holds nothing)
//	                                                                                 (only a success clears a refusal); else the
//	                                                                                 cool-down's end + 1 min
//	robots:{host}            hash        outcome, status, failure, body,            the record's expiry + RobotsRetain (24 h)    Robots.Put
//	                                     fetched_at, expires (ns), stale,
//	                                     last_failure
//	robotsfetch:{host}       string      the owner token of the robots.txt fetch    RobotsFetchLease (30 s)                      Robots.Get takes it (SET NX), Put or ReleaseFetch releases it
//	val:{url}                hash        etag, last_modified                        ValidatorRetain (30 days) after the last Put  Validators.Put, Delete
//	src:{source}             string      JSON of crawl.Schedule (ns)                StateRetain (90 days) after the last write   State.SetSchedule
//	pass:{source}            hash        owner, exp (µs), pass, failures            as src:{source}                              State.AcquireLease, RenewLease, ReleaseLease, Failure
//	attempts:{source}        hash        reference key → reads in this pass         as src:{source}; deleted at each new pass    State.Attempt
//	refs:{source}            hash        reference key → JSON of crawl.RefState     as src:{source}                              State.See, Settle (Forget deletes it)
//	pending:{source}         set         the keys of the references still pending,  as src:{source}                              State.See, Settle (in their transaction);
//	                                     and "" (the set is built)                                                               Pending builds it once from refs:{source}
//	                                                                                                                             where it is missing (Forget deletes it)
//	tally:{source}           hash        crawl.Tally's counters: reads, trigger_    as src:{source}                              State.Attempt and Failure (in their script),
//	                                     reads, not_modified, robots_reads, ...,                                                 Settle (in its transaction), AddTally
//	                                     deposit_failures (Forget deletes it)
//
// Keys are named "<prefix><kind>:{<subject>}", for instance
// "politefetch:ledger:{news.example}"; the host key is the one every
// per-host layer uses (lower case, A-labels, a port only when not the
// scheme's default, "http://" first for plain http in robots keys).
package redis
