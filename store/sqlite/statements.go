package sqlite

import (
	"context"
	"database/sql"
)

// statements are prepared once per DB (and, by database/sql, once per
// connection that runs them). Those on r read; those on w write.
type statements struct {
	all []*sql.Stmt

	ledgerGet, ledgerSet, ledgerInsert, ledgerDelete, ledgerSweep *sql.Stmt
	valGet, valPut, valDelete, valSweep                           *sql.Stmt
	schedSet, schedStarted, schedSweep, holdSweep                 *sql.Stmt
	slotState, leaseExpire, leasePut, leaseRenew, leaseDelete     *sql.Stmt
	robotsGet, robotsPut, robotsSweep                             *sql.Stmt
	leaseSweep, leaseProcs, leaseDropProc, schedRaise             *sql.Stmt
	waiterExpire, waiterPlace, waiterPut, waiterDelete            *sql.Stmt
	waiterSweep, waiterProcs, waiterDropProc                      *sql.Stmt

	srcSchedule, srcSetSchedule, srcLease, srcLeaseRead, srcSetLease *sql.Stmt
	srcRenew, srcRelease, srcFailure, srcFailRead, srcForget         *sql.Stmt
	refGet, refGetW, refPut, refList, refSettle, refForget           *sql.Stmt
	refOutcome, refDeposited, refPending, refAdd                     *sql.Stmt
	attemptAdd, attemptLeased, attemptDropOld, attemptForget         *sql.Stmt
	tallyAdd, tallyGet, tallyList, tallyForget                       *sql.Stmt

	depExists, envPut, envID, depPut, depList, depWithdraw, envDropOrphan *sql.Stmt
	chainID, chainPut, chainGet, chainDropOrphans                         *sql.Stmt
}

const refCols = `key, url, feed_id, list_id, published_ns, excerpt, first_seen_ns, outcome, note, settled_ns`

// refPendingSQL lists a source's pending references in first-seen order.
// Its outcome = 0 is written as in crawl_ref_pending's WHERE, so that
// SQLite reads that partial index, already in this order.
const refPendingSQL = `SELECT ` + refCols + ` FROM crawl_ref WHERE source = ?1 AND outcome = 0 ORDER BY first_seen_ns, key`

func (db *DB) prepare(ctx context.Context) error {
	s := &db.stmts
	for _, p := range []struct {
		dst   **sql.Stmt
		write bool
		sql   string
	}{
		{&s.ledgerGet, false, `SELECT strikes, refused_kind, last_status, last_challenge, last_at_ns, until_ns, suspended, next_check_ns, rev FROM ledger WHERE key = ?1`},
		{&s.ledgerSet, true, `UPDATE ledger SET strikes = ?2, refused_kind = ?3, last_status = ?4, last_challenge = ?5, last_at_ns = ?6, until_ns = ?7, suspended = ?8, next_check_ns = ?9, rev = rev + 1 WHERE key = ?1 AND rev = ?10`},
		{&s.ledgerInsert, true, `INSERT INTO ledger (key, strikes, refused_kind, last_status, last_challenge, last_at_ns, until_ns, suspended, next_check_ns, rev) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (key) DO NOTHING`},
		{&s.ledgerDelete, true, `DELETE FROM ledger WHERE key = ?1 AND rev = ?2`},
		{&s.ledgerSweep, true, `DELETE FROM ledger WHERE key IN (SELECT key FROM ledger WHERE strikes = 0 AND suspended = 0 AND until_ns <= ?1 LIMIT ?2)`},

		{&s.valGet, false, `SELECT etag, last_modified, length FROM validators WHERE url = ?1`},
		{&s.valPut, true, `INSERT INTO validators (url, etag, last_modified, stored_ns, length) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, stored_ns = excluded.stored_ns, length = excluded.length`},
		{&s.valDelete, true, `DELETE FROM validators WHERE url = ?1`},
		{&s.valSweep, true, `DELETE FROM validators WHERE url IN (SELECT url FROM validators WHERE stored_ns < ?1 LIMIT ?2)`},

		{&s.schedSet, true, `INSERT INTO schedule (host, last_start_ns) VALUES (?1, ?2) ON CONFLICT (host) DO UPDATE SET last_start_ns = excluded.last_start_ns`},
		{&s.schedStarted, true, `UPDATE schedule SET last_start_ns = ?2 WHERE host = ?1 AND last_start_ns < ?2`},
		{&s.schedSweep, true, `DELETE FROM schedule WHERE host IN (SELECT host FROM schedule WHERE last_start_ns < ?1 LIMIT ?2)`},
		{&s.holdSweep, true, `DELETE FROM schedule_hold WHERE id = 1 AND proc = '' AND expires_ns < ?1 AND ?2 > 0`},
		{&s.leaseExpire, true, `DELETE FROM schedule_lease WHERE host = ?1 AND expires_ns <= ?2`},
		// A host's leases (how many, the earliest expiry, any start
		// pending), its latest start and its waiters' earliest poll-by.
		{&s.slotState, true, `SELECT count(*), min(expires_ns), coalesce(max(start_pending), 0), (SELECT last_start_ns FROM schedule WHERE host = ?1), (SELECT min(poll_by_ns) FROM schedule_waiter WHERE host = ?1), (SELECT proc FROM schedule_hold WHERE id = 1), (SELECT expires_ns FROM schedule_hold WHERE id = 1) FROM schedule_lease WHERE host = ?1`},
		{&s.leasePut, true, `INSERT INTO schedule_lease (host, owner, expires_ns, start_pending, proc) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (host, owner) DO UPDATE SET expires_ns = excluded.expires_ns, start_pending = excluded.start_pending, proc = excluded.proc`},
		{&s.leaseProcs, true, `SELECT DISTINCT proc FROM schedule_lease WHERE host = ?1 AND proc != '' AND proc != ?2`},
		{&s.leaseDropProc, true, `DELETE FROM schedule_lease WHERE host = ?1 AND proc = ?2`},
		{&s.schedRaise, true, `INSERT INTO schedule (host, last_start_ns) VALUES (?1, ?2) ON CONFLICT (host) DO UPDATE SET last_start_ns = max(last_start_ns, excluded.last_start_ns)`},
		{&s.leaseRenew, true, `UPDATE schedule_lease SET expires_ns = ?4 WHERE host = ?1 AND owner = ?2 AND expires_ns > ?3`},
		{&s.leaseDelete, true, `DELETE FROM schedule_lease WHERE host = ?1 AND owner = ?2 AND expires_ns > ?3`},
		{&s.waiterExpire, true, `DELETE FROM schedule_waiter WHERE host = ?1 AND poll_by_ns <= ?2`},
		// owner's place, the waiters before it (all, if it is none), and
		// the first waiter's poll-by.
		{&s.waiterPlace, true, `SELECT m.seq, (SELECT count(*) FROM schedule_waiter WHERE host = ?1 AND (m.seq IS NULL OR seq < m.seq)), (SELECT poll_by_ns FROM schedule_waiter WHERE host = ?1 ORDER BY seq LIMIT 1) FROM (SELECT (SELECT seq FROM schedule_waiter WHERE host = ?1 AND owner = ?2) AS seq) m`},
		{&s.waiterPut, true, `INSERT INTO schedule_waiter (host, owner, seq, poll_by_ns, proc) VALUES (?1, ?2, (SELECT coalesce(max(seq), 0) + 1 FROM schedule_waiter WHERE host = ?1), ?3, ?4) ON CONFLICT (host, owner) DO UPDATE SET poll_by_ns = excluded.poll_by_ns, proc = excluded.proc`},
		{&s.waiterProcs, true, `SELECT DISTINCT proc FROM schedule_waiter WHERE host = ?1 AND proc != '' AND proc != ?2`},
		{&s.waiterDropProc, true, `DELETE FROM schedule_waiter WHERE host = ?1 AND proc = ?2`},
		{&s.waiterDelete, true, `DELETE FROM schedule_waiter WHERE host = ?1 AND owner = ?2`},
		{&s.waiterSweep, true, `DELETE FROM schedule_waiter WHERE (host, owner) IN (SELECT host, owner FROM schedule_waiter WHERE poll_by_ns <= ?1 LIMIT ?2)`},

		{&s.robotsGet, false, `SELECT outcome, status, failure, body, fetched_at_ns, expires_ns, stale, last_failure FROM robots WHERE host = ?1`},
		{&s.robotsPut, true, `INSERT INTO robots (host, outcome, status, failure, body, fetched_at_ns, expires_ns, stale, last_failure) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (host) DO UPDATE SET outcome = excluded.outcome, status = excluded.status, failure = excluded.failure, body = excluded.body, fetched_at_ns = excluded.fetched_at_ns, expires_ns = excluded.expires_ns, stale = excluded.stale, last_failure = excluded.last_failure`},
		{&s.robotsSweep, true, `DELETE FROM robots WHERE host IN (SELECT host FROM robots WHERE expires_ns < ?1 LIMIT ?2)`},
		{&s.leaseSweep, true, `DELETE FROM schedule_lease WHERE (host, owner) IN (SELECT host, owner FROM schedule_lease WHERE expires_ns <= ?1 LIMIT ?2)`},

		{&s.srcSchedule, false, `SELECT last_trigger_ns, next_trigger_ns, last_backlog_ns, next_backlog_ns, embargo_ns, slowed_ns FROM crawl_source WHERE source = ?1`},
		{&s.srcSetSchedule, true, `INSERT INTO crawl_source (source, last_trigger_ns, next_trigger_ns, last_backlog_ns, next_backlog_ns, embargo_ns, slowed_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (source) DO UPDATE SET last_trigger_ns = excluded.last_trigger_ns, next_trigger_ns = excluded.next_trigger_ns, last_backlog_ns = excluded.last_backlog_ns, next_backlog_ns = excluded.next_backlog_ns, embargo_ns = excluded.embargo_ns, slowed_ns = excluded.slowed_ns`},
		{&s.srcLease, true, `SELECT lease_owner, lease_expires_ns, pass FROM crawl_source WHERE source = ?1`},
		{&s.srcLeaseRead, false, `SELECT lease_owner, lease_expires_ns, pass FROM crawl_source WHERE source = ?1`},
		{&s.srcSetLease, true, `INSERT INTO crawl_source (source, lease_owner, lease_expires_ns, pass, failures) VALUES (?1, ?2, ?3, ?4, 0) ON CONFLICT (source) DO UPDATE SET lease_owner = excluded.lease_owner, lease_expires_ns = excluded.lease_expires_ns, pass = excluded.pass, failures = 0`},
		{&s.srcRenew, true, `UPDATE crawl_source SET lease_expires_ns = ?4 WHERE source = ?1 AND lease_owner = ?2 AND lease_owner != '' AND lease_expires_ns > ?3 RETURNING pass`},
		{&s.srcRelease, true, `UPDATE crawl_source SET lease_owner = '', lease_expires_ns = 0 WHERE source = ?1 AND lease_owner = ?2 AND lease_owner != ''`},
		{&s.srcFailure, true, `UPDATE crawl_source SET failures = CASE WHEN ?3 THEN failures + 1 ELSE 0 END WHERE source = ?1 AND pass = ?2 RETURNING failures`},
		{&s.srcFailRead, false, `SELECT failures, pass FROM crawl_source WHERE source = ?1`},
		{&s.srcForget, true, `UPDATE crawl_source SET last_trigger_ns = 0, next_trigger_ns = 0, last_backlog_ns = 0, next_backlog_ns = 0, embargo_ns = 0, slowed_ns = 0, failures = 0 WHERE source = ?1`},
		{&s.refGet, false, `SELECT ` + refCols + ` FROM crawl_ref WHERE source = ?1 AND key = ?2`},
		{&s.refGetW, true, `SELECT ` + refCols + ` FROM crawl_ref WHERE source = ?1 AND key = ?2`},
		{&s.refPut, true, `INSERT INTO crawl_ref (source, ` + refCols + `) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT (source, key) DO UPDATE SET url = excluded.url, feed_id = excluded.feed_id, list_id = excluded.list_id, published_ns = excluded.published_ns, excerpt = excluded.excerpt`},
		{&s.refAdd, true, `INSERT INTO crawl_ref (source, ` + refCols + `) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT (source, key) DO NOTHING`},
		{&s.refList, false, `SELECT ` + refCols + ` FROM crawl_ref WHERE source = ?1 ORDER BY first_seen_ns, key`},
		{&s.refPending, false, refPendingSQL},
		{&s.refOutcome, false, `SELECT outcome, note FROM crawl_ref WHERE source = ?1 AND key = ?2`},
		{&s.refDeposited, true, `UPDATE crawl_ref SET outcome = ?3, note = '', settled_ns = ?4 WHERE source = ?1 AND key = ?2 AND outcome = ?5`},
		{&s.refSettle, true, `UPDATE crawl_ref SET outcome = ?3, note = ?4, settled_ns = ?5 WHERE source = ?1 AND key = ?2`},
		{&s.refForget, true, `DELETE FROM crawl_ref WHERE source = ?1`},
		{&s.attemptAdd, true, `INSERT INTO crawl_attempt (source, pass, key, reads) VALUES (?1, ?2, ?3, 1) ON CONFLICT (source, pass, key) DO UPDATE SET reads = reads + 1 RETURNING reads`},
		// attemptAdd if the source's pass is ?2, in one statement.
		{&s.attemptLeased, true, `INSERT INTO crawl_attempt (source, pass, key, reads) SELECT ?1, ?2, ?3, 1 FROM crawl_source WHERE source = ?1 AND pass = ?2 ON CONFLICT (source, pass, key) DO UPDATE SET reads = reads + 1 RETURNING reads`},
		{&s.attemptDropOld, true, `DELETE FROM crawl_attempt WHERE source = ?1 AND pass < ?2`},
		{&s.attemptForget, true, `DELETE FROM crawl_attempt WHERE source = ?1`},
		{&s.tallyAdd, true, `INSERT INTO crawl_tally (source, reads, trigger_reads, not_modified, robots_reads, image_reads, deposits, excerpts, excluded, mismatches, refusals, failures, deposit_failures)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
			ON CONFLICT (source) DO UPDATE SET reads = reads + excluded.reads, trigger_reads = trigger_reads + excluded.trigger_reads,
				not_modified = not_modified + excluded.not_modified, robots_reads = robots_reads + excluded.robots_reads,
				image_reads = image_reads + excluded.image_reads, deposits = deposits + excluded.deposits, excerpts = excerpts + excluded.excerpts,
				excluded = crawl_tally.excluded + excluded.excluded, mismatches = mismatches + excluded.mismatches,
				refusals = refusals + excluded.refusals, failures = failures + excluded.failures, deposit_failures = deposit_failures + excluded.deposit_failures`},
		{&s.tallyGet, false, `SELECT ` + tallyCols + ` FROM crawl_tally WHERE source = ?1`},
		{&s.tallyList, false, `SELECT source, ` + tallyCols + ` FROM crawl_tally ORDER BY source`},
		{&s.tallyForget, true, `DELETE FROM crawl_tally WHERE source = ?1`},

		{&s.depExists, true, `SELECT 1 FROM deposit WHERE source = ?1 AND digest = ?2`},
		{&s.envPut, true, `INSERT INTO envelope (digest, length, body) VALUES (?1, ?2, ?3) ON CONFLICT (digest) DO NOTHING RETURNING id`},
		{&s.envID, true, `SELECT id FROM envelope WHERE digest = ?1`},
		{&s.depPut, true, `INSERT INTO deposit (source, key, url, read_at_ns, digest, media_type, envelope_id, proof, article, excerpt, stored_ns, image, chains) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) ON CONFLICT (source, digest) DO NOTHING`},
		{&s.depList, false, `SELECT d.key, d.url, d.read_at_ns, d.digest, d.media_type, e.digest, e.body, d.proof, d.article, d.excerpt, d.image, d.chains FROM deposit d LEFT JOIN envelope e ON e.id = d.envelope_id WHERE d.source = ?1 AND d.read_at_ns >= ?2 ORDER BY d.id`},
		{&s.depWithdraw, true, `DELETE FROM deposit WHERE source = ?1 RETURNING envelope_id, chains`},
		{&s.chainID, true, `SELECT id FROM cert_chain WHERE digest = ?1`},
		{&s.chainPut, true, `INSERT INTO cert_chain (digest, chain) VALUES (?1, ?2) RETURNING id`},
		{&s.chainGet, false, `SELECT chain FROM cert_chain WHERE id = ?1`},
		{&s.chainDropOrphans, true, `DELETE FROM cert_chain WHERE id IN (SELECT value FROM json_each(?1)) AND id NOT IN (SELECT j.value FROM deposit d, json_each(d.chains) j WHERE d.chains IS NOT NULL AND j.value IS NOT NULL)`},
		{&s.envDropOrphan, true, `DELETE FROM envelope WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM deposit WHERE envelope_id = ?1)`},
	} {
		on := db.r
		if p.write {
			on = db.w
		}
		st, err := on.PrepareContext(ctx, p.sql)
		if err != nil {
			s.close()
			return wrap("open: prepare", p.sql, err)
		}
		*p.dst = st
		s.all = append(s.all, st)
	}
	return nil
}

func (s *statements) close() {
	for _, st := range s.all {
		st.Close()
	}
	s.all = nil
}

// changed returns the rows res says its statement changed, or err, the
// statement's own error: changed(st.ExecContext(...)).
func changed(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// deleteBatch runs a sweep statement whose last argument is the batch size
// and returns the rows it deleted.
func (db *DB) deleteBatch(ctx context.Context, op string, st *sql.Stmt, args ...any) (int, error) {
	if err := db.check(op, ""); err != nil {
		return 0, err
	}
	n, err := changed(st.ExecContext(ctx, append(args, db.opt.SweepBatch)...))
	return int(n), wrap(op, "", err)
}
