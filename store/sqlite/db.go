package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the pure-Go driver, registered as "sqlite"

	"github.com/politefetch/politefetch/internal/clock"
)

// Clock is the injectable time source the DB's sweeps read: nil means real
// time.
type Clock = clock.Clock

// Defaults for the zero [Options].
const (
	DefaultBusyTimeout     = 5 * time.Second
	DefaultReaders         = 4
	DefaultSweepEvery      = time.Minute
	DefaultSweepBatch      = 1000
	DefaultValidatorRetain = 30 * 24 * time.Hour
	DefaultRobotsRetain    = 24 * time.Hour
	DefaultScheduleRetain  = time.Hour
	DefaultCacheKiB        = 2048
	// ReaderCacheKiB bounds each reading connection's page cache. In WAL
	// mode SQLite empties a reader's cache whenever another connection has
	// committed since its last read, so while this process writes, a
	// reader's cache holds little more than one read's pages.
	ReaderCacheKiB = 256
	// DefaultTurnGrace is how late a waiting claim may ask again and keep
	// its turn (see [Schedule]).
	DefaultTurnGrace = 250 * time.Millisecond
)

// Options configure [Open]. The zero value is ready to use: every field's
// zero means the default named beside it.
type Options struct {
	// BusyTimeout is how long a statement waits for another process's lock
	// on the file before failing with [ErrLocked]; 0 means
	// DefaultBusyTimeout.
	BusyTimeout time.Duration
	// Readers is the size of the pool of reading connections; 0 means
	// DefaultReaders. Writes go through one connection.
	Readers int
	// SweepEvery is the interval of the background expiry sweep; 0 means
	// DefaultSweepEvery, a negative value turns the background sweep off
	// ([DB.Sweep] still works).
	SweepEvery time.Duration
	// SweepBatch bounds the rows one sweep deletes from each table; 0 means
	// DefaultSweepBatch.
	SweepBatch int
	// ValidatorRetain is how long a URL's validators are kept after they
	// were last stored; 0 means DefaultValidatorRetain.
	ValidatorRetain time.Duration
	// RobotsRetain is how long a robots.txt record is kept after it
	// expired (the robots cache reads a last good copy); 0 means
	// DefaultRobotsRetain.
	RobotsRetain time.Duration
	// ScheduleRetain is how long a host's latest start is kept; 0 means
	// DefaultScheduleRetain. It must exceed the longest pacing interval.
	ScheduleRetain time.Duration
	// Clock tells the time for sweeps and for the stored-at instants of
	// validators; nil means real time.
	Clock Clock
	// Logger receives the background sweep's failures; nil is silent.
	Logger *slog.Logger
	// SyncDeposits, when true, has every deposit synced to disk before
	// [Deposits.Put] returns (synchronous=FULL), so that it survives the
	// machine's crash or power loss as well as the process's. False (the
	// zero value): a deposit is in the WAL when Put returns, so it survives
	// the process being killed, and a power failure may take the file back
	// to its last checkpoint, the deposits and the crawl state that
	// recorded them together (see the package doc).
	SyncDeposits bool
	// CacheKiB bounds the page cache of the writing connection (PRAGMA
	// cache_size), in KiB; 0 means DefaultCacheKiB. Each reading
	// connection's is the smaller of it and ReaderCacheKiB.
	CacheKiB int
	// TurnGrace is how late after the wait it was told a waiting claim may
	// ask the [Schedule] again and keep its turn; a waiter that gave up
	// holds its host's next slot back by at most its wait (at most the
	// interval) and twice this. 0 means DefaultTurnGrace.
	TurnGrace time.Duration

	onSweep func(Swept, error) // tests: called after each background sweep
}

// DB is one SQLite file holding politefetch's state. It is safe for
// concurrent use, and several processes may open the same file: SQLite's
// locks make every store's atomic operations atomic across them. Close it
// when done; the stores it hands out fail with [ErrClosed] afterwards.
type DB struct {
	path string
	opt  Options
	clk  Clock

	w *sql.DB // one connection: every write
	r *sql.DB // a pool of query_only connections: reads

	stmts statements

	closed atomic.Bool
	stop   chan struct{}
	done   chan struct{} // the sweep loop has ended
	once   sync.Once

	depQ    chan *depReq  // deposits waiting for the group committer
	depDone chan struct{} // the group committer has ended

	wq     chan *writeJob // writes waiting for the write committer
	wDone  chan struct{}  // the write committer has ended
	writes atomic.Int64   // writes submitted, for the benchmarks

	starts     pendingStarts // the schedule's starts to be reported at release
	putSettled putSettled    // references settled by this DB's Puts, for their Settles
	proc       string        // this process's identity, written beside its schedule leases (see proc.go)
	hold       atomic.Pointer[HeldSchedule]
}

// Open opens the database at path, creating it if needed, and migrates its
// schema forward to the current version in one transaction. A file written
// by a newer version is refused with a [*SchemaError] and left untouched; a
// file that is not a database fails with [ErrCorrupt]; one we may not
// write, with [ErrReadOnly]. path must name a file (":memory:" cannot be
// shared between the writer and the readers). ctx bounds Open only.
//
// A nil opts means the zero [Options].
func Open(ctx context.Context, path string, opts *Options) (*DB, error) {
	var opt Options
	if opts != nil {
		opt = *opts
	}
	if opt.BusyTimeout <= 0 {
		opt.BusyTimeout = DefaultBusyTimeout
	}
	if opt.Readers <= 0 {
		opt.Readers = DefaultReaders
	}
	if opt.SweepEvery == 0 {
		opt.SweepEvery = DefaultSweepEvery
	}
	if opt.SweepBatch <= 0 {
		opt.SweepBatch = DefaultSweepBatch
	}
	if opt.ValidatorRetain <= 0 {
		opt.ValidatorRetain = DefaultValidatorRetain
	}
	if opt.RobotsRetain <= 0 {
		opt.RobotsRetain = DefaultRobotsRetain
	}
	if opt.ScheduleRetain <= 0 {
		opt.ScheduleRetain = DefaultScheduleRetain
	}
	if opt.CacheKiB <= 0 {
		opt.CacheKiB = DefaultCacheKiB
	}
	if opt.TurnGrace <= 0 {
		opt.TurnGrace = DefaultTurnGrace
	}
	if path == "" || path == ":memory:" {
		return nil, &Error{Op: "open", Key: path, Err: errors.New("a file path is needed")}
	}
	db := &DB{path: path, opt: opt, clk: clock.Or(opt.Clock), stop: make(chan struct{}), done: make(chan struct{}),
		depQ: make(chan *depReq, maxDepositBatch), depDone: make(chan struct{}),
		wq: make(chan *writeJob, maxWriteBatch), wDone: make(chan struct{}), proc: selfProc()}
	busy := fmt.Sprint(opt.BusyTimeout.Milliseconds())
	// synchronous is per connection and set on every new one: NORMAL for the
	// state and, unless SyncDeposits, the deposits; a durable write switches
	// its connection to FULL for its own commit.
	cache := fmt.Sprintf("cache_size(-%d)", opt.CacheKiB)
	writer := func(pageSize int) (*sql.DB, error) {
		wq := url.Values{"_pragma": {"busy_timeout(" + busy + ")", "synchronous(NORMAL)", "foreign_keys(1)", "journal_size_limit(4194304)",
			fmt.Sprintf("wal_autocheckpoint(%d)", walCheckpointBytes/pageSize), cache}, "_txlock": {"immediate"}}
		w, err := sql.Open(driverName, fileURI(path)+"?"+wq.Encode())
		if err != nil {
			return nil, wrap("open", path, err)
		}
		w.SetMaxOpenConns(1)
		w.SetMaxIdleConns(1)
		w.SetConnMaxIdleTime(0)
		w.SetConnMaxLifetime(0)
		return w, nil
	}
	rq := url.Values{"_pragma": {"busy_timeout(" + busy + ")", "query_only(1)", fmt.Sprintf("cache_size(-%d)", min(opt.CacheKiB, ReaderCacheKiB))}}
	var err error
	if db.w, err = writer(newFilePageSize); err != nil {
		return nil, err
	}
	if db.r, err = sql.Open(driverName, fileURI(path)+"?"+rq.Encode()); err != nil {
		db.w.Close()
		return nil, wrap("open", path, err)
	}
	db.r.SetMaxOpenConns(opt.Readers)
	db.r.SetMaxIdleConns(opt.Readers)
	if err := db.migrate(ctx); err != nil {
		db.w.Close()
		db.r.Close()
		return nil, err
	}
	// A file made with another page size keeps it: its writer checkpoints
	// after walCheckpointBytes of WAL all the same.
	var pageSize int
	if err := db.w.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize); err != nil {
		db.w.Close()
		db.r.Close()
		return nil, wrap("open", path, err)
	}
	if pageSize != newFilePageSize && pageSize > 0 {
		db.w.Close()
		if db.w, err = writer(pageSize); err != nil {
			db.r.Close()
			return nil, err
		}
	}
	if err := db.prepare(ctx); err != nil {
		db.w.Close()
		db.r.Close()
		return nil, err
	}
	go db.commitWrites()
	go db.commitDeposits()
	if opt.SweepEvery > 0 {
		go db.sweepLoop()
	} else {
		close(db.done)
	}
	return db, nil
}

// driverName is the database/sql driver Open uses: modernc's, or, in this
// package's benchmarks, one that counts the statements run through it.
var driverName = "sqlite"

// newFilePageSize is the page size of a file Open creates: SQLite's 4 KiB.
// Every commit appends to the WAL each page it changed, whole, and a
// crawl's commits each change a row or two in many pages, so smaller pages
// append less; but a deposit's envelope then takes as many more overflow
// pages, each a WAL frame of two writes, and on pages of a real news
// page's weight that costs the writer more CPU than the bytes saved are
// worth. An existing file keeps the page size it was made with.
const newFilePageSize = 4096

// walCheckpointBytes is how much WAL the writer lets build up before it
// copies it into the file (wal_autocheckpoint, set in pages): a page
// changed by many commits between two checkpoints is copied once, and at
// synchronous=NORMAL the checkpoint is the only sync of the WAL.
const walCheckpointBytes = 16 << 20

// Path returns the file's path as given to Open.
func (db *DB) Path() string { return db.path }

// Close releases the DB's hold on the schedule (see [HeldSchedule.Close]),
// if it has one, stops the background sweep and the deposits' group committer,
// waits for them (deposits not yet committed fail with ErrClosed), and
// closes the connections. Operations after Close fail with [ErrClosed]. Close is
// idempotent.
func (db *DB) Close() error {
	var err error
	db.once.Do(func() {
		if h := db.hold.Load(); h != nil {
			err = h.Close()
		}
		db.closed.Store(true)
		close(db.stop)
		<-db.done
		<-db.depDone
		<-db.wDone
		db.stmts.close()
		if cerr := errors.Join(db.r.Close(), db.w.Close()); cerr != nil {
			err = errors.Join(err, wrap("close", db.path, cerr))
		}
	})
	return err
}

// check returns ErrClosed, as an *Error for op, once the DB is closed.
func (db *DB) check(op, key string) error {
	if db.closed.Load() {
		return &Error{Op: op, Key: key, Kind: ErrClosed, Err: errClosedDB}
	}
	return nil
}

var errClosedDB = errors.New("Close was called")

// fileURI is path as an SQLite URI filename. A URI ends its path at "?" or
// "#" and decodes "%XX" in it, so those three are escaped: a file in a
// directory named "runs#2" is that file, not "runs".
func fileURI(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
}

// write runs fn in an IMMEDIATE transaction on the writer connection and
// returns once that transaction has committed (or fn's error, with nothing
// of fn's written). The writes of concurrent callers are committed together
// (a group commit, see commitWrites): one transaction, one commit and one
// WAL append of each page they touch, for up to maxWriteBatch of them; when
// one fn fails, the transaction is rolled back and run again without it,
// so that it undoes only its own writes. fn runs on the committer's context
// (it must use the ctx it is given, not its caller's: a statement
// interrupted by a cancelled context would roll the whole transaction
// back), and may run more than once (when another write of its batch fails,
// or when its batch fails as a whole and each of its writes is retried
// alone): it must set, not accumulate, what it reports. ctx bounds the wait
// for the write to be taken into a transaction; once taken, write waits for
// its commit, so an error means nothing of fn's was committed. With
// durable, the commit is synced to disk before write returns (synchronous
// FULL), otherwise it survives a crash of the process but may be lost with
// the machine's power (synchronous NORMAL, WAL).
func (db *DB) write(ctx context.Context, op, key string, durable bool, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return db.submit(ctx, &writeJob{op: op, key: key, durable: durable, fn: fn})
}

// writeUrgent is write for a caller that something waits on (a request's
// start): its batch is committed without lingering for more writes.
func (db *DB) writeUrgent(ctx context.Context, op, key string, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return db.submit(ctx, &writeJob{op: op, key: key, urgent: true, fn: fn})
}

func (db *DB) submit(ctx context.Context, j *writeJob) error {
	op, key := j.op, j.key
	if err := db.check(op, key); err != nil {
		return err
	}
	j.done = make(chan struct{})
	db.writes.Add(1)
	select {
	case db.wq <- j:
	case <-db.stop:
		return &Error{Op: op, Key: key, Kind: ErrClosed, Err: errClosedDB}
	case <-ctx.Done():
		return wrap(op, key, ctx.Err())
	}
	select {
	case <-j.done:
		return j.err
	case <-ctx.Done():
		if j.state.CompareAndSwap(jobQueued, jobAbandoned) {
			return wrap(op, key, ctx.Err())
		}
		<-j.done // taken: its transaction is under way
		return j.err
	case <-db.wDone:
		select {
		case <-j.done:
			return j.err
		default:
			return &Error{Op: op, Key: key, Kind: ErrClosed, Err: errClosedDB}
		}
	}
}

// maxWriteBatch bounds the writes one group commit holds.
const maxWriteBatch = 128

// writeLinger is the longest the committer waits for more writes to join a
// batch with no urgent write in it (it waits less, down to not at all,
// while its batches find no company). A transaction's cost (its commit, and a
// WAL frame of 4 KiB for each page it touches, however little of the page
// changed) is paid once for the batch: a crawl's writes to the same few
// pages of the schedule, lease and reference tables, spread over hosts
// that each write once a second, share their frames. A write that a
// request's start waits for is urgent (writeUrgent) and commits its batch
// at once.
const writeLinger = 20 * time.Millisecond

// A writeJob is one write waiting for the committer.
type writeJob struct {
	op, key string
	durable bool
	urgent  bool // see writeUrgent
	fn      func(ctx context.Context, tx *sql.Tx) error
	state   atomic.Int32 // jobQueued, then jobTaken by the committer or jobAbandoned by its caller
	err     error
	done    chan struct{}
}

const (
	jobQueued int32 = iota
	jobTaken
	jobAbandoned
)

// commitWrites is the group committer of every write: it takes the writes
// waiting (up to maxWriteBatch), runs them in one transaction (again
// without a write that failed, see runBatch), commits, and answers each. A
// batch that fails as a whole (its transaction could not begin or commit)
// has each of its writes retried alone. It ends at Close, failing the
// writes still queued, once the deposits' committer has ended.
func (db *DB) commitWrites() {
	defer close(db.wDone)
	ctx := context.Background()
	batch := make([]*writeJob, 0, maxWriteBatch)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	var lingerFor time.Duration // adapted to the writes' concurrency, at most writeLinger
	for {
		var first *writeJob
		select {
		case first = <-db.wq:
		case <-db.depDone:
			db.failQueuedWrites()
			return
		}
		batch = db.gatherWrites(batch[:0], first, linger, lingerFor)
		if len(batch) == 0 {
			continue
		}
		// Linger longer while batches find company, less once they do not:
		// a lone writer that waits on each write (nothing to share a
		// commit with) soon pays no linger at all.
		if len(batch) > 1 {
			lingerFor = min(max(2*lingerFor, time.Millisecond), writeLinger)
		} else if lingerFor -= lingerFor / 4; lingerFor < time.Millisecond/2 {
			lingerFor = 0
		}
		db.commitBatch(ctx, batch)
		clear(batch)
	}
}

// failQueuedWrites answers every write still queued with an [ErrClosed]
// error (Close has ended the committers) and returns once none is queued.
func (db *DB) failQueuedWrites() {
	for {
		select {
		case j := <-db.wq:
			j.err = &Error{Op: j.op, Key: j.key, Kind: ErrClosed, Err: errClosedDB}
			close(j.done)
		default:
			return
		}
	}
}

// gatherWrites takes first into batch, then the writes already queued, up
// to maxWriteBatch; a write its caller has abandoned is answered (its done
// closed) and left out. Unless one of them is urgent, lingerFor is 0 or the
// batch is full, it then waits on the stopped timer linger, for up to
// lingerFor, for more writes to join, until an urgent one joins, the batch
// is full or the deposits' committer has ended. It returns the batch, empty
// when every write taken was abandoned.
func (db *DB) gatherWrites(batch []*writeJob, first *writeJob, linger *time.Timer, lingerFor time.Duration) []*writeJob {
	take := func(j *writeJob) {
		if j.state.CompareAndSwap(jobQueued, jobTaken) {
			batch = append(batch, j)
		} else {
			close(j.done) // abandoned: its caller has returned
		}
	}
	take(first)
	urgent := first.urgent
fill:
	for len(batch) < maxWriteBatch {
		select {
		case j := <-db.wq:
			take(j)
			urgent = urgent || j.urgent
		default:
			break fill
		}
	}
	if !urgent && lingerFor > 0 && len(batch) > 0 && len(batch) < maxWriteBatch {
		linger.Reset(lingerFor)
	wait:
		for len(batch) < maxWriteBatch {
			select {
			case j := <-db.wq:
				take(j)
				if j.urgent {
					break wait
				}
			case <-linger.C:
				break wait
			case <-db.depDone:
				break wait
			}
		}
		linger.Stop()
	}
	return batch
}

// commitBatch runs batch in one transaction (see runBatch) and, when that
// fails as a whole, each of its writes alone in a transaction of its own
// (a batch of one is not retried: it has the batch's error); then it
// answers every write of batch (its err set, its done closed).
func (db *DB) commitBatch(ctx context.Context, batch []*writeJob) {
	if err := db.runBatch(ctx, batch); err != nil {
		if len(batch) == 1 {
			batch[0].err = err
		} else {
			for _, j := range batch {
				if err := db.runBatch(ctx, nil, j); err != nil {
					j.err = err
				}
			}
		}
	}
	for _, j := range batch {
		close(j.done)
	}
}

// runBatch runs jobs (or, when extra is given, that one job alone) in one
// transaction and sets each job's err from its fn: a job whose fn fails
// has the transaction rolled back and begun again with the others, its
// writes left out. It returns an error, with nothing committed, when the
// transaction as a whole failed.
func (db *DB) runBatch(ctx context.Context, jobs []*writeJob, extra ...*writeJob) (err error) {
	jobs = append(jobs, extra...)
	durable := false
	for _, j := range jobs {
		durable = durable || j.durable
		j.err = nil
	}
	op, key := jobs[0].op, jobs[0].key
	if len(jobs) > 1 {
		op, key = "write", fmt.Sprintf("%d writes", len(jobs))
	}
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return wrap(op, key, err)
	}
	defer conn.Close()
	if durable {
		if _, err := conn.ExecContext(ctx, "PRAGMA synchronous=FULL"); err != nil {
			return wrap(op, key, err)
		}
		defer func() {
			if _, err := conn.ExecContext(ctx, "PRAGMA synchronous=NORMAL"); err != nil {
				// The connection cannot be trusted with its setting: drop it,
				// so the pool opens a fresh one (NORMAL from its DSN).
				conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}()
	}
	// The jobs run one after the other with no savepoint between them (a
	// savepoint costs two statements per job, and a copy of each page a
	// job changes first): when one fails, the transaction is rolled back
	// and run again without it, so that it undoes only its own writes.
	run := jobs
	for {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return wrap(op, key, err)
		}
		failed := -1
		for i, j := range run {
			if ferr := j.fn(ctx, tx); ferr != nil {
				j.err = wrap(j.op, j.key, ferr)
				failed = i
				break
			}
		}
		if failed < 0 {
			if err := tx.Commit(); err != nil {
				return wrap(op, key, err)
			}
			return nil
		}
		tx.Rollback()
		if len(run) == 1 {
			return nil
		}
		run = append(append(make([]*writeJob, 0, len(run)-1), run[:failed]...), run[failed+1:]...)
	}
}

// exec runs the write statement st with args as one write (see write), and
// returns the rows it changed.
func (db *DB) exec(ctx context.Context, op, key string, st *sql.Stmt, args ...any) (int64, error) {
	var n int64
	err := db.write(ctx, op, key, false, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		n, err = changed(tx.StmtContext(ctx, st).ExecContext(ctx, args...))
		return err
	})
	return n, err
}
