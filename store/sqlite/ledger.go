package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/politefetch/politefetch/backoff"
)

// LedgerStore is the refusal ledger's [backoff.Store] in the DB's ledger
// table. Get for a host with nothing against it is one indexed read (and,
// while the DB holds the file's schedule, only the host's first Get is); a
// Update that changes nothing writes nothing, so hosts read successfully
// cost no write. Update is a compare-and-set on the row's revision: fn runs
// with no lock held and, when another process or goroutine changed the
// record meanwhile, runs again on the new one; the write is one statement,
// atomic across processes. It is safe for concurrent use.
type LedgerStore struct{ db *DB }

// Ledger returns the DB's refusal-ledger store.
func (db *DB) Ledger() *LedgerStore { return &LedgerStore{db} }

var (
	_ backoff.Store   = (*LedgerStore)(nil)
	_ backoff.Sweeper = (*LedgerStore)(nil)
)

// Get implements [backoff.Store]. While the DB holds the file's schedule
// ([DB.HoldSchedule]) a host's record is read from the file once and then
// from memory: no other process makes a request from the file meanwhile,
// so only this one changes the record, and its Update and Sweep forget what
// they change.
func (s *LedgerStore) Get(ctx context.Context, key string) (backoff.State, bool, error) {
	h := s.db.hold.Load()
	var gen uint64
	live := false
	if h != nil {
		var rec ledgerRec
		var hit bool
		if rec, hit, gen, live = h.ledgerGet(key); hit {
			if err := s.db.check("ledger get", key); err != nil {
				return backoff.State{}, false, err
			}
			return rec.st, rec.ok, nil
		}
	}
	st, ok, _, err := s.get(ctx, key)
	if err == nil && live {
		h.ledgerKeep(key, gen, ledgerRec{st: st, ok: ok})
	}
	return st, ok, err
}

func (s *LedgerStore) get(ctx context.Context, key string) (backoff.State, bool, int64, error) {
	if err := s.db.check("ledger get", key); err != nil {
		return backoff.State{}, false, 0, err
	}
	var (
		st                     backoff.State
		kind                   int
		lastAt, until, nextChk int64
		suspended              bool
		rev                    int64
	)
	err := s.db.stmts.ledgerGet.QueryRowContext(ctx, key).Scan(&st.Strikes, &kind, &st.LastStatus, &st.LastChallenge,
		&lastAt, &until, &suspended, &nextChk, &rev)
	if errors.Is(err, sql.ErrNoRows) {
		return backoff.State{}, false, 0, nil
	}
	if err != nil {
		return backoff.State{}, false, 0, wrap("ledger get", key, err)
	}
	st.RefusedKind = backoff.Kind(kind)
	st.LastAt, st.Until, st.NextCheck, st.Suspended = fromNS(lastAt), fromNS(until), fromNS(nextChk), suspended
	return st, true, rev, nil
}

// Update implements [backoff.Store]: fn may be called more than once, and
// only the result that was stored counts.
func (s *LedgerStore) Update(ctx context.Context, key string, fn func(cur backoff.State, ok bool) (backoff.State, bool)) error {
	// Once written (and whether or not a hold began meanwhile), the hold
	// forgets the record, and a Get that read the file before is not kept.
	defer func() {
		if h := s.db.hold.Load(); h != nil {
			h.ledgerForget(key)
		}
	}()
	for {
		cur, ok, rev, err := s.get(ctx, key)
		if err != nil {
			return err
		}
		next, keep := fn(cur, ok)
		var n int64
		switch {
		case !keep && !ok:
			return nil
		case keep && ok && sameState(cur, next):
			return nil
		case keep && ok:
			n, err = s.db.exec(ctx, "ledger update", key, s.db.stmts.ledgerSet, stateArgs(key, next, rev)...)
		case keep:
			n, err = s.db.exec(ctx, "ledger update", key, s.db.stmts.ledgerInsert, stateArgs(key, next, rand.Int64())...)
		default:
			n, err = s.db.exec(ctx, "ledger update", key, s.db.stmts.ledgerDelete, key, rev)
		}
		if err != nil {
			return err
		}
		if n == 1 {
			return nil
		}
		// Changed under us: read again and re-run fn.
		if err := ctx.Err(); err != nil {
			return wrap("ledger update", key, err)
		}
	}
}

// stateArgs are the ledgerSet and ledgerInsert arguments: the key, the
// state's columns, and the revision (the expected one for ledgerSet, the new
// one for ledgerInsert).
func stateArgs(key string, st backoff.State, rev int64) []any {
	return []any{key, st.Strikes, int(st.RefusedKind), st.LastStatus, st.LastChallenge,
		toNS(st.LastAt), toNS(st.Until), st.Suspended, toNS(st.NextCheck), rev}
}

func sameState(a, b backoff.State) bool {
	return a.Strikes == b.Strikes && a.RefusedKind == b.RefusedKind && a.LastStatus == b.LastStatus &&
		a.LastChallenge == b.LastChallenge && toNS(a.LastAt) == toNS(b.LastAt) && toNS(a.Until) == toNS(b.Until) &&
		a.Suspended == b.Suspended && toNS(a.NextCheck) == toNS(b.NextCheck)
}

// Sweep implements [backoff.Sweeper]: it deletes every record that holds
// nothing at now (no strikes, no suspension, cool-down over), in batches of
// the DB's SweepBatch rows, one transaction each, and returns how many it
// deleted.
func (s *LedgerStore) Sweep(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		n, err := s.sweep(ctx, now)
		total += n
		if err != nil || n < s.db.opt.SweepBatch {
			return total, err
		}
	}
}

// sweep deletes at most one batch.
func (s *LedgerStore) sweep(ctx context.Context, now time.Time) (int, error) {
	return s.db.sweepLedger(ctx, toNS(now))
}

// sweepLedger deletes at most one batch of the ledger's records holding
// nothing at now, and has the hold forget what it knew of the ledger.
func (db *DB) sweepLedger(ctx context.Context, now int64) (int, error) {
	n, err := db.deleteBatch(ctx, "ledger sweep", db.stmts.ledgerSweep, now)
	if h := db.hold.Load(); h != nil && n > 0 {
		h.ledgerForget("")
	}
	return n, err
}

// toNS is t in Unix nanoseconds, 0 for the zero Time (an instant at the
// epoch itself is stored 1 ns later).
func toNS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	n := t.UnixNano()
	if n == 0 {
		n = 1
	}
	return n
}

// fromNS is toNS's inverse, in UTC.
func fromNS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
