// Package sqlite keeps every piece of politefetch's state in one SQLite
// file that survives a restart and a kill -9: the refusal ledger
// ([DB.Ledger], a [backoff.Store]), the validators of conditional GET
// ([DB.Validators], a [fetch.ValidatorStore]), the shared pacing schedule
// ([DB.Schedule], a [fetch.Schedule], so several processes on one machine
// share politeness through the file; or [DB.HoldSchedule], the file's
// schedule held by one process and decided in its memory, with nothing
// written per request), the robots.txt records ([DB.Robots],
// a [robots.Store]), the crawler's state ([DB.CrawlState], a [crawl.State])
// and its deposits ([DB.Deposits], [crawl.Deposits]). Each passes its
// package's conformance suite unchanged. A crawler that forgets these when
// it restarts is rude the moment it comes back.
//
//	db, err := sqlite.Open(ctx, "politefetch.db", nil)
//	if err != nil {
//		return err
//	}
//	defer db.Close()
//	ledger := &backoff.Ledger{Store: db.Ledger()}
//
// The driver is modernc.org/sqlite, pure Go: no C toolchain, and it
// cross-compiles. The file is an ordinary SQLite 3 database that the
// sqlite3 shell, pandas or DuckDB can read while a crawl runs.
//
// # Connections, locking and durability
//
// The file is in WAL mode: readers never block the writer nor each other.
// All writes in a process go through one connection (database/sql with one
// open connection), reads through a pool of query_only connections
// ([Options].Readers). Transactions begin IMMEDIATE, so a read-modify-write
// holds the file's write lock from its start and is atomic across every
// process that opens the file; a process that finds the lock taken waits up
// to [Options].BusyTimeout, then fails with [ErrLocked]. Statements are
// prepared once per connection.
//
// Durability: every write is committed before the call that made it
// returns, so what a call reported done survives the process being killed
// (kill -9) at any instant; nothing is held back in memory to be written
// later, since a held-back refusal or pacing claim is one another process
// must see at once. The one exception is a request's start under a sole
// in-flight slot, written with the slot's release: until then the slot
// keeps every other claim out, and a process killed before it leaves the
// slot to expire a Gap after that start at least, or to be taken over by
// a process of the same machine, which counts that start as at the
// takeover ([Schedule]). The WAL is synced to disk at each checkpoint, not at
// each commit (synchronous=NORMAL), so no write waits for the disk:
//
//   - State (ledger, validators, schedule, robots, crawl state) and
//     deposits: in the WAL when the call returns. A power failure or an
//     operating system crash may take the file back to an earlier commit:
//     the WAL is replayed up to its last intact commit, so the file is
//     always as it stood after some commit, the deposits and the crawl
//     state that recorded them lost together. The crawl then reads those
//     articles again (a reference still pending is read; a deposit made
//     twice is stored once).
//   - With [Options].SyncDeposits, a deposit is synced (synchronous=FULL)
//     before Put returns, so one reported stored survives the machine's
//     crash as well. A withdrawal, and a source's state forgotten, are
//     always synced.
//
// Concurrent Puts share one transaction (a group commit of up to 64, and
// one sync with SyncDeposits), so a crawl depositing from many hosts at once
// is not bound by one commit per deposit. A call whose write would change
// nothing reads instead: a reference seen again as it stands, a success
// that leaves a pass's failure count at zero, a ledger Update that keeps the
// record. Each connection's page cache is bounded ([Options].CacheKiB,
// [ReaderCacheKiB]).
//
// # Expiry
//
// A background sweep (every [Options].SweepEvery) deletes from each table at
// most [Options].SweepBatch rows past their lifetime, each table in its own
// short transaction, and returns freed pages to the file system
// (auto_vacuum=INCREMENTAL), so the file stays bounded on a long crawl:
//
//   - ledger: a record that holds nothing (no strikes, not suspended,
//     cool-down over); a refusal is never forgotten, only a success clears
//     it;
//   - validators: those stored longer than [Options].ValidatorRetain ago;
//   - schedule: latest starts older than [Options].ScheduleRetain, and as
//     old a floor an ended hold left;
//   - robots: records expired for longer than [Options].RobotsRetain.
//
// A new file has pages of 4 KiB (each commit appends every page it changed
// to the WAL, whole). The WAL is checkpointed by SQLite once it holds 16 MiB
// (wal_autocheckpoint) and cut back to 4 MiB (journal_size_limit) when it
// restarts. Deposits and crawl state are never
// swept.
//
// # Errors
//
// Every failure is an [*Error] naming the operation and key and wrapping
// SQLite's error; one a caller should act on also matches [ErrReadOnly],
// [ErrLocked], [ErrFull], [ErrCorrupt] or [ErrClosed]. Open refuses a file
// it may not write, so a read-only file fails at once rather than at the
// first refusal to record. A failing ledger or schedule store makes the
// fetch chain refuse the request without sending it; a failing validator
// store makes the request unconditional; a failing crawl state or deposit
// store stops the source's pass. So a crawl whose state cannot be read or
// written stops fetching rather than fetching without it. SQLite's
// transactions mean that a failed write leaves what was committed before
// it intact. [Deposits.Put] refuses a full deposit whose digest is not its
// envelope's ([ErrDigestMismatch]), and [Deposits.List] refuses to hand back
// an envelope that no longer matches its digest ([ErrCorrupt]).
//
// # Schema
//
// The schema version is PRAGMA user_version ([SchemaVersion]) and the
// header's application_id is 0x70666574 ("pfet"). Open migrates an older
// file forward in one transaction; a newer file fails with a [*SchemaError]
// and is not modified; a file of another application, with [*Error]. Times
// are INTEGER Unix nanoseconds, UTC, 0 for none (in SQL:
// datetime(col / 1000000000, 'unixepoch')). Booleans are 0 or 1.
//
// ledger, one row per host (or site) with something against it, keyed as
// [backoff.Ledger] keys it:
//
//	key            TEXT PRIMARY KEY  the ledger's host or site key
//	strikes        INTEGER           refusals in a row
//	refused_kind   INTEGER           weightiest kind refused: 0 article, 1 feed, 2 robots
//	last_status    INTEGER           HTTP status of the last refusal
//	last_challenge TEXT              bot-challenge provider of the last refusal, or ''
//	last_at_ns     INTEGER           when the last refusal was observed
//	until_ns       INTEGER           end of the cool-down
//	suspended      INTEGER           1: articles off but for one re-check at next_check_ns
//	next_check_ns  INTEGER           when a suspended host's articles may be tried again
//	rev            INTEGER           revision, for the atomic compare-and-set of Update
//
// validators, one row per URL (without fragment) with validators:
//
//	url            TEXT PRIMARY KEY
//	etag           TEXT              the ETag header as received, or ''
//	last_modified  TEXT              the Last-Modified header as received, or ''
//	stored_ns      INTEGER           when they were last stored
//	length         INTEGER           the body's wire length they were kept from, 0 if not known
//
// schedule, one row per host being paced:
//
//	host           TEXT PRIMARY KEY  the host key (internal/hostkey)
//	last_start_ns  INTEGER           the latest request start claimed or reported
//
// schedule_lease, one row per request in flight to a host (its in-flight
// slot), held by a lease:
//
//	host, owner    TEXT              the host key and the lease's owner token (the primary key)
//	expires_ns     INTEGER           when the lease ends unless renewed or released
//	start_pending  INTEGER           1: its request's start is written at the release, so may be as late as now
//	proc           TEXT              the process that took it (boot id, pid namespace, pid, start time), '' when unknown
//
// schedule_waiter, one row per claim told to wait for a host's turn (see
// [Schedule]), kept until it is granted or its poll-by passes:
//
//	host, owner    TEXT              the host key and the claim's owner token (the primary key)
//	seq            INTEGER           its place: the order it first asked in, among the host's waiters
//	poll_by_ns     INTEGER           it must ask again before this, or lose its place
//	proc           TEXT              the process that asked, as in schedule_lease
//
// schedule_hold, at most one row: the hold on the schedule (see
// [HeldSchedule]):
//
//	id             INTEGER           1
//	proc           TEXT              the holding process, as in schedule_lease; '' once its holder ended without releasing
//	expires_ns     INTEGER           when the hold ends unless renewed; with proc '', the floor every host's latest start counts as
//
// robots, one row per host whose robots.txt was read:
//
//	host           TEXT PRIMARY KEY  the host key; "http://" first for plain http
//	outcome        INTEGER           0 obey body, 1 allow all, 2 disallow all
//	status         INTEGER           HTTP status of the fetch, 0 when none arrived
//	failure        TEXT              why the fetch failed, or ''
//	body           BLOB              robots.txt as received
//	fetched_at_ns  INTEGER           when the fetch behind outcome finished
//	expires_ns     INTEGER           when robots.txt is to be fetched again
//	stale          INTEGER           1: a last good copy kept after failed fetches
//	last_failure   TEXT              why the latest fetch failed, when stale
//
// crawl_source, one row per source the crawler has scheduled or leased:
//
//	source            TEXT PRIMARY KEY  the source's ID
//	last_trigger_ns   INTEGER           when the trigger (feed) was last read
//	next_trigger_ns   INTEGER           when it is next due
//	last_backlog_ns   INTEGER           when the backlog was last walked in full
//	next_backlog_ns   INTEGER           when it is next due
//	embargo_ns        INTEGER           earliest instant an embargoed article may be read
//	slowed_ns         INTEGER           until when the site asked us to slow down
//	lease_owner       TEXT              the pass lease's holder, '' when free
//	lease_expires_ns  INTEGER           when the lease ends unless renewed
//	pass              INTEGER           the current (or last) pass, from 1
//	failures          INTEGER           consecutive deposit failures in that pass
//
// crawl_ref, one row per article a source announced (the known references):
//
//	source, key       TEXT              the source and the article's identifier in it (the primary key)
//	url               TEXT              the article's address
//	feed_id, list_id  TEXT              the identifiers the trigger and the backlog gave
//	published_ns      INTEGER           the date the trigger or list gave
//	excerpt           TEXT              the feed's story as JSON, or NULL
//	first_seen_ns     INTEGER           when it was first announced
//	outcome           INTEGER           0 pending, 1 deposited, 2 excerpted, 3 excluded, 4 mismatch
//	note, settled_ns  TEXT, INTEGER     why and when the story ended
//
// indexed by (source, first_seen_ns, key) in the partial index
// crawl_ref_pending (WHERE outcome = 0) for Pending, so that a pass reads
// only the references still pending; Refs reads a source's by the primary
// key and sorts them.
//
// crawl_attempt, reads of an article in the current pass: source, pass, key
// (the primary key) and reads.
//
// crawl_tally, one row per source: its crawl.Tally over every process, a
// column per field (reads, trigger_reads, not_modified, robots_reads,
// image_reads, deposits, excerpts, excluded, mismatches, refusals, failures,
// deposit_failures). Triggers count reads (on crawl_attempt), the outcomes
// (when a crawl_ref row leaves outcome 0, whether Settle or a full
// deposit's Put settles it) and deposit failures (when crawl_source's
// failures grows), inside the transaction that writes what they count, so
// a kill -9 never leaves a count apart from its row; the crawler adds the
// rest (CrawlState.AddTally). CrawlState.Tallies reads them all.
//
// envelope, one row per distinct envelope (a response body as received,
// content-codings removed):
//
//	id                INTEGER PRIMARY KEY
//	digest            TEXT UNIQUE       "sha256:<hex>" of body
//	length            INTEGER           bytes
//	body              BLOB
//
// deposit, one row per deposit, in the order they were put:
//
//	id                INTEGER PRIMARY KEY
//	source            TEXT              the source's ID
//	key               TEXT              the article's identifier in its source
//	url               TEXT              the final URL of the read, or the excerpt's link
//	read_at_ns        INTEGER           the instant of the read (the proof's)
//	digest            TEXT              the envelope's digest, or the excerpt's; UNIQUE with source
//	media_type        TEXT              the envelope's media type
//	envelope_id       INTEGER           the envelope (NULL for an excerpt)
//	proof             TEXT              the proof of fetch, provenance/v1 JSON, each hop's certificate chain in cert_chain (chains)
//	article           TEXT              the extracted article, JSON, or NULL
//	excerpt           TEXT              the feed's story, JSON, for an excerpt deposit
//	stored_ns         INTEGER           when the deposit was committed
//	image             TEXT              the share image's check (sharecheck.Result), JSON, or NULL
//	chains            TEXT              per hop of the proof, the cert_chain id of its chain (the hop's chain null in proof), or null
//	                                    for a hop whose chain is in proof (none, or empty); NULL: the proof holds every chain
//
// cert_chain, one row per distinct certificate chain the proofs present
// (every deposit from one host presents the same):
//
//	id                INTEGER PRIMARY KEY
//	digest            TEXT              "sha256:<hex>" of chain; UNIQUE
//	chain             TEXT              the chain as the proof's hop has it: a JSON array of base64 DER, leaf first
//
// deposit_proof, a view: each deposit's proof whole, its chains put back.
//
//	deposit_id        INTEGER           the deposit's id
//	proof             TEXT              the proof of fetch, provenance/v1 JSON
//
// # Queries
//
// Deposits per source, with their read instants:
//
//	SELECT source, count(*) AS deposits, strftime('%Y-%m-%dT%H:%M:%SZ', min(read_at_ns) / 1000000000, 'unixepoch') AS first_read,
//	       strftime('%Y-%m-%dT%H:%M:%SZ', max(read_at_ns) / 1000000000, 'unixepoch') AS last_read
//	FROM deposit GROUP BY source ORDER BY source;
//
// One source's deposits, with their envelopes' sizes and the proofs' final
// URLs:
//
//	SELECT d.key, strftime('%Y-%m-%dT%H:%M:%SZ', d.read_at_ns / 1000000000, 'unixepoch') AS read_at, e.length,
//	       json_extract(d.proof, '$.final_url') AS final_url
//	FROM deposit d LEFT JOIN envelope e ON e.id = d.envelope_id WHERE d.source = 'news-1' ORDER BY d.id;
//
// Hosts cooling down now, with the reason:
//
//	SELECT key, strikes, last_status, last_challenge, datetime(until_ns / 1000000000, 'unixepoch') AS until
//	FROM ledger WHERE until_ns > unixepoch() * 1000000000 ORDER BY until_ns DESC;
//
// Hosts whose robots.txt disallows everything:
//
//	SELECT host, status, failure FROM robots WHERE outcome = 2;
package sqlite
