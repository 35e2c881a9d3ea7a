package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// applicationID marks a politefetch file in its header (PRAGMA
// application_id): "pfet".
const applicationID = 0x70666574

// migrations[i] takes a file from schema version i to i+1. A released
// migration is never edited: a change of schema is a new migration.
var migrations = []string{
	// 1: the per-host state of the politeness chain.
	`
CREATE TABLE ledger (
	key            TEXT PRIMARY KEY,
	strikes        INTEGER NOT NULL,
	refused_kind   INTEGER NOT NULL,
	last_status    INTEGER NOT NULL,
	last_challenge TEXT    NOT NULL,
	last_at_ns     INTEGER NOT NULL,
	until_ns       INTEGER NOT NULL,
	suspended      INTEGER NOT NULL,
	next_check_ns  INTEGER NOT NULL,
	rev            INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX ledger_idle ON ledger (until_ns) WHERE strikes = 0 AND suspended = 0;

CREATE TABLE validators (
	url           TEXT PRIMARY KEY,
	etag          TEXT    NOT NULL,
	last_modified TEXT    NOT NULL,
	stored_ns     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX validators_stored ON validators (stored_ns);

CREATE TABLE schedule (
	host          TEXT PRIMARY KEY,
	last_start_ns INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX schedule_last ON schedule (last_start_ns);

CREATE TABLE robots (
	host          TEXT PRIMARY KEY,
	outcome       INTEGER NOT NULL,
	status        INTEGER NOT NULL,
	failure       TEXT    NOT NULL,
	body          BLOB,
	fetched_at_ns INTEGER NOT NULL,
	expires_ns    INTEGER NOT NULL,
	stale         INTEGER NOT NULL,
	last_failure  TEXT    NOT NULL
) WITHOUT ROWID;
CREATE INDEX robots_expires ON robots (expires_ns);
`,
	// 2: the in-flight slots of the shared schedule, each held by a lease.
	`
CREATE TABLE schedule_lease (
	host       TEXT    NOT NULL,
	owner      TEXT    NOT NULL,
	expires_ns INTEGER NOT NULL,
	PRIMARY KEY (host, owner)
) WITHOUT ROWID;
`,
	// 3: leases swept by expiry; the crawl state and the deposits.
	`
CREATE INDEX schedule_lease_expires ON schedule_lease (expires_ns);

CREATE TABLE crawl_source (
	source           TEXT PRIMARY KEY,
	last_trigger_ns  INTEGER NOT NULL DEFAULT 0,
	next_trigger_ns  INTEGER NOT NULL DEFAULT 0,
	last_backlog_ns  INTEGER NOT NULL DEFAULT 0,
	next_backlog_ns  INTEGER NOT NULL DEFAULT 0,
	embargo_ns       INTEGER NOT NULL DEFAULT 0,
	slowed_ns        INTEGER NOT NULL DEFAULT 0,
	lease_owner      TEXT    NOT NULL DEFAULT '',
	lease_expires_ns INTEGER NOT NULL DEFAULT 0,
	pass             INTEGER NOT NULL DEFAULT 0,
	failures         INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE crawl_ref (
	source        TEXT    NOT NULL,
	key           TEXT    NOT NULL,
	url           TEXT    NOT NULL,
	feed_id       TEXT    NOT NULL,
	list_id       TEXT    NOT NULL,
	published_ns  INTEGER NOT NULL,
	excerpt       TEXT,
	first_seen_ns INTEGER NOT NULL,
	outcome       INTEGER NOT NULL,
	note          TEXT    NOT NULL,
	settled_ns    INTEGER NOT NULL,
	PRIMARY KEY (source, key)
) WITHOUT ROWID;
CREATE INDEX crawl_ref_seen ON crawl_ref (source, first_seen_ns, key);

CREATE TABLE crawl_attempt (
	source TEXT    NOT NULL,
	pass   INTEGER NOT NULL,
	key    TEXT    NOT NULL,
	reads  INTEGER NOT NULL,
	PRIMARY KEY (source, pass, key)
) WITHOUT ROWID;

CREATE TABLE envelope (
	id     INTEGER PRIMARY KEY,
	digest TEXT    NOT NULL UNIQUE,
	length INTEGER NOT NULL,
	body   BLOB    NOT NULL
);

CREATE TABLE deposit (
	id          INTEGER PRIMARY KEY,
	source      TEXT    NOT NULL,
	key         TEXT    NOT NULL,
	url         TEXT    NOT NULL,
	read_at_ns  INTEGER NOT NULL,
	digest      TEXT    NOT NULL,
	media_type  TEXT    NOT NULL,
	envelope_id INTEGER REFERENCES envelope (id),
	proof       TEXT,
	article     TEXT,
	excerpt     TEXT,
	stored_ns   INTEGER NOT NULL,
	UNIQUE (source, digest)
);
CREATE INDEX deposit_read ON deposit (source, read_at_ns);
CREATE INDEX deposit_envelope ON deposit (envelope_id);
`,
	// 4: a deposit's share-image check.
	`
ALTER TABLE deposit ADD COLUMN image TEXT;
`,
	// 5: a lease whose request's start is reported at its release.
	`
ALTER TABLE schedule_lease ADD COLUMN start_pending INTEGER NOT NULL DEFAULT 0;
`,
	// 6: the schedule's tables lose the indexes only their sweeps used
	// (a sweep scans, once a minute): every request rewrote two index
	// pages besides the rows.
	`
DROP INDEX schedule_last;
DROP INDEX schedule_lease_expires;
`,
	// 7: each source's tally (crawl.Tally), counted by triggers in the
	// transaction of what it counts: a read's attempt, a reference's
	// settling (by Settle or by a full deposit's Put), a deposit failure.
	`
CREATE TABLE crawl_tally (
	source           TEXT PRIMARY KEY,
	reads            INTEGER NOT NULL DEFAULT 0,
	trigger_reads    INTEGER NOT NULL DEFAULT 0,
	not_modified     INTEGER NOT NULL DEFAULT 0,
	robots_reads     INTEGER NOT NULL DEFAULT 0,
	image_reads      INTEGER NOT NULL DEFAULT 0,
	deposits         INTEGER NOT NULL DEFAULT 0,
	excerpts         INTEGER NOT NULL DEFAULT 0,
	excluded         INTEGER NOT NULL DEFAULT 0,
	mismatches       INTEGER NOT NULL DEFAULT 0,
	refusals         INTEGER NOT NULL DEFAULT 0,
	failures         INTEGER NOT NULL DEFAULT 0,
	deposit_failures INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TRIGGER crawl_tally_read AFTER INSERT ON crawl_attempt BEGIN
	INSERT INTO crawl_tally (source, reads) VALUES (new.source, new.reads)
	ON CONFLICT (source) DO UPDATE SET reads = reads + excluded.reads;
END;

CREATE TRIGGER crawl_tally_reread AFTER UPDATE OF reads ON crawl_attempt WHEN new.reads > old.reads BEGIN
	INSERT INTO crawl_tally (source, reads) VALUES (new.source, new.reads - old.reads)
	ON CONFLICT (source) DO UPDATE SET reads = reads + excluded.reads;
END;

CREATE TRIGGER crawl_tally_outcome AFTER UPDATE OF outcome ON crawl_ref WHEN old.outcome = 0 AND new.outcome != 0 BEGIN
	INSERT INTO crawl_tally (source, deposits, excerpts, excluded, mismatches)
	VALUES (new.source, new.outcome = 1, new.outcome = 2, new.outcome = 3, new.outcome = 4)
	ON CONFLICT (source) DO UPDATE SET deposits = deposits + excluded.deposits, excerpts = excerpts + excluded.excerpts,
		excluded = crawl_tally.excluded + excluded.excluded, mismatches = mismatches + excluded.mismatches;
END;

CREATE TRIGGER crawl_tally_deposit_failure AFTER UPDATE OF failures ON crawl_source WHEN new.failures > old.failures BEGIN
	INSERT INTO crawl_tally (source, deposit_failures) VALUES (new.source, new.failures - old.failures)
	ON CONFLICT (source) DO UPDATE SET deposit_failures = deposit_failures + excluded.deposit_failures;
END;
`,
	// 8: the process that took each schedule lease, so that a lease whose
	// process has ended is taken over at once by another on the machine.
	`
ALTER TABLE schedule_lease ADD COLUMN proc TEXT NOT NULL DEFAULT '';
`,
	// 9: the proofs' certificate chains stored once each, by digest: a
	// deposit's proof names its hops' chains in chains (the proofs stored
	// before keep theirs inline, chains NULL); deposit_proof gives every
	// proof whole.
	`
CREATE TABLE cert_chain (
	id     INTEGER PRIMARY KEY,
	digest TEXT    NOT NULL UNIQUE,
	chain  TEXT    NOT NULL
);
ALTER TABLE deposit ADD COLUMN chains TEXT;
CREATE VIEW deposit_proof AS
SELECT d.id AS deposit_id,
	CASE WHEN d.chains IS NULL THEN d.proof ELSE json_set(d.proof, '$.hops', json((
		SELECT json_group_array(json(hop)) FROM (
			SELECT CASE WHEN c.chain IS NULL THEN json(h.value) ELSE json_set(h.value, '$.chain', json(c.chain)) END AS hop
			FROM json_each(d.proof, '$.hops') h LEFT JOIN cert_chain c ON c.id = json_extract(d.chains, '$[' || h.key || ']')
			ORDER BY h.key))))
	END AS proof
FROM deposit d;
`,
	// 10: the wire length of the body each URL's validators were kept
	// from (fetch.Validator.Length: what a 304 to them saves); 0 where not
	// known, as for the rows stored before.
	`
ALTER TABLE validators ADD COLUMN length INTEGER NOT NULL DEFAULT 0;
`,
	// 11: the claims waiting for a host's turn, in the order they first
	// asked, each until its poll-by, with the process that asked.
	`
CREATE TABLE schedule_waiter (
	host       TEXT    NOT NULL,
	owner      TEXT    NOT NULL,
	seq        INTEGER NOT NULL,
	poll_by_ns INTEGER NOT NULL,
	proc       TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (host, owner)
) WITHOUT ROWID;
`,
	// 12: the references still pending, each source's in first-seen
	// order (CrawlState.Pending, a pass's list): a partial index, so a
	// pass reads the references it may queue, not all the source kept.
	`
CREATE INDEX crawl_ref_pending ON crawl_ref (source, first_seen_ns, key) WHERE outcome = 0;
`,
	// 13: Refs sorts a source's references (read whole, by the primary
	// key) rather than read them through an index in first-seen order:
	// every new reference wrote a page of that index besides its row.
	`
DROP INDEX crawl_ref_seen;
`,
	// 14: one process's hold on the schedule (DB.HoldSchedule): its
	// process and expiry, or, with no process, the floor a holder that
	// ended without releasing left every host's latest start at.
	`
CREATE TABLE schedule_hold (
	id         INTEGER PRIMARY KEY CHECK (id = 1),
	proc       TEXT    NOT NULL,
	expires_ns INTEGER NOT NULL
);
`,
}

// SchemaVersion is the schema version (PRAGMA user_version) this package
// writes: the number of migrations.
const SchemaVersion = 14

// migrate brings the file to SchemaVersion. It reads the header before
// writing anything, so a file it refuses is left as it was.
func (db *DB) migrate(ctx context.Context) error {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return wrap("open", db.path, err)
	}
	defer conn.Close()
	version, app, tables, err := header(ctx, conn)
	if err != nil {
		return wrap("open", db.path, err)
	}
	if version > SchemaVersion {
		return &SchemaError{Path: db.path, Version: version, Supported: SchemaVersion}
	}
	if app != applicationID && (app != 0 || tables > 0) {
		return &Error{Op: "open", Key: db.path, Err: fmt.Errorf("not a politefetch database (application_id %#x, %d tables): left untouched", app, tables)}
	}
	if tables == 0 {
		// Before the first table: the page size (newFilePageSize), and
		// freed pages returned to the file system by the sweeps'
		// incremental vacuum.
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA page_size=%d; PRAGMA auto_vacuum=INCREMENTAL", newFilePageSize)); err != nil {
			return wrap("open", db.path, err)
		}
	}
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return wrap("open: set WAL", db.path, err)
	}
	if mode != "wal" {
		return &Error{Op: "open: set WAL", Key: db.path, Err: fmt.Errorf("journal_mode is %q", mode)}
	}
	if version == SchemaVersion {
		// Nothing to migrate: still make sure we may write, so a read-only
		// file fails here rather than at the first refusal to record.
		// (A write transaction that deletes nothing: the file is not
		// changed, but SQLite checks it may be.)
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return wrap("open: check the file is writable", db.path, err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, "DELETE FROM schedule WHERE 0"); err != nil {
			return wrap("open: check the file is writable", db.path, err)
		}
		return nil
	}
	tx, err := conn.BeginTx(ctx, nil) // IMMEDIATE: one migrating process at a time
	if err != nil {
		return wrap("open: migrate", db.path, err)
	}
	defer tx.Rollback()
	// Another process may have migrated between our look and our lock.
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return wrap("open: migrate", db.path, err)
	}
	if version > SchemaVersion {
		return &SchemaError{Path: db.path, Version: version, Supported: SchemaVersion}
	}
	for v := version; v < SchemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return wrap(fmt.Sprintf("open: migrate to version %d", v+1), db.path, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id=%d; PRAGMA user_version=%d", applicationID, SchemaVersion)); err != nil {
		return wrap("open: migrate", db.path, err)
	}
	if err := tx.Commit(); err != nil {
		return wrap("open: migrate", db.path, err)
	}
	return nil
}

// header reads the file's schema version, application id and number of
// tables without writing.
func header(ctx context.Context, conn *sql.Conn) (version, app, tables int, err error) {
	if err = conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return
	}
	if err = conn.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return
	}
	err = conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'").Scan(&tables)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return
}
