package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/politefetch/politefetch/fetch"
)

// Schedule is the shared pacing schedule ([fetch.Schedule]) in the DB's
// schedule and schedule_lease tables: every process that opens the file and
// gives its Pacers this Schedule spaces its requests to a host from every
// other's, and holds the host's in-flight limit across them (P1). Acquire is
// one IMMEDIATE transaction, atomic across processes; the time is the
// callers' (processes sharing a file share a machine's clock). A host's
// start row is swept once its latest start is older than the DB's
// ScheduleRetain; a lease row goes at its release, or at the host's next
// Acquire once expired. It is safe for concurrent use.
type Schedule struct{ db *DB }

// Schedule returns the DB's shared pacing schedule.
func (db *DB) Schedule() *Schedule { return &Schedule{db} }

var _ fetch.Schedule = (*Schedule)(nil)

// Acquire implements [fetch.Schedule].
func (s *Schedule) Acquire(ctx context.Context, c fetch.Claim) (time.Duration, bool, error) {
	now := toNS(c.Now)
	var wait time.Duration
	err := s.db.write(ctx, "schedule acquire", c.Key, false, func(tx *sql.Tx) error {
		if _, err := tx.StmtContext(ctx, s.db.stmts.leaseExpire).ExecContext(ctx, c.Key, now); err != nil {
			return err
		}
		var n int64
		var first sql.NullInt64
		if err := tx.StmtContext(ctx, s.db.stmts.leaseCount).QueryRowContext(ctx, c.Key).Scan(&n, &first); err != nil {
			return err
		}
		if n >= int64(max(c.Limit, 1)) && first.Valid {
			wait = time.Duration(first.Int64 - now)
		}
		var last int64
		switch err := tx.StmtContext(ctx, s.db.stmts.schedGet).QueryRowContext(ctx, c.Key).Scan(&last); {
		case err == nil:
			wait = max(wait, time.Duration(last+int64(c.Gap)-now))
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if wait > 0 {
			return nil
		}
		if _, err := tx.StmtContext(ctx, s.db.stmts.schedSet).ExecContext(ctx, c.Key, now); err != nil {
			return err
		}
		_, err := tx.StmtContext(ctx, s.db.stmts.leasePut).ExecContext(ctx, c.Key, c.Owner, now+int64(c.TTL))
		return err
	})
	if err != nil {
		return 0, false, err
	}
	return wait, wait <= 0, nil
}

// Started implements [fetch.Schedule].
func (s *Schedule) Started(ctx context.Context, key, _ string, now time.Time) error {
	if err := s.db.check("schedule started", key); err != nil {
		return err
	}
	_, err := s.db.stmts.schedStarted.ExecContext(ctx, key, toNS(now))
	return wrap("schedule started", key, err)
}

// Renew implements [fetch.Schedule].
func (s *Schedule) Renew(ctx context.Context, key, owner string, now time.Time, ttl time.Duration) error {
	return s.lease(ctx, "schedule renew", s.db.stmts.leaseRenew, key, key, owner, toNS(now), toNS(now)+int64(ttl))
}

// Release implements [fetch.Schedule].
func (s *Schedule) Release(ctx context.Context, key, owner string, now time.Time) error {
	return s.lease(ctx, "schedule release", s.db.stmts.leaseDelete, key, key, owner, toNS(now))
}

// lease runs stmt with args (a renewal or a deletion of one owner's live
// lease on key) and reports fetch.ErrLeaseNotHeld when it touched no row.
func (s *Schedule) lease(ctx context.Context, op string, stmt *sql.Stmt, key string, args ...any) error {
	if err := s.db.check(op, key); err != nil {
		return err
	}
	res, err := stmt.ExecContext(ctx, args...)
	if err != nil {
		return wrap(op, key, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return wrap(op, key, err)
	} else if n == 0 {
		return fetch.ErrLeaseNotHeld
	}
	return nil
}
