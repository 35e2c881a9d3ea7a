package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/robots"
	"github.com/politefetch/politefetch/store/sqlite"
)

// A store opened read-only reads what a crawl wrote, refuses every write
// with ErrReadOnly, and leaves the file's bytes as they were.
func TestOpenReadOnly_ReadsRefusesWritesChangesNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	rw, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := robots.Record{Outcome: robots.AllowAll, Status: 404, FetchedAt: time.Unix(1e9, 0), Expires: time.Unix(2e9, 0)}
	if err := rw.Robots().Put(ctx, "news.example", rec); err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := sqlite.OpenReadOnly(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := ro.Robots().Get(ctx, "news.example")
	if err != nil || !ok || got.Status != 404 {
		t.Fatalf("Get = %+v, %v, %v; want the record written", got, ok, err)
	}
	if err := ro.Robots().Put(ctx, "other.example", rec); !errors.Is(err, sqlite.ErrReadOnly) {
		t.Errorf("a write through a read-only store: %v, want ErrReadOnly", err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("opening read-only changed the file")
	}
}

// Each failure names its cause.
func TestOpenReadOnly_NamesTheCause(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	notStore := filepath.Join(dir, "notes.txt")
	os.WriteFile(notStore, []byte("not a database at all, just some words in a file that is long enough"), 0o600)
	otherDB := filepath.Join(dir, "other.db")
	newer := filepath.Join(dir, "newer.db")
	for _, p := range []string{otherDB, newer} {
		db, err := sql.Open("sqlite", p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE TABLE t (x)"); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	rw, err := sqlite.Open(ctx, newer+".store", nil)
	if err != nil {
		t.Fatal(err)
	}
	rw.Close()
	newer += ".store"
	db, err := sql.Open("sqlite", newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 9999"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for _, tc := range []struct {
		name, path, want string
		is               error
	}{
		{"no such directory", filepath.Join(dir, "missing", "crawl.db"), "no such directory", fs.ErrNotExist},
		{"no such file", filepath.Join(dir, "crawl.db"), "no such file", fs.ErrNotExist},
		{"not a database", notStore, "", sqlite.ErrCorrupt},
		{"another program's database", otherDB, "not a politefetch store", nil},
		{"newer schema", newer, "", sqlite.ErrNewerSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := sqlite.OpenReadOnly(ctx, tc.path, nil)
			if err == nil {
				db.Close()
				t.Fatal("opened")
			}
			if tc.want != "" && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want it to say %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v, want it to match %v", err, tc.is)
			}
		})
	}
}

// ReadOnlyURI escapes what an SQLite URI would read otherwise: a relative
// path or bare file name, a directory named "runs#2", a "?" in a name.
func TestReadOnlyURI_OpensTheFileNamed(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "runs#2 ?%41")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "crawl.db")
	rw, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	rw.Close()
	t.Chdir(dir)
	for _, p := range []string{path, "crawl.db", "./crawl.db"} {
		db, err := sql.Open("sqlite", sqlite.ReadOnlyURI(p))
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRow("SELECT count(*) FROM deposit").Scan(&n); err != nil {
			t.Errorf("%s as %s: %v", p, sqlite.ReadOnlyURI(p), err)
		}
		db.Close()
	}
}
