package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/politefetch/politefetch/robots"
)

// RobotsStore keeps the robots cache's [robots.Record] per host in the
// DB's robots table, body included, so a restarted crawler obeys the
// robots.txt it last read without asking again before it expires. A
// record is swept once it has been expired for longer than the DB's
// RobotsRetain (until then the cache may still use it as the last good
// copy). It is safe for concurrent use.
type RobotsStore struct{ db *DB }

// Robots returns the DB's robots.txt store.
func (db *DB) Robots() *RobotsStore { return &RobotsStore{db} }

var _ robots.Store = (*RobotsStore)(nil)

// Get implements [robots.Store]. It returns a record past its expiry (the
// cache needs the last good copy) until the sweep deletes it.
func (s *RobotsStore) Get(ctx context.Context, host string) (robots.Record, bool, error) {
	if err := s.db.check("robots get", host); err != nil {
		return robots.Record{}, false, err
	}
	var (
		r                robots.Record
		outcome          int
		fetched, expires int64
	)
	err := s.db.stmts.robotsGet.QueryRowContext(ctx, host).Scan(&outcome, &r.Status, &r.Failure, &r.Body,
		&fetched, &expires, &r.Stale, &r.LastFailure)
	if errors.Is(err, sql.ErrNoRows) {
		return robots.Record{}, false, nil
	}
	if err != nil {
		return robots.Record{}, false, wrap("robots get", host, err)
	}
	r.Outcome, r.FetchedAt, r.Expires = robots.Outcome(outcome), fromNS(fetched), fromNS(expires)
	return r, true, nil
}

// Put implements [robots.Store].
func (s *RobotsStore) Put(ctx context.Context, host string, r robots.Record) error {
	if err := s.db.check("robots put", host); err != nil {
		return err
	}
	body := r.Body
	if body == nil {
		body = []byte{}
	}
	_, err := s.db.exec(ctx, "robots put", host, s.db.stmts.robotsPut, host, int(r.Outcome), r.Status, r.Failure, body,
		toNS(r.FetchedAt), toNS(r.Expires), r.Stale, r.LastFailure)
	return err
}
