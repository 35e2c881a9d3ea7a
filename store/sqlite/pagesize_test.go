package sqlite

import (
	"path/filepath"
	"testing"
)

// TestOpen_PageSizeAndCheckpoint: a file Open creates has pages of
// newFilePageSize, and a file made with 8 KiB pages keeps them; either way
// the writer checkpoints after walCheckpointBytes of WAL.
func TestOpen_PageSizeAndCheckpoint(t *testing.T) {
	pragmas := func(db *DB) (pageSize, autocheckpoint int) {
		t.Helper()
		if err := db.w.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
			t.Fatal(err)
		}
		if err := db.w.QueryRow("PRAGMA wal_autocheckpoint").Scan(&autocheckpoint); err != nil {
			t.Fatal(err)
		}
		return
	}
	if ps, ac := pragmas(openTest(t, nil)); ps != newFilePageSize || ac != walCheckpointBytes/newFilePageSize {
		t.Errorf("new file: page_size %d, wal_autocheckpoint %d; want %d, %d", ps, ac, newFilePageSize, walCheckpointBytes/newFilePageSize)
	}

	path := filepath.Join(t.TempDir(), "old.db")
	raw := rawOpen(t, path)
	if _, err := raw.Exec("PRAGMA page_size=8192; CREATE TABLE t (x); DROP TABLE t"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err := Open(ctx, path, &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if ps, ac := pragmas(db); ps != 8192 || ac != walCheckpointBytes/8192 {
		t.Errorf("8 KiB file: page_size %d, wal_autocheckpoint %d; want 8192, %d", ps, ac, walCheckpointBytes/8192)
	}
}

// The writer's page cache is CacheKiB; each reader's at most ReaderCacheKiB,
// or CacheKiB when that is smaller.
func TestOpen_ReaderCacheBounded(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct{ opt, writer, reader int }{
		{0, DefaultCacheKiB, ReaderCacheKiB},
		{128, 128, 128},
	} {
		db, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"), &Options{SweepEvery: -1, CacheKiB: tc.opt})
		if err != nil {
			t.Fatal(err)
		}
		var w, r int
		if err := db.w.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&w); err != nil {
			t.Fatal(err)
		}
		if err := db.r.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&r); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if w != -tc.writer || r != -tc.reader {
			t.Errorf("CacheKiB %d: writer cache_size %d, reader %d; want %d and %d", tc.opt, w, r, -tc.writer, -tc.reader)
		}
	}
}
