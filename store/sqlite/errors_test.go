package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/robots"
)

var ctx = context.Background()

// rawOpen opens path with the driver alone, as another program would.
func rawOpen(t *testing.T, path string) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	t.Cleanup(func() { raw.Close() })
	return raw
}

// refuse checks that Open refuses path with an error matching want, and
// leaves its bytes as they were.
func refuse(t *testing.T, path string, want error) error {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, &Options{SweepEvery: -1})
	if err == nil {
		db.Close()
		t.Fatalf("Open(%s) succeeded, want an error", filepath.Base(path))
	}
	if want != nil && !errors.Is(err, want) {
		t.Fatalf("Open(%s) = %v, want %v", filepath.Base(path), err, want)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatalf("Open(%s) failed but changed the file", filepath.Base(path))
	}
	return err
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "newer.db")
	db, err := Open(ctx, path, &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Ledger().Update(ctx, "a.example", func(backoff.State, bool) (backoff.State, bool) {
		return backoff.State{Strikes: 1}, true
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw := rawOpen(t, path)
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version=%d; PRAGMA wal_checkpoint(TRUNCATE)", SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	err = refuse(t, path, ErrNewerSchema)
	var se *SchemaError
	if !errors.As(err, &se) || se.Version != SchemaVersion+1 || se.Supported != SchemaVersion {
		t.Fatalf("error %v, want a *SchemaError naming versions %d and %d", err, SchemaVersion+1, SchemaVersion)
	}
	if !strings.Contains(err.Error(), "not modified") {
		t.Errorf("error %q does not say the file was left alone", err)
	}
}

func TestOpenRefusesNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "garbage.db")
	if err := os.WriteFile(path, bytes.Repeat([]byte("this is not an SQLite file\n"), 400), 0o644); err != nil {
		t.Fatal(err)
	}
	refuse(t, path, ErrCorrupt)
}

func TestOpenRefusesAnotherApplicationsDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	raw := rawOpen(t, path)
	if _, err := raw.Exec("CREATE TABLE ledger (x); INSERT INTO ledger VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	err := refuse(t, path, nil)
	if !strings.Contains(err.Error(), "not a politefetch database") {
		t.Fatalf("error %q does not say whose file it is", err)
	}
}

// TestMigratesForward opens a file of every older version (down to an
// empty one) and checks it ends at SchemaVersion with its data intact.
func TestMigratesForward(t *testing.T) {
	if len(migrations) != SchemaVersion {
		t.Fatalf("%d migrations for schema version %d", len(migrations), SchemaVersion)
	}
	for from := 0; from < SchemaVersion; from++ {
		t.Run(fmt.Sprint("from", from), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			raw := rawOpen(t, path)
			for v := 0; v < from; v++ {
				if _, err := raw.Exec(migrations[v]); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := raw.Exec(fmt.Sprintf("PRAGMA application_id=%d; PRAGMA user_version=%d", applicationID, from)); err != nil {
				t.Fatal(err)
			}
			raw.Close()
			db, err := Open(ctx, path, &Options{SweepEvery: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var v int
			if err := db.r.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
				t.Fatalf("user_version = %d, %v; want %d", v, err, SchemaVersion)
			}
		})
	}
}

// TestClosedFailsClosed: after Close every store fails with ErrClosed, and
// a ledger over it refuses.
func TestClosedFailsClosed(t *testing.T) {
	db := openTest(t, nil)
	db.Close()
	_, _, err := db.Ledger().Get(ctx, "a.example")
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Ledger().Get after Close = %v, want ErrClosed", err)
	}
	if _, _, err := db.Validators().Get(ctx, "https://a.example/"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Validators().Get after Close = %v", err)
	}
	if _, _, err := db.Robots().Get(ctx, "a.example"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Robots().Get after Close = %v", err)
	}
	if _, _, err := db.Schedule().Acquire(ctx, fetch.Claim{Key: "a.example", Owner: "o", Now: time.Now(), Gap: time.Second, TTL: time.Minute}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Schedule().Acquire after Close = %v", err)
	}
	l := &backoff.Ledger{Store: db.Ledger()}
	if d := l.Check(ctx, "a.example", backoff.Feed, time.Now()); d.Allowed {
		t.Fatalf("ledger over a closed DB allowed a request: %+v", d)
	}
}

// TestLockedFile: a write that cannot get the file's lock within the busy
// timeout fails with ErrLocked; a ledger then refuses to record, and
// nothing committed is lost. Once the lock is released writes go on.
func TestLockedFile(t *testing.T) {
	db := openTest(t, &Options{BusyTimeout: 50 * time.Millisecond})
	led := db.Ledger()
	put := func(key string, strikes int) error {
		return led.Update(ctx, key, func(backoff.State, bool) (backoff.State, bool) {
			return backoff.State{Strikes: strikes}, true
		})
	}
	if err := put("kept.example", 3); err != nil {
		t.Fatal(err)
	}
	other := rawOpen(t, db.Path())
	tx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO schedule VALUES ('held.example', 1)"); err != nil { // takes the write lock
		t.Fatal(err)
	}
	err = put("new.example", 1)
	var e *Error
	if !errors.Is(err, ErrLocked) || !errors.As(err, &e) || e.Op != "ledger update" || e.Key != "new.example" {
		t.Fatalf("Update under another's lock = %v, want an *Error for ledger update of new.example matching ErrLocked", err)
	}
	if st, ok, err := led.Get(ctx, "kept.example"); err != nil || !ok || st.Strikes != 3 {
		t.Fatalf("read under another's write lock = %+v, %v, %v; want the committed record", st, ok, err)
	}
	tx.Rollback()
	if err := put("new.example", 1); err != nil {
		t.Fatalf("Update after the lock was released: %v", err)
	}
}

// TestFullDisk: with the file capped (PRAGMA max_page_count), a write that
// does not fit fails with ErrFull, and everything committed before it is
// intact and readable; a ledger that cannot record a refusal says so.
func TestFullDisk(t *testing.T) {
	db := openTest(t, nil)
	rs := db.Robots()
	var pages int
	if err := db.w.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(fmt.Sprintf("PRAGMA max_page_count=%d", pages+8)); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("Disallow: /private/\n"), 200) // 4 KB
	stored := 0
	var err error
	for i := 0; i < 100; i++ {
		host := fmt.Sprintf("h%d.example", i)
		err = rs.Put(ctx, host, robots.Record{Outcome: robots.ParseBody, Status: 200, Body: body, FetchedAt: time.Now(), Expires: time.Now().Add(time.Hour)})
		if err != nil {
			break
		}
		stored++
	}
	if !errors.Is(err, ErrFull) {
		t.Fatalf("after %d puts: %v, want ErrFull", stored, err)
	}
	if stored == 0 {
		t.Fatal("nothing fitted before the limit")
	}
	for i := 0; i < stored; i++ {
		r, ok, err := rs.Get(ctx, fmt.Sprintf("h%d.example", i))
		if err != nil || !ok || !bytes.Equal(r.Body, body) {
			t.Fatalf("record %d committed before the disk filled: ok %v, err %v", i, ok, err)
		}
	}
	l := &backoff.Ledger{Store: db.Ledger()}
	big := strings.Repeat("x", 64<<10)
	if _, err := l.Observe(ctx, big+".example", backoff.Outcome{Kind: backoff.Article, Status: 429}, time.Now()); !errors.Is(err, ErrFull) {
		t.Fatalf("Observe of a refusal on a full disk = %v, want ErrFull", err)
	}
}

// TestCorruptFile: pages of a table overwritten with garbage make reads of
// it fail with ErrCorrupt, and a ledger over it refuses rather than
// allowing.
func TestCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "corrupt.db")
	db, err := Open(ctx, path, &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if err := db.Ledger().Update(ctx, fmt.Sprintf("host%05d.example", i), func(backoff.State, bool) (backoff.State, bool) {
			return backoff.State{Strikes: 1, LastStatus: 429, Until: time.Now().Add(time.Hour)}, true
		}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close() // checkpoints the WAL into the file
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	for off := 2 * page; off+page <= len(raw); off += 2 * page { // every other page after the schema
		copy(raw[off:off+page], bytes.Repeat([]byte{0xA5}, page))
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, &Options{SweepEvery: -1})
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open of a corrupt file = %v, want ErrCorrupt", err)
		}
		t.Logf("Open refused the file: %v", err)
		return
	}
	defer db.Close()
	l := &backoff.Ledger{Store: db.Ledger()}
	refused := 0
	for i := range 2000 {
		if d := l.Check(ctx, fmt.Sprintf("host%05d.example", i), backoff.Feed, time.Now()); !d.Allowed {
			refused++
		}
	}
	if refused != 2000 {
		t.Fatalf("%d of 2000 cooling hosts refused on a corrupt file, want all (cooling or unavailable)", refused)
	}
	_, _, err = db.Ledger().Get(ctx, "host01000.example")
	t.Logf("Get: %v", err)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Get on a corrupt page = %v, want ErrCorrupt", err)
	}
}

// TestReadOnlyFile: a file the process may not write is refused at Open
// with ErrReadOnly, untouched. Permissions do not stop root, so the test
// makes the file immutable (chattr +i) and skips where it cannot.
func TestReadOnlyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.db")
	db, err := Open(ctx, path, &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
			t.Skipf("running as root and cannot make the file immutable (chattr: %v %s)", err, out)
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
	} else if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	refuse(t, path, ErrReadOnly)
}

// TestQueryOnlyWriterIsReadOnly checks the classification of a write
// refused as read-only, which the file-system test above may have to skip.
func TestQueryOnlyWriterIsReadOnly(t *testing.T) {
	db := openTest(t, nil)
	if _, err := db.w.Exec("PRAGMA query_only=1"); err != nil {
		t.Fatal(err)
	}
	err := db.Validators().Put(ctx, "https://a.example/feed", fetch.Validator{ETag: `"x"`})
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Put on a read-only connection = %v, want ErrReadOnly", err)
	}
}

// TestOpen_PathWithURICharacters: a path whose directory names hold "#",
// "?" or "%" opens that very file, with its settings. Before, the SQLite URI
// ended the path at the "#": the stores of "runs#1" and "runs#2" were one
// file, "runs", beside them.
func TestOpen_PathWithURICharacters(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	for _, dir := range []string{"runs#1", "runs#2", "what?now", "100%"} {
		path := filepath.Join(base, dir, "state.db")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		db, err := Open(ctx, path, &Options{SweepEvery: -1})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if _, ok, err := db.Schedule().Acquire(ctx, fetch.Claim{Key: "a.example", Owner: "o", Now: time.Unix(1e9, 0), Gap: time.Second, Limit: 1, TTL: time.Minute}); err != nil || !ok {
			t.Fatalf("%s: the first claim in a new store: ok %v, %v", dir, ok, err)
		}
		var timeout int
		if err := db.w.QueryRow("PRAGMA busy_timeout").Scan(&timeout); err != nil || timeout == 0 {
			t.Errorf("%s: busy_timeout %d, %v: the DSN's settings were lost", dir, timeout, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: the store is not at its path: %v", dir, err)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "runs")); err == nil {
		t.Error(`a file "runs" was made beside the stores`)
	}
}
