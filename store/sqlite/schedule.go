package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/politefetch/politefetch/fetch"
)

// Schedule is the shared pacing schedule ([fetch.Schedule]) in the DB's
// schedule, schedule_lease and schedule_waiter tables: every process that
// opens the file and gives its Pacers this Schedule spaces its requests to a
// host from every other's, and holds the host's in-flight limit across them
// (P1). Acquire is one IMMEDIATE transaction, atomic across processes; the
// time is the callers' (processes sharing a file share a machine's clock).
// A host's start row is swept once its latest start is older than the DB's
// ScheduleRetain; a lease row goes at its release, or at the host's next
// Acquire once expired or once the process that took it has ended. It is
// safe for concurrent use.
//
// Each lease names the process that took it (boot id, pid namespace, pid
// and start time, on Linux), so that a process killed while its requests
// were in flight does not hold their hosts for the leases' TTL: the next
// Acquire on such a host, by a process of the same machine, boot and pid
// namespace that finds the holder gone (no such pid, a zombie, or a pid
// worn by a later process), deletes the dead process's leases and counts a
// request as started now, so the claim is granted a Gap later. A lease
// whose holder it cannot judge (another machine or namespace, a platform
// without /proc, a file written before leases named their process) is left
// to expire.
//
// A request that holds a host's only slot (a claim with Limit 1) reports
// its start at its release, in the release's transaction, rather than in
// a write of its own, when its lease outlives that start by at least the
// claim's Gap: while the lease lives, no other claim on the host can
// succeed (a claim with Limit 1 finds the slot taken, and one with a
// higher Limit treats the start as now, a lease with its start pending
// standing for a request that may have begun this instant), and once it
// has expired the start lies at least a Gap behind. So a process killed
// before the release, its start never written, still leaves every other
// a Gap behind its last request (a lease taken over from a dead process
// counts its start as at the takeover). Otherwise Started writes at once.
//
// Turns go in order of asking, across processes: a claim told to wait is
// marked a waiter, in the order its owner first asked, and a free slot goes
// to the earliest waiters first (a slot for each, in the order they asked);
// a claim that is not among them, such as the holder's next request asking
// the moment its previous one ends (which would otherwise win nearly every
// turn, its process knowing the instant the interval ends), waits until
// the first waiter's poll-by. A waiter must ask again by its poll-by (the
// wait it was told, at most the gap or the grace, plus the DB's TurnGrace)
// or it loses its place: a waiter that gave up or died holds nobody back
// for longer, and one whose process has ended (judged as a lease's holder
// is) holds nobody back at all. Waiters whose poll-by has passed are
// deleted at the host's next Acquire, or by the sweep.
type Schedule struct{ db *DB }

// maxPendingStarts bounds the starts a DB holds for their releases; past
// it, Started writes at once.
const maxPendingStarts = 1 << 16

// pendingStarts are the starts of the leases this process holds with their
// start pending, each reported at the lease's release.
type pendingStarts struct {
	mu sync.Mutex
	m  map[leaseID]*pendingStart
}

type leaseID struct{ key, owner string }

type pendingStart struct {
	gap     int64 // the claim's Gap
	expires int64 // when the lease ends, as far as this process renewed it
	start   int64 // the latest start reported, 0 for none
}

// Schedule returns the DB's shared pacing schedule.
func (db *DB) Schedule() *Schedule { return &Schedule{db} }

var _ fetch.Schedule = (*Schedule)(nil)

// Acquire implements [fetch.Schedule], in one IMMEDIATE transaction: a
// claim is granted if the host has a free slot, its latest start is at
// least c.Gap before now, and no claim that asked earlier is waiting for
// that slot (see Schedule).
func (s *Schedule) Acquire(ctx context.Context, c fetch.Claim) (time.Duration, bool, error) {
	now := toNS(c.Now)
	var wait time.Duration
	// A sole slot's start may wait for the release (see Schedule), if the
	// lease outlives the claim by a Gap at least.
	pending := c.Limit <= 1 && c.TTL >= c.Gap && s.db.starts.room()
	err := s.db.writeUrgent(ctx, "schedule acquire", c.Key, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		wait, err = s.claim(ctx, tx, c, now, pending)
		return err
	})
	if err != nil {
		return 0, false, err
	}
	if wait <= 0 && pending {
		s.db.starts.add(leaseID{c.Key, c.Owner}, &pendingStart{gap: int64(c.Gap), expires: now + int64(c.TTL)})
	}
	return wait, wait <= 0, nil
}

// claim is Acquire's transaction: it grants c, a lease with its start
// pending or not, and returns 0, or returns how long c must wait, having
// marked it a waiter.
func (s *Schedule) claim(ctx context.Context, tx *sql.Tx, c fetch.Claim, now int64, pending bool) (time.Duration, error) {
	held, wait, waiters, err := s.slotWait(ctx, tx, c, now)
	if err != nil {
		return 0, err
	}
	if wait > 0 && held < 0 {
		return wait, nil // the file's schedule is held: nothing to queue for
	}
	if waiters.Valid && waiters.Int64 <= now {
		if _, err := tx.StmtContext(ctx, s.db.stmts.waiterExpire).ExecContext(ctx, c.Key, now); err != nil {
			return 0, err
		}
	}
	if wait > 0 {
		return s.queue(ctx, tx, c, now, wait)
	}
	var mine, firstBy sql.NullInt64
	var ahead int64
	place := func() error {
		return tx.StmtContext(ctx, s.db.stmts.waiterPlace).QueryRowContext(ctx, c.Key, c.Owner).Scan(&mine, &ahead, &firstBy)
	}
	if waiters.Valid { // with no waiter, c's place is first of none
		if err := place(); err != nil {
			return 0, err
		}
	}
	if ahead >= int64(max(c.Limit, 1))-held {
		// Waiters whose process has ended will not ask again: forgotten now.
		took, err := s.dropEndedOf(ctx, tx, c.Key, s.db.stmts.waiterProcs, s.db.stmts.waiterDropProc)
		if err != nil {
			return 0, err
		}
		if took {
			if err := place(); err != nil {
				return 0, err
			}
		}
	}
	if ahead >= int64(max(c.Limit, 1))-held {
		// The free slots are owed to the waiters that asked earlier.
		wait = 1
		if firstBy.Valid {
			wait = max(time.Duration(firstBy.Int64-now), 1)
		}
		return s.queue(ctx, tx, c, now, wait)
	}
	if mine.Valid {
		if _, err := tx.StmtContext(ctx, s.db.stmts.waiterDelete).ExecContext(ctx, c.Key, c.Owner); err != nil {
			return 0, err
		}
	}
	if _, err := tx.StmtContext(ctx, s.db.stmts.schedSet).ExecContext(ctx, c.Key, now); err != nil {
		return 0, err
	}
	_, err = tx.StmtContext(ctx, s.db.stmts.leasePut).ExecContext(ctx, c.Key, c.Owner, now+int64(c.TTL), pending, s.db.proc)
	return 0, err
}

// slotWait drops the host's expired leases and takes over those of ended
// processes, and returns how many live leases remain, how long c must
// wait for a slot and for the gap (0 or less: no wait), and the earliest
// poll-by of the host's waiters (NULL: none). It reads all that in one
// statement, and writes only when a lease is to go. While another process
// holds the file's schedule ([HeldSchedule]) it returns -1 leases and how
// long to wait for the hold, having written nothing; a hold whose process
// has ended, or that expired, becomes the floor of every host's latest
// start.
func (s *Schedule) slotWait(ctx context.Context, tx *sql.Tx, c fetch.Claim, now int64) (held int64, wait time.Duration, waiters sql.NullInt64, err error) {
	var n, starting int64
	var first, last, holdUntil sql.NullInt64
	var holder sql.NullString
	read := func() error {
		return tx.StmtContext(ctx, s.db.stmts.slotState).QueryRowContext(ctx, c.Key).Scan(&n, &first, &starting, &last, &waiters, &holder, &holdUntil)
	}
	if err := read(); err != nil {
		return 0, 0, waiters, err
	}
	if holder.Valid {
		if holder.String != "" {
			if holdUntil.Int64 > now && !procEnded(s.db.proc, holder.String) {
				return -1, min(time.Duration(holdUntil.Int64-now), max(c.Gap, time.Second)), waiters, nil
			}
			// Its holder granted nothing past its expiry, nor past its end.
			holdUntil.Int64 = min(holdUntil.Int64, now)
			if _, err := tx.ExecContext(ctx, `UPDATE schedule_hold SET proc = '', expires_ns = ?1 WHERE id = 1`, holdUntil.Int64); err != nil {
				return 0, 0, waiters, err
			}
		}
	}
	if first.Valid && first.Int64 <= now {
		if _, err := tx.StmtContext(ctx, s.db.stmts.leaseExpire).ExecContext(ctx, c.Key, now); err != nil {
			return 0, 0, waiters, err
		}
		if err := read(); err != nil {
			return 0, 0, waiters, err
		}
	}
	if n > 0 {
		// Leases whose process has ended are taken over now, their
		// requests counted as started now (a dead process's last start
		// may have come just before its end, never after).
		took, err := s.dropEnded(ctx, tx, c.Key, now)
		if err != nil {
			return 0, 0, waiters, err
		}
		if took {
			if err := read(); err != nil {
				return 0, 0, waiters, err
			}
		}
	}
	if holder.Valid && (!last.Valid || last.Int64 < holdUntil.Int64) {
		last = holdUntil // the floor an ended hold left
	}
	if !last.Valid {
		last.Int64 = math.MinInt64 / 2
	}
	gapEnd := time.Duration(last.Int64 + int64(c.Gap) - now)
	if n >= int64(max(c.Limit, 1)) && first.Valid {
		// Every slot is held: the gap's end, counted from the latest
		// start recorded, while it is to come, else the earliest lease's
		// expiry (see fetch.Schedule). A held lease's start yet to be
		// recorded is counted from its release, when it is.
		if gapEnd > 0 {
			return n, gapEnd, waiters, nil
		}
		return n, time.Duration(first.Int64 - now), waiters, nil
	}
	if starting != 0 {
		// A live lease's request may have started just now.
		gapEnd = max(gapEnd, time.Duration(c.Gap))
	}
	return n, gapEnd, waiters, nil
}

// queue marks c's owner a waiter for the host's turn (keeping its place if
// it is one already), to ask again by its poll-by, and returns wait.
func (s *Schedule) queue(ctx context.Context, tx *sql.Tx, c fetch.Claim, now int64, wait time.Duration) (time.Duration, error) {
	grace := s.db.opt.TurnGrace
	by := now + int64(min(wait, max(c.Gap, grace))+grace)
	_, err := tx.StmtContext(ctx, s.db.stmts.waiterPut).ExecContext(ctx, c.Key, c.Owner, by, s.db.proc)
	return wait, err
}

// Started implements [fetch.Schedule]: the start is written now, or kept
// for the lease's release (see Schedule).
func (s *Schedule) Started(ctx context.Context, key, owner string, now time.Time) error {
	if err := s.db.check("schedule started", key); err != nil {
		return err
	}
	if s.db.starts.defer_(leaseID{key, owner}, toNS(now)) {
		return nil
	}
	_, err := s.db.exec(ctx, "schedule started", key, s.db.stmts.schedStarted, key, toNS(now))
	return err
}

// Renew implements [fetch.Schedule].
func (s *Schedule) Renew(ctx context.Context, key, owner string, now time.Time, ttl time.Duration) error {
	err := s.lease(ctx, "schedule renew", s.db.stmts.leaseRenew, key, key, owner, toNS(now), toNS(now)+int64(ttl))
	if err == nil {
		s.db.starts.renewed(leaseID{key, owner}, toNS(now)+int64(ttl))
	}
	return err
}

// Release implements [fetch.Schedule]: with the start kept for it, in one
// transaction that writes the start (the load was real, whatever became
// of the lease) and deletes the lease.
func (s *Schedule) Release(ctx context.Context, key, owner string, now time.Time) error {
	p := s.db.starts.take(leaseID{key, owner})
	if p == nil || p.start == 0 {
		return s.lease(ctx, "schedule release", s.db.stmts.leaseDelete, key, key, owner, toNS(now))
	}
	var held bool
	err := s.db.write(ctx, "schedule release", key, false, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.StmtContext(ctx, s.db.stmts.schedStarted).ExecContext(ctx, key, p.start); err != nil {
			return err
		}
		n, err := changed(tx.StmtContext(ctx, s.db.stmts.leaseDelete).ExecContext(ctx, key, owner, toNS(now)))
		held = n > 0
		return err
	})
	if err != nil {
		return err
	}
	if !held {
		return fetch.ErrLeaseNotHeld
	}
	return nil
}

// dropEnded deletes key's leases held by processes of this machine that
// have ended, and reports whether there were any; if so, key's latest
// start becomes now at least, in the same transaction.
func (s *Schedule) dropEnded(ctx context.Context, tx *sql.Tx, key string, now int64) (bool, error) {
	took, err := s.dropEndedOf(ctx, tx, key, s.db.stmts.leaseProcs, s.db.stmts.leaseDropProc)
	if !took || err != nil {
		return false, err
	}
	_, err = tx.StmtContext(ctx, s.db.stmts.schedRaise).ExecContext(ctx, key, now)
	return err == nil, err
}

// dropEndedOf deletes key's rows (leases, or waiters) of processes of this
// machine that have ended: procs lists the processes of key's rows but
// this one, drop deletes one process's. It reports whether there were
// any.
func (s *Schedule) dropEndedOf(ctx context.Context, tx *sql.Tx, key string, procs, drop *sql.Stmt) (bool, error) {
	if s.db.proc == "" {
		return false, nil
	}
	rows, err := tx.StmtContext(ctx, procs).QueryContext(ctx, key, s.db.proc)
	if err != nil {
		return false, err
	}
	var ended []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return false, err
		}
		if procEnded(s.db.proc, p) {
			ended = append(ended, p)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return false, err
	}
	for _, p := range ended {
		if _, err := tx.StmtContext(ctx, drop).ExecContext(ctx, key, p); err != nil {
			return false, err
		}
	}
	return len(ended) > 0, nil
}

// room reports whether another start may be held.
func (p *pendingStarts) room() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m) < maxPendingStarts
}

func (p *pendingStarts) add(id leaseID, s *pendingStart) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[leaseID]*pendingStart{}
	}
	p.m[id] = s
}

// defer_ keeps the start at for the release of id's lease and reports true,
// or reports false when it must be written now: no start of id is held, or
// its lease would not outlive the start by the claim's gap.
func (p *pendingStarts) defer_(id leaseID, at int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.m[id]
	if s == nil || s.expires-at < s.gap {
		return false
	}
	s.start = max(s.start, at)
	return true
}

func (p *pendingStarts) renewed(id leaseID, expires int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.m[id]; s != nil {
		s.expires = max(s.expires, expires)
	}
}

// take removes and returns id's held start, nil when none.
func (p *pendingStarts) take(id leaseID) *pendingStart {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.m[id]
	delete(p.m, id)
	return s
}

// lease runs stmt with args (a renewal or a deletion of one owner's live
// lease on key) and reports fetch.ErrLeaseNotHeld when it touched no row.
func (s *Schedule) lease(ctx context.Context, op string, stmt *sql.Stmt, key string, args ...any) error {
	if err := s.db.check(op, key); err != nil {
		return err
	}
	n, err := s.db.exec(ctx, op, key, stmt, args...)
	if err != nil {
		return err
	}
	if n == 0 {
		return fetch.ErrLeaseNotHeld
	}
	return nil
}
