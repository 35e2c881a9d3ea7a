package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/politefetch/politefetch/internal/clock"
)

// ReadOnlyURI is path as the URI of an SQLite file opened for reading only
// (mode=ro), with the characters an SQLite URI would read otherwise ("%",
// "?", "#") escaped: the one place a path becomes such a URI, for programs
// that query the file with database/sql themselves.
func ReadOnlyURI(path string) string { return fileURI(path) + "?mode=ro" }

// OpenReadOnly opens an existing store for reading only, as a report, an
// export or a verification needs: it creates nothing, migrates nothing,
// sweeps nothing and takes no write lock, so it works on a file or a medium
// it may not write, and beside a crawl writing the same file. Every write
// through the returned DB fails with [ErrReadOnly].
//
// Its failures name their cause: the directory or the file does not exist
// (matching fs.ErrNotExist), the file is not a politefetch store, it was
// written by a newer version ([*SchemaError]) or by an older one that a
// read-write [Open] must migrate first, it is locked ([ErrLocked]) or
// damaged ([ErrCorrupt]). A nil opts means the zero [Options]; SweepEvery
// is ignored.
func OpenReadOnly(ctx context.Context, path string, opts *Options) (*DB, error) {
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
	if opt.CacheKiB <= 0 {
		opt.CacheKiB = DefaultCacheKiB
	}
	opt.SweepEvery = -1
	if path == "" || path == ":memory:" {
		return nil, &Error{Op: "open read-only", Key: path, Err: errors.New("a file path is needed")}
	}
	if err := existing(path); err != nil {
		return nil, err
	}
	db := &DB{path: path, opt: opt, clk: clock.Or(opt.Clock), stop: make(chan struct{}), done: make(chan struct{}),
		depQ: make(chan *depReq, maxDepositBatch), depDone: make(chan struct{}),
		wq: make(chan *writeJob, maxWriteBatch), wDone: make(chan struct{})}
	close(db.done) // no sweep
	q := url.Values{"_pragma": {fmt.Sprintf("busy_timeout(%d)", opt.BusyTimeout.Milliseconds()), "query_only(1)", fmt.Sprintf("cache_size(-%d)", opt.CacheKiB)}}
	open := func(extra string) error {
		var err error
		if db.w, err = sql.Open("sqlite", ReadOnlyURI(path)+extra+"&"+q.Encode()); err != nil {
			return wrap("open read-only", path, err)
		}
		db.w.SetMaxOpenConns(1)
		if db.r, err = sql.Open("sqlite", ReadOnlyURI(path)+extra+"&"+q.Encode()); err != nil {
			db.w.Close()
			return wrap("open read-only", path, err)
		}
		db.r.SetMaxOpenConns(opt.Readers)
		db.r.SetMaxIdleConns(opt.Readers)
		if err := db.checkReadable(ctx); err != nil {
			db.w.Close()
			db.r.Close()
			return err
		}
		return nil
	}
	err := open("")
	if errors.Is(err, ErrReadOnly) || errors.Is(err, ErrCorrupt) && !writable(path) {
		// A WAL file on a medium we cannot write, without its -shm file:
		// SQLite cannot share memory with a writer there, and there is
		// none, so the file is read as it stands.
		err = open("&immutable=1")
	}
	if err != nil {
		return nil, err
	}
	if err := db.prepare(ctx); err != nil {
		db.w.Close()
		db.r.Close()
		return nil, err
	}
	go db.commitWrites()   // fails what it is given: the connection is query_only
	go db.commitDeposits() // likewise
	return db, nil
}

// existing says, in words, what is missing when path is not there.
func existing(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return &Error{Op: "open read-only", Key: path, Err: err}
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		return &Error{Op: "open read-only", Key: path, Err: fmt.Errorf("no such directory %s: %w", dir, fs.ErrNotExist)}
	} else if !st.IsDir() {
		return &Error{Op: "open read-only", Key: path, Err: fmt.Errorf("%s is not a directory: %w", dir, fs.ErrNotExist)}
	}
	return &Error{Op: "open read-only", Key: path, Err: fmt.Errorf("no such file: %w", fs.ErrNotExist)}
}

// writable reports whether this process may write beside path.
func writable(path string) bool {
	f, err := os.CreateTemp(filepath.Dir(path), ".politefetch-probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

// checkReadable reads the file's header: a politefetch store of this
// version, or a named refusal.
func (db *DB) checkReadable(ctx context.Context) error {
	conn, err := db.r.Conn(ctx)
	if err != nil {
		return wrap("open read-only", db.path, err)
	}
	defer conn.Close()
	version, app, tables, err := header(ctx, conn)
	if err != nil {
		return wrap("open read-only", db.path, err)
	}
	switch {
	case version > SchemaVersion:
		return &SchemaError{Path: db.path, Version: version, Supported: SchemaVersion}
	case app != applicationID || tables == 0:
		return &Error{Op: "open read-only", Key: db.path, Err: fmt.Errorf("not a politefetch store (application_id %#x, %d tables)", app, tables)}
	case version < SchemaVersion:
		return &Error{Op: "open read-only", Key: db.path, Err: fmt.Errorf("written by an older version (schema %d, this one reads %d): open it read-write once, with a crawl, to migrate it", version, SchemaVersion)}
	}
	return nil
}
