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
