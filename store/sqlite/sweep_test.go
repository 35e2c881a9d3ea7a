package sqlite

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/robots"
)

func (db *DB) rows(t testing.TB) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, table := range []string{"ledger", "validators", "schedule", "robots"} {
		var n int
		if err := db.r.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		m[table] = n
	}
	return m
}

// fileSize is the database file's size plus its WAL's.
func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// see records one host as a crawl does: its robots.txt, a claim of its
// schedule, a feed's validators, and a Retry-After that leaves a record
// without strikes once it has passed.
func see(t testing.TB, db *DB, host string, now time.Time) {
	t.Helper()
	body := []byte("User-agent: *\nDisallow: /private/\n")
	if err := db.Robots().Put(ctx, host, robots.Record{Outcome: robots.ParseBody, Status: 200, Body: body, FetchedAt: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Schedule().Acquire(ctx, fetch.Claim{Key: host, Owner: "see", Now: now, Gap: time.Second, TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := db.Schedule().Release(ctx, host, "see", now); err != nil {
		t.Fatal(err)
	}
	if err := db.Validators().Put(ctx, "https://"+host+"/feed.xml", fetch.Validator{ETag: `"v1"`}); err != nil {
		t.Fatal(err)
	}
	if err := db.Ledger().Update(ctx, host, func(backoff.State, bool) (backoff.State, bool) {
		return backoff.State{LastStatus: 503, LastAt: now, Until: now.Add(time.Minute)}, true
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSweepBoundsTheFile_P1: a crawl that sees 100,000 hosts, twice over,
// leaves a file whose rows are swept once past their lifetime and whose
// size does not grow with the second round: the background sweep, in
// bounded batches, keeps it bounded.
func TestSweepBoundsTheFile_P1(t *testing.T) {
	hosts, batch := 100_000, 5000
	switch {
	case raceEnabled: // each write some ten times slower: fewer hosts, still several sweeps a round
		hosts, batch = 2_500, 1000
	case testing.Short():
		hosts = 10_000
	}
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewManual(start)
	swept := make(chan Swept, 1)
	db := openTest(t, &Options{Clock: clk, SweepEvery: time.Minute, SweepBatch: batch, ValidatorRetain: 48 * time.Hour,
		onSweep: func(s Swept, err error) {
			if err != nil {
				t.Error(err)
			}
			swept <- s
		}})
	var peak int64
	for round := range 2 {
		now := clk.Now()
		for i := range hosts {
			see(t, db, fmt.Sprintf("host%06d.example", i), now)
		}
		if got := db.rows(t); got["ledger"] != hosts || got["robots"] != hosts || got["validators"] != hosts || got["schedule"] != hosts {
			t.Fatalf("round %d: rows after seeing %d hosts: %v", round, hosts, got)
		}
		// The file as its rows need it, not where the WAL stands between
		// two checkpoints (up to walCheckpointBytes of it).
		if _, err := db.w.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			t.Fatal(err)
		}
		size := fileSize(t, db.Path())
		t.Logf("round %d: %d hosts seen, file %d bytes (%d per host)", round, hosts, size, size/int64(hosts))
		if round == 1 && size > peak*11/10 {
			t.Fatalf("the file grew from %d to %d bytes on a second round of the same number of hosts", peak, size)
		}
		peak = max(peak, size)
		// Three days later every row is past its lifetime; the background
		// sweep deletes them in batches.
		for clk.Waiters() == 0 { // the sweep loop waits for its next round
			runtime.Gosched()
		}
		clk.Advance(72 * time.Hour)
		for sweeps := 1; ; sweeps++ {
			s := <-swept
			if s.Ledger > batch || s.Robots > batch || s.Validators > batch || s.Schedule > batch {
				t.Fatalf("one sweep deleted more than its batch: %+v", s)
			}
			if !s.full(batch) {
				t.Logf("round %d: %d sweeps of at most %d rows a table", round, sweeps, batch)
				break
			}
		}
		if got := db.rows(t); got["ledger"]+got["robots"]+got["validators"]+got["schedule"] != 0 {
			t.Fatalf("round %d: rows left after the sweeps: %v", round, got)
		}
		var pages, free int
		if err := db.r.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if err := db.r.QueryRow("PRAGMA freelist_count").Scan(&free); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: after the sweeps, %d pages in the file (%d free), %d bytes with the WAL", round, pages, free, fileSize(t, db.Path()))
	}
}
