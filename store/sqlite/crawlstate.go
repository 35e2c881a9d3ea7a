package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/feed"
)

// CrawlState is the crawler's [crawl.State] in the DB's crawl_source,
// crawl_ref and crawl_attempt tables: each source's schedule, pass lease
// and pass number, the references it announced (so a restarted crawler
// knows what it has already read), and the per-pass counters. The lease
// operations and the counters are each one IMMEDIATE transaction or one
// statement, atomic across processes; the time is the callers'. A new pass
// deletes the attempt counts of the older ones. Crawl state is never swept:
// [CrawlState.Forget] removes a source's. It is safe for concurrent use.
type CrawlState struct{ db *DB }

// CrawlState returns the DB's crawl state store.
func (db *DB) CrawlState() *CrawlState { return &CrawlState{db} }

var _ crawl.State = (*CrawlState)(nil)

// Schedule implements [crawl.State].
func (s *CrawlState) Schedule(ctx context.Context, source string) (crawl.Schedule, error) {
	if err := s.db.check("crawl schedule get", source); err != nil {
		return crawl.Schedule{}, err
	}
	var lt, nt, lb, nb, em, sl int64
	err := s.db.stmts.srcSchedule.QueryRowContext(ctx, source).Scan(&lt, &nt, &lb, &nb, &em, &sl)
	if errors.Is(err, sql.ErrNoRows) {
		return crawl.Schedule{}, nil
	}
	if err != nil {
		return crawl.Schedule{}, wrap("crawl schedule get", source, err)
	}
	return crawl.Schedule{LastTrigger: fromNS(lt), NextTrigger: fromNS(nt), LastBacklog: fromNS(lb), NextBacklog: fromNS(nb),
		Embargo: fromNS(em), Slowed: fromNS(sl)}, nil
}

// SetSchedule implements [crawl.State].
func (s *CrawlState) SetSchedule(ctx context.Context, source string, sc crawl.Schedule) error {
	if err := s.db.check("crawl schedule set", source); err != nil {
		return err
	}
	_, err := s.db.exec(ctx, "crawl schedule set", source, s.db.stmts.srcSetSchedule, source, toNS(sc.LastTrigger), toNS(sc.NextTrigger),
		toNS(sc.LastBacklog), toNS(sc.NextBacklog), toNS(sc.Embargo), toNS(sc.Slowed))
	return err
}

// lease reads the source's lease and pass inside tx.
func (s *CrawlState) lease(ctx context.Context, tx *sql.Tx, source string) (crawl.Lease, error) {
	var l crawl.Lease
	var exp int64
	err := tx.StmtContext(ctx, s.db.stmts.srcLease).QueryRowContext(ctx, source).Scan(&l.Owner, &exp, &l.Pass)
	if errors.Is(err, sql.ErrNoRows) {
		return crawl.Lease{}, nil
	}
	l.Expires = fromNS(exp)
	return l, err
}

// AcquireLease implements [crawl.State] in one IMMEDIATE transaction.
func (s *CrawlState) AcquireLease(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (crawl.Lease, error) {
	if owner == "" || ttl <= 0 {
		return crawl.Lease{}, &Error{Op: "crawl lease acquire", Key: source, Err: errors.New("a lease needs an owner and a positive ttl")}
	}
	var got crawl.Lease
	var held error
	err := s.db.write(ctx, "crawl lease acquire", source, false, func(ctx context.Context, tx *sql.Tx) error {
		got, held = crawl.Lease{}, nil
		cur, err := s.lease(ctx, tx, source)
		if err != nil {
			return err
		}
		if cur.Owner != "" && now.Before(cur.Expires) {
			held = &crawl.LeaseError{Source: source, Held: cur, Err: crawl.ErrLeaseHeld}
			return nil
		}
		got = crawl.Lease{Owner: owner, Expires: now.Add(ttl), Pass: cur.Pass + 1}
		if _, err := tx.StmtContext(ctx, s.db.stmts.srcSetLease).ExecContext(ctx, source, owner, toNS(got.Expires), int64(got.Pass)); err != nil {
			return err
		}
		_, err = tx.StmtContext(ctx, s.db.stmts.attemptDropOld).ExecContext(ctx, source, int64(got.Pass))
		return err
	})
	if err != nil {
		return crawl.Lease{}, err
	}
	if held != nil {
		return crawl.Lease{}, held
	}
	return got, nil
}

// RenewLease implements [crawl.State] in one statement.
func (s *CrawlState) RenewLease(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (crawl.Lease, error) {
	if err := s.db.check("crawl lease renew", source); err != nil {
		return crawl.Lease{}, err
	}
	l := crawl.Lease{Owner: owner, Expires: now.Add(ttl)}
	var pass int64
	found := false
	err := s.db.write(ctx, "crawl lease renew", source, false, func(ctx context.Context, tx *sql.Tx) error {
		found = false
		err := tx.StmtContext(ctx, s.db.stmts.srcRenew).QueryRowContext(ctx, source, owner, toNS(now), toNS(l.Expires)).Scan(&pass)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return crawl.Lease{}, err
	}
	if found {
		l.Pass = uint64(pass)
		return l, nil
	}
	return crawl.Lease{}, s.lost(ctx, source)
}

// lost is the ErrLeaseLost of source, with its lease as it stands.
func (s *CrawlState) lost(ctx context.Context, source string) error {
	var held crawl.Lease
	var exp int64
	err := s.db.stmts.srcLeaseRead.QueryRowContext(ctx, source).Scan(&held.Owner, &exp, &held.Pass)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return wrap("crawl lease read", source, err)
	}
	held.Expires = fromNS(exp)
	return &crawl.LeaseError{Source: source, Held: held, Err: crawl.ErrLeaseLost}
}

// ReleaseLease implements [crawl.State].
func (s *CrawlState) ReleaseLease(ctx context.Context, source, owner string) error {
	if err := s.db.check("crawl lease release", source); err != nil {
		return err
	}
	_, err := s.db.exec(ctx, "crawl lease release", source, s.db.stmts.srcRelease, source, owner)
	return err
}

// scanRef scans a crawl_ref row (the columns of refCols).
func scanRef(sc interface{ Scan(...any) error }, r *crawl.RefState) error {
	_, err := scanRefRaw(sc, r)
	return err
}

// scanRefRaw is scanRef that also returns the excerpt's JSON as stored.
func scanRefRaw(sc interface{ Scan(...any) error }, r *crawl.RefState) (sql.NullString, error) {
	var pub, first, settled int64
	var outcome int
	var excerpt sql.NullString
	if err := sc.Scan(&r.Key, &r.URL, &r.FeedID, &r.ListID, &pub, &excerpt, &first, &outcome, &r.Note, &settled); err != nil {
		return excerpt, err
	}
	r.Published, r.FirstSeen, r.Settled, r.Outcome = fromNS(pub), fromNS(first), fromNS(settled), crawl.Outcome(outcome)
	r.Excerpt = nil
	if excerpt.Valid {
		r.Excerpt = new(feed.Excerpt)
		if err := json.Unmarshal([]byte(excerpt.String), r.Excerpt); err != nil {
			return excerpt, &Error{Op: "crawl ref read", Key: r.Key, Kind: ErrCorrupt, Err: err}
		}
	}
	return excerpt, nil
}

func excerptJSON(e *feed.Excerpt) (sql.NullString, error) {
	if e == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(e)
	return sql.NullString{String: string(b), Valid: true}, err
}

// See implements [crawl.State] in one IMMEDIATE transaction.
func (s *CrawlState) See(ctx context.Context, source string, ref crawl.RefState, now time.Time) (crawl.RefState, bool, error) {
	if ref.Key == "" {
		return crawl.RefState{}, false, &Error{Op: "crawl ref see", Key: source, Err: errors.New("a reference needs a key")}
	}
	if err := s.db.check("crawl ref see", source+" "+ref.Key); err != nil {
		return crawl.RefState{}, false, err
	}
	// A reference seen again as it stands (a feed read again) is only
	// read: the write below would change nothing.
	cur, found, same, err := s.unchanged(ctx, source, ref)
	if err != nil {
		return crawl.RefState{}, false, err
	} else if same {
		return cur, false, nil
	}
	var out crawl.RefState
	var created bool
	err = s.db.write(ctx, "crawl ref see", source+" "+ref.Key, false, func(ctx context.Context, tx *sql.Tx) error {
		out, created = crawl.RefState{}, false
		if !found {
			// Not there when read just now: inserted without reading it
			// again, unless another writer added it meanwhile (then
			// nothing is inserted, and it is read and merged as below).
			out = crawl.RefState{Key: ref.Key, FirstSeen: now}
			out.Merge(ref)
			n, err := putRef(ctx, tx, s.db.stmts.refAdd, source, out)
			if err != nil || n == 1 {
				created = err == nil
				return err
			}
			out = crawl.RefState{}
		}
		err := scanRef(tx.StmtContext(ctx, s.db.stmts.refGetW).QueryRowContext(ctx, source, ref.Key), &out)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			created = true
			out = crawl.RefState{Key: ref.Key, FirstSeen: now}
		case err != nil:
			return err
		}
		out.Merge(ref)
		_, err = putRef(ctx, tx, s.db.stmts.refPut, source, out)
		return err
	})
	if err != nil {
		return crawl.RefState{}, false, err
	}
	return out, created, nil
}

// putRef runs stmt (refPut, or refAdd) in tx for source's reference r and
// returns how many rows it changed.
func putRef(ctx context.Context, tx *sql.Tx, stmt *sql.Stmt, source string, r crawl.RefState) (int64, error) {
	ex, err := excerptJSON(r.Excerpt)
	if err != nil {
		return 0, err
	}
	return changed(tx.StmtContext(ctx, stmt).ExecContext(ctx, source, r.Key, r.URL, r.FeedID, r.ListID,
		toNS(r.Published), ex, toNS(r.FirstSeen), int(r.Outcome), r.Note, toNS(r.Settled)))
}

// unchanged reads source's reference ref.Key and reports whether it is
// stored (found) and whether merging ref into it changes nothing that is
// stored (same), with the reference as it stands.
func (s *CrawlState) unchanged(ctx context.Context, source string, ref crawl.RefState) (cur crawl.RefState, found, same bool, err error) {
	stored, err := scanRefRaw(s.db.stmts.refGet.QueryRowContext(ctx, source, ref.Key), &cur)
	if errors.Is(err, sql.ErrNoRows) {
		return crawl.RefState{}, false, false, nil
	}
	if err != nil {
		return crawl.RefState{}, false, false, wrap("crawl ref see", source+" "+ref.Key, err)
	}
	merged := cur
	merged.Merge(ref)
	if merged.URL != cur.URL || merged.FeedID != cur.FeedID || merged.ListID != cur.ListID || toNS(merged.Published) != toNS(cur.Published) {
		return crawl.RefState{}, true, false, nil
	}
	if ref.Excerpt != nil {
		ex, err := excerptJSON(merged.Excerpt)
		if err != nil || ex != stored {
			return crawl.RefState{}, true, false, nil
		}
	}
	return cur, true, true, nil
}

// Ref implements [crawl.State].
func (s *CrawlState) Ref(ctx context.Context, source, key string) (crawl.RefState, bool, error) {
	if err := s.db.check("crawl ref get", source+" "+key); err != nil {
		return crawl.RefState{}, false, err
	}
	var r crawl.RefState
	err := scanRef(s.db.stmts.refGet.QueryRowContext(ctx, source, key), &r)
	if errors.Is(err, sql.ErrNoRows) {
		return crawl.RefState{}, false, nil
	}
	if err != nil {
		return crawl.RefState{}, false, wrap("crawl ref get", source+" "+key, err)
	}
	return r, true, nil
}

// Refs implements [crawl.State].
func (s *CrawlState) Refs(ctx context.Context, source string) ([]crawl.RefState, error) {
	return s.list(ctx, "crawl refs", s.db.stmts.refList, source)
}

// Pending implements [crawl.State]: one read of the partial index
// crawl_ref_pending, which holds only the references still pending.
func (s *CrawlState) Pending(ctx context.Context, source string) ([]crawl.RefState, error) {
	return s.list(ctx, "crawl pending", s.db.stmts.refPending, source)
}

// list reads the references st selects for source.
func (s *CrawlState) list(ctx context.Context, op string, st *sql.Stmt, source string) ([]crawl.RefState, error) {
	if err := s.db.check(op, source); err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, source)
	if err != nil {
		return nil, wrap(op, source, err)
	}
	defer rows.Close()
	var out []crawl.RefState
	for rows.Next() {
		var r crawl.RefState
		if err := scanRef(rows, &r); err != nil {
			return nil, wrap(op, source, err)
		}
		out = append(out, r)
	}
	return out, wrap(op, source, rows.Err())
}

// Settle implements [crawl.State].
func (s *CrawlState) Settle(ctx context.Context, source, key string, outcome crawl.Outcome, note string, now time.Time) error {
	if err := s.db.check("crawl ref settle", source+" "+key); err != nil {
		return err
	}
	if outcome == crawl.Deposited && note == "" {
		// A full deposit's Put has settled it already (see Deposits):
		// nothing to do if this DB's Put did, else only read.
		if s.db.putSettled.take(refID{source, key}) {
			return nil
		}
		var cur int
		var curNote string
		err := s.db.stmts.refOutcome.QueryRowContext(ctx, source, key).Scan(&cur, &curNote)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return wrap("crawl ref settle", source+" "+key, err)
		}
		if err == nil && crawl.Outcome(cur) == crawl.Deposited && curNote == "" {
			return nil
		}
	}
	n, err := s.db.exec(ctx, "crawl ref settle", source+" "+key, s.db.stmts.refSettle, source, key, int(outcome), note, toNS(now))
	if err != nil {
		return err
	}
	if n == 0 {
		return wrap("crawl ref settle", source+" "+key, errors.New("unknown reference"))
	}
	return nil
}

// Attempt implements [crawl.State] in one IMMEDIATE transaction.
func (s *CrawlState) Attempt(ctx context.Context, source string, pass uint64, key string) (int, error) {
	var n int
	var lost error
	err := s.db.write(ctx, "crawl attempt", source+" "+key, false, func(ctx context.Context, tx *sql.Tx) error {
		n, lost = 0, nil
		// The count, if the pass is the source's; else the lease as it
		// stands, for the error (or the count, for a pass 0 of a source
		// not yet known).
		err := tx.StmtContext(ctx, s.db.stmts.attemptLeased).QueryRowContext(ctx, source, int64(pass), key).Scan(&n)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		cur, err := s.lease(ctx, tx, source)
		if err != nil {
			return err
		}
		if cur.Pass != pass {
			lost = &crawl.LeaseError{Source: source, Held: cur, Err: crawl.ErrLeaseLost}
			return nil
		}
		return tx.StmtContext(ctx, s.db.stmts.attemptAdd).QueryRowContext(ctx, source, int64(pass), key).Scan(&n)
	})
	if err != nil {
		return 0, err
	}
	if lost != nil {
		return 0, lost
	}
	return n, nil
}

// Failure implements [crawl.State] in one statement.
func (s *CrawlState) Failure(ctx context.Context, source string, pass uint64, failed bool) (int, error) {
	if err := s.db.check("crawl failure", source); err != nil {
		return 0, err
	}
	if !failed {
		// A success with the count at zero in this pass changes nothing:
		// only read.
		var n, p int64
		err := s.db.stmts.srcFailRead.QueryRowContext(ctx, source).Scan(&n, &p)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, wrap("crawl failure", source, err)
		}
		if err == nil && n == 0 && uint64(p) == pass {
			return 0, nil
		}
	}
	var n int
	found := false
	err := s.db.write(ctx, "crawl failure", source, false, func(ctx context.Context, tx *sql.Tx) error {
		found = false
		err := tx.StmtContext(ctx, s.db.stmts.srcFailure).QueryRowContext(ctx, source, int64(pass), failed).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, s.lost(ctx, source)
	}
	return n, nil
}

// Forget implements [crawl.State]: the source's references, counters and
// schedule go; its pass number (and any lease) stays, so a later pass is
// never confused with an earlier one.
func (s *CrawlState) Forget(ctx context.Context, source string) error {
	err := s.db.write(ctx, "crawl forget", source, true, func(ctx context.Context, tx *sql.Tx) error {
		for _, st := range []*sql.Stmt{s.db.stmts.refForget, s.db.stmts.attemptForget, s.db.stmts.srcForget, s.db.stmts.tallyForget} {
			if _, err := tx.StmtContext(ctx, st).ExecContext(ctx, source); err != nil {
				return err
			}
		}
		return nil
	})
	// The rows are gone: a reference seen anew, pending, must not find
	// its old Put's settling remembered.
	s.db.putSettled.reset()
	return err
}
