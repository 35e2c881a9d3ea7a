package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/politefetch/politefetch/fetch"
)

// Schedule is the shared pacing schedule ([fetch.Schedule]) in the DB's
// schedule table: every process that opens the file and gives its Pacers
// this Schedule spaces its requests to a host from every other's (P1). A
// Claim is one statement, atomic across processes; a host's row is swept
// once its latest start is older than the DB's ScheduleRetain. It is safe
// for concurrent use.
type Schedule struct{ db *DB }

// Schedule returns the DB's shared pacing schedule.
func (db *DB) Schedule() *Schedule { return &Schedule{db} }

var _ fetch.Schedule = (*Schedule)(nil)

// Claim implements [fetch.Schedule].
func (s *Schedule) Claim(ctx context.Context, key string, now time.Time, gap time.Duration) (time.Time, bool, error) {
	if err := s.db.check("schedule claim", key); err != nil {
		return time.Time{}, false, err
	}
	var got int64
	err := s.db.stmts.schedClaim.QueryRowContext(ctx, key, toNS(now), int64(gap)).Scan(&got)
	if err == nil {
		return now, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, wrap("schedule claim", key, err)
	}
	// Too soon: the latest start (now or a little later) plus gap.
	err = s.db.stmts.schedGet.QueryRowContext(ctx, key).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) { // swept meanwhile: ask again now
		return now, false, nil
	}
	if err != nil {
		return time.Time{}, false, wrap("schedule claim", key, err)
	}
	return fromNS(got).Add(gap), false, nil
}

// Started implements [fetch.Schedule].
func (s *Schedule) Started(ctx context.Context, key string, at time.Time) error {
	if err := s.db.check("schedule started", key); err != nil {
		return err
	}
	_, err := s.db.stmts.schedStarted.ExecContext(ctx, key, toNS(at))
	return wrap("schedule started", key, err)
}
