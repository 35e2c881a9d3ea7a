package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/fetch"
)

// holdTTL is how long a hold on the file's schedule lasts unless renewed;
// its holder renews it every holdTTL/4, and at once when a lease would
// outlast it.
const holdTTL = 2 * time.Minute

// HeldSchedule is the file's pacing schedule ([fetch.Schedule]) held by one
// process: while it holds the file, its claims are decided in memory (a
// [fetch.MemorySchedule]), with nothing written per request, the refusal
// ledger's records are read from the file once per host ([LedgerStore.Get]),
// and every other process's claims through [DB.Schedule] wait until the
// hold ends; a second hold is refused with [ErrHeld]. Take it with
// [DB.HoldSchedule] where one process crawls from the file, as politecrawl
// does; processes that crawl side by side from one file share [DB.Schedule]
// instead.
//
// What the file knows of the hosts before the hold is kept: a host's first
// claim waits out the latest start the file recorded for it. The hold is a
// row of the file that names its process and an expiry, renewed in the
// background; a lease is granted only while the hold outlasts it. At
// [HeldSchedule.Close] (or the DB's) the latest start of every host the
// hold claimed is written to the file and the row deleted. A holder
// killed before that leaves its row: the next process of the same machine
// and boot that finds the holder gone, or any process once the row has
// expired, takes it over and counts every host's latest start as at the
// holder's end (the takeover, or the expiry), so that each host's first
// request then waits one interval. It is safe for concurrent use.
type HeldSchedule struct {
	db     *DB
	mem    *fetch.MemorySchedule
	holder string // the hold row's proc: the DB's process, or a token where the platform does not tell it

	mu      sync.Mutex
	expires int64 // the hold's expiry, as last written
	floor   int64 // the end of a holder before this one that left no starts: every host's start counts as this at least
	keys    map[string]*heldKey
	err     error // once set (the hold was lost or released), every claim fails with it

	stop chan struct{}
	done chan struct{}
	once sync.Once

	ledger heldLedger
}

// heldLedger holds the file's refusal-ledger records ([LedgerStore]) as
// read or left by this process while its hold lives. No other process makes
// a request from the file meanwhile (its claims wait for the hold's end,
// and the hold is not taken while one has a request in flight), so none
// records a refusal in it, and a record read once stays true until this
// process's own Update or sweep, which forgets it. The one exception is the
// schedule's own: a request whose lease ran out before its answer came, so
// that the hold was taken meanwhile; a refusal it brings is seen once the
// hold ends. A read of the file that began before a forget is not kept
// (gen). At most maxHeldLedger records are kept; past that the cache starts
// again empty. Once the hold has ended or was lost, nothing is kept.
type heldLedger struct {
	mu    sync.Mutex
	gen   uint64 // counts forgets
	recs  map[string]ledgerRec
	ended bool // the hold's s.err is set: every Get reads the file
}

type ledgerRec struct {
	st backoff.State
	ok bool // a record exists
}

// maxHeldLedger bounds the records a hold keeps in memory (about 150 bytes
// each).
const maxHeldLedger = 1 << 16

// ledgerGet returns key's record as the hold knows it (hit), or the
// generation a read of the file must be kept under (see ledgerKeep); live
// is false once the hold has ended or was lost.
func (s *HeldSchedule) ledgerGet(key string) (rec ledgerRec, hit bool, gen uint64, live bool) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return ledgerRec{}, false, 0, false
	}
	rec, hit = l.recs[key]
	return rec, hit, l.gen, true
}

// ledgerKeep keeps rec, read from the file under gen, unless a forget came
// between.
func (s *HeldSchedule) ledgerKeep(key string, gen uint64, rec ledgerRec) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gen != gen || l.ended {
		return
	}
	if l.recs == nil || len(l.recs) >= maxHeldLedger {
		l.recs = make(map[string]ledgerRec)
	}
	l.recs[key] = rec
}

// ledgerForget drops key's record (every record when key is ""): this
// process has changed it in the file, or may have.
func (s *HeldSchedule) ledgerForget(key string) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gen++
	if key == "" {
		clear(l.recs)
	} else {
		delete(l.recs, key)
	}
}

// ledgerEnd drops every record for good: the hold has ended or was lost.
func (s *HeldSchedule) ledgerEnd() {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended, l.recs = true, nil
}

// heldKey is what a hold knows of a host beyond its memory schedule.
type heldKey struct {
	before int64 // the host's latest start before the hold: the file's record, or the floor
	last   int64 // the latest start this hold granted or was told of, 0 for none
}

var _ fetch.Schedule = (*HeldSchedule)(nil)

var errHoldLost = errors.New("the hold on the schedule was taken over by another process (it judged this one ended, or found the hold expired)")

var errHoldReleased = errors.New("the hold on the schedule was released")

// HoldSchedule takes the file's pacing schedule for this DB (see
// [HeldSchedule]). It fails with an [*Error] of kind [ErrHeld] while
// another hold lives, or while a live process holds a lease of the shared
// [DB.Schedule] (a crawl sharing the file is under way). ctx bounds the
// taking only.
func (db *DB) HoldSchedule(ctx context.Context) (*HeldSchedule, error) {
	now := toNS(db.clk.Now())
	holder := db.proc
	if holder == "" {
		// Never judged ended, as a lease of such a process is not; and
		// never "", which stands for an ended hold's floor.
		holder = "unknown-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(os.Getpid())
	}
	s := &HeldSchedule{
		db:     db,
		holder: holder,
		mem:    &fetch.MemorySchedule{Retain: db.opt.ScheduleRetain, TurnGrace: db.opt.TurnGrace},
		keys:   map[string]*heldKey{},
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	err := db.writeUrgent(ctx, "schedule hold", db.path, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		s.floor, err = db.takeHold(ctx, tx, holder, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.expires = now + int64(holdTTL)
	if !db.hold.CompareAndSwap(nil, s) {
		// A hold of this DB that was lost and not closed (a live one is
		// refused above): the row, this process's either way, stays.
		return nil, &Error{Op: "schedule hold", Key: db.path, Kind: ErrHeld, Err: errors.New("this DB has a hold not yet closed")}
	}
	go s.keep()
	return s, nil
}

// takeHold is HoldSchedule's transaction: it refuses a live hold or a
// live process's lease, writes this process's hold, and returns the floor
// every host's start counts as (0 for none).
func (db *DB) takeHold(ctx context.Context, tx *sql.Tx, holder string, now int64) (floor int64, err error) {
	var proc string
	var expires int64
	switch err := tx.QueryRowContext(ctx, `SELECT proc, expires_ns FROM schedule_hold WHERE id = 1`).Scan(&proc, &expires); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return 0, err
	case proc == "":
		floor = expires
	case expires > now && !procEnded(db.proc, proc):
		return 0, &Error{Op: "schedule hold", Key: db.path, Kind: ErrHeld,
			Err: fmt.Errorf("held by process %s until %s", proc, fromNS(expires).UTC().Format(time.RFC3339))}
	default:
		floor = min(expires, now) // its holder granted nothing past either
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT proc FROM schedule_lease WHERE expires_ns > ?1`, now)
	if err != nil {
		return 0, err
	}
	var live []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return 0, err
		}
		live = append(live, p)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, err
	}
	for _, p := range live {
		if !procEnded(db.proc, p) {
			return 0, &Error{Op: "schedule hold", Key: db.path, Kind: ErrHeld,
				Err: fmt.Errorf("process %q has a request in flight through the shared schedule", p)}
		}
		// A request of an ended process may have started just before its end.
		floor = max(floor, now)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO schedule_hold (id, proc, expires_ns) VALUES (1, ?1, ?2)
		ON CONFLICT (id) DO UPDATE SET proc = excluded.proc, expires_ns = excluded.expires_ns`, holder, now+int64(holdTTL))
	return floor, err
}

// Acquire implements [fetch.Schedule]: a host's first claim waits out
// its latest start before the hold; then the memory schedule decides.
func (s *HeldSchedule) Acquire(ctx context.Context, c fetch.Claim) (time.Duration, bool, error) {
	now := toNS(c.Now)
	k, err := s.key(ctx, c.Key)
	if err != nil {
		return 0, false, err
	}
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return 0, false, err
	}
	if wait := time.Duration(k.before + int64(c.Gap) - now); wait > 0 {
		s.mu.Unlock()
		return wait, false, nil
	}
	outlasts := s.expires >= now+int64(c.TTL)
	s.mu.Unlock()
	if !outlasts {
		if err := s.renew(ctx, now+int64(c.TTL)); err != nil {
			return 0, false, err
		}
	}
	wait, ok, err := s.mem.Acquire(ctx, c)
	if ok {
		s.mu.Lock()
		k.last = max(k.last, now)
		s.mu.Unlock()
	}
	return wait, ok, err
}

// key returns what the hold knows of host, reading the file's record of
// its latest start at the host's first claim.
func (s *HeldSchedule) key(ctx context.Context, host string) (*heldKey, error) {
	s.mu.Lock()
	k := s.keys[host]
	s.mu.Unlock()
	if k != nil {
		return k, nil
	}
	if err := s.db.check("schedule acquire", host); err != nil {
		return nil, err
	}
	var last sql.NullInt64
	err := s.db.r.QueryRowContext(ctx, `SELECT last_start_ns FROM schedule WHERE host = ?1`, host).Scan(&last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, wrap("schedule acquire", host, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if k = s.keys[host]; k == nil {
		k = &heldKey{before: max(last.Int64, s.floor)}
		s.keys[host] = k
	}
	return k, nil
}

// Started implements [fetch.Schedule].
func (s *HeldSchedule) Started(ctx context.Context, key, owner string, now time.Time) error {
	s.mu.Lock()
	k := s.keys[key]
	if k == nil {
		k = &heldKey{before: s.floor}
		s.keys[key] = k
	}
	k.last = max(k.last, toNS(now))
	released := s.err != nil
	s.mu.Unlock()
	if released {
		// The load is real: a start told after the release goes to the file.
		_, err := s.db.exec(ctx, "schedule started", key, s.db.stmts.schedRaise, key, toNS(now))
		return err
	}
	return s.mem.Started(ctx, key, owner, now)
}

// Renew implements [fetch.Schedule].
func (s *HeldSchedule) Renew(ctx context.Context, key, owner string, now time.Time, ttl time.Duration) error {
	until := toNS(now) + int64(ttl)
	s.mu.Lock()
	err, outlasts := s.err, s.expires >= until
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if !outlasts {
		if err := s.renew(ctx, until); err != nil {
			return err
		}
	}
	return s.mem.Renew(ctx, key, owner, now, ttl)
}

// Release implements [fetch.Schedule].
func (s *HeldSchedule) Release(ctx context.Context, key, owner string, now time.Time) error {
	return s.mem.Release(ctx, key, owner, now)
}

// renew extends the hold to holdTTL from now, and to until at least. A
// hold found taken over is lost: every later claim fails.
func (s *HeldSchedule) renew(ctx context.Context, until int64) error {
	s.mu.Lock()
	if err := s.err; err != nil {
		s.mu.Unlock()
		return err
	}
	s.mu.Unlock()
	expires := max(until, toNS(s.db.clk.Now())+int64(holdTTL))
	var held bool
	err := s.db.writeUrgent(ctx, "schedule hold renew", s.db.path, func(ctx context.Context, tx *sql.Tx) error {
		n, err := changed(tx.ExecContext(ctx, `UPDATE schedule_hold SET expires_ns = max(expires_ns, ?2) WHERE id = 1 AND proc = ?1`, s.holder, expires))
		held = n > 0
		return err
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !held {
		s.err = &Error{Op: "schedule hold", Key: s.db.path, Kind: ErrHeld, Err: errHoldLost}
		s.ledgerEnd()
		return s.err
	}
	s.expires = max(s.expires, expires)
	return nil
}

// keep renews the hold every holdTTL/4 and forgets the hosts whose starts
// are older than the DB's ScheduleRetain, until the hold is released or
// lost.
func (s *HeldSchedule) keep() {
	defer close(s.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t := time.NewTicker(holdTTL / 4)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if err := s.renew(ctx, 0); errors.Is(err, ErrHeld) {
			return
		} else if err != nil && s.db.opt.Logger != nil {
			s.db.opt.Logger.Warn("sqlite: renewing the schedule's hold failed", "path", s.db.path, "err", err)
		}
		old := toNS(s.db.clk.Now()) - int64(s.db.opt.ScheduleRetain)
		s.mu.Lock()
		for host, k := range s.keys {
			if k.last < old && k.before < old {
				delete(s.keys, host)
			}
		}
		s.mu.Unlock()
	}
}

// Close releases the hold: the latest start of every host it claimed is
// written to the file, and the hold's row deleted (kept as a floor when the
// hold took over from a holder that left none). Claims after Close fail.
// The DB's Close closes its hold. Close is idempotent.
func (s *HeldSchedule) Close() error {
	var err error
	s.once.Do(func() {
		close(s.stop)
		<-s.done
		s.mu.Lock()
		lost := s.err != nil
		if !lost {
			s.err = &Error{Op: "schedule hold", Key: s.db.path, Kind: ErrClosed, Err: errHoldReleased}
		}
		s.ledgerEnd()
		s.mu.Unlock()
		if !lost {
			err = s.releaseRow(context.Background())
		}
		s.db.hold.CompareAndSwap(s, nil)
	})
	return err
}

// releaseRow writes the hold's starts and ends its row, in one write.
func (s *HeldSchedule) releaseRow(ctx context.Context) error {
	s.mu.Lock()
	starts := make(map[string]int64, len(s.keys))
	for host, k := range s.keys {
		if k.last > 0 {
			starts[host] = k.last
		}
	}
	floor := s.floor
	s.mu.Unlock()
	return s.db.write(ctx, "schedule hold release", s.db.path, false, func(ctx context.Context, tx *sql.Tx) error {
		for host, at := range starts {
			if _, err := tx.StmtContext(ctx, s.db.stmts.schedRaise).ExecContext(ctx, host, at); err != nil {
				return err
			}
		}
		var err error
		if floor > 0 {
			// The hosts the holder before this one claimed, and this one
			// did not, still count their starts as at its end.
			_, err = tx.ExecContext(ctx, `UPDATE schedule_hold SET proc = '', expires_ns = ?2 WHERE id = 1 AND proc = ?1`, s.holder, floor)
		} else {
			_, err = tx.ExecContext(ctx, `DELETE FROM schedule_hold WHERE id = 1 AND proc = ?1`, s.holder)
		}
		return err
	})
}
