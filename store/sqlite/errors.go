package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	msqlite "modernc.org/sqlite"
)

// Sentinels an [*Error] unwraps to, so a caller can act on the kind of
// failure with errors.Is without reading SQLite's result codes.
var (
	// ErrReadOnly: the file, its directory or the file system does not let
	// us write (SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN on a file we
	// may not create).
	ErrReadOnly = errors.New("sqlite: database is read-only")
	// ErrLocked: another connection held the file's lock for longer than
	// the busy timeout (SQLITE_BUSY, SQLITE_LOCKED).
	ErrLocked = errors.New("sqlite: database is locked")
	// ErrFull: the disk, or the database's size limit, is full
	// (SQLITE_FULL).
	ErrFull = errors.New("sqlite: database or disk is full")
	// ErrCorrupt: the file is not a database or its pages are damaged
	// (SQLITE_CORRUPT, SQLITE_NOTADB). Nothing is written to such a file.
	ErrCorrupt = errors.New("sqlite: database file is corrupt")
	// ErrNewerSchema: the file was written by a newer version of this
	// package ([SchemaError] has the versions). The file is not touched.
	ErrNewerSchema = errors.New("sqlite: database schema is newer than this package")
	// ErrClosed: the DB was closed.
	ErrClosed = errors.New("sqlite: database is closed")
	// ErrHeld: another process holds the file's pacing schedule (see
	// [DB.HoldSchedule]), or this one's hold was taken over.
	ErrHeld = errors.New("sqlite: the schedule is held by another process")
)

// Error is the failure of one operation on the database: what was being
// read or stored (Op, such as "ledger update"), for which key, and the
// underlying error, usually a SQLite error. It unwraps to that error and,
// when the failure has a kind a caller should act on, to one of
// [ErrReadOnly], [ErrLocked], [ErrFull], [ErrCorrupt], [ErrClosed] or
// [ErrHeld].
//
// Every state store of this package returns its failures as an *Error, and
// the politefetch layers above treat any store error as a reason not to
// fetch (they fail closed).
type Error struct {
	Op   string // what was being done: "ledger update", "deposit put", ...
	Key  string // the host, URL or digest concerned; "" for none
	Kind error  // one of the sentinels above, or nil
	Err  error  // the cause
}

// Error says what failed, for which key, and why.
func (e *Error) Error() string {
	key := ""
	if e.Key != "" {
		key = fmt.Sprintf(" %q", e.Key)
	}
	if e.Kind != nil {
		return fmt.Sprintf("sqlite: %s%s: %s: %v", e.Op, key, strings.TrimPrefix(e.Kind.Error(), "sqlite: "), e.Err)
	}
	return fmt.Sprintf("sqlite: %s%s: %v", e.Op, key, e.Err)
}

// Unwrap returns the cause and, when there is one, the kind sentinel.
func (e *Error) Unwrap() []error {
	if e.Kind != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Err}
}

// SchemaError reports a file whose schema version (PRAGMA user_version)
// this package cannot use. It matches [ErrNewerSchema].
type SchemaError struct {
	Path      string
	Version   int // the file's
	Supported int // the newest this package knows
}

// Error names both versions.
func (e *SchemaError) Error() string {
	return fmt.Sprintf("sqlite: %s has schema version %d, newer than %d, the newest this package knows: upgrade politefetch to open it (the file was not modified)", e.Path, e.Version, e.Supported)
}

// Unwrap returns ErrNewerSchema.
func (e *SchemaError) Unwrap() error { return ErrNewerSchema }

// SQLite primary result codes this package classifies.
const (
	codePerm     = 3
	codeBusy     = 5
	codeLocked   = 6
	codeReadOnly = 8
	codeCorrupt  = 11
	codeFull     = 13
	codeCantOpen = 14
	codeNotADB   = 26
)

// kindOf maps an error to the sentinel a caller should act on, or nil.
func kindOf(err error) error {
	var se *msqlite.Error
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Code() & 0xff {
	case codeReadOnly, codePerm, codeCantOpen:
		return ErrReadOnly
	case codeBusy, codeLocked:
		return ErrLocked
	case codeFull:
		return ErrFull
	case codeCorrupt, codeNotADB:
		return ErrCorrupt
	}
	return nil
}

// wrap makes err an *Error for op on key; nil stays nil, and context
// errors are returned as they are (wrapped), so errors.Is(err,
// context.Canceled) holds.
func wrap(op, key string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, errClosedDB) {
		return &Error{Op: op, Key: key, Kind: ErrClosed, Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Op: op, Key: key, Err: err}
	}
	return &Error{Op: op, Key: key, Kind: kindOf(err), Err: err}
}
