package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
)

// pendingKeys returns source's Pending keys as fmt prints a []string.
func pendingKeys(t *testing.T, st *CrawlState, source string) string {
	t.Helper()
	refs, err := st.Pending(ctx, source)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range refs {
		if r.Outcome != crawl.Pending {
			t.Fatalf("Pending gave %s settled as %v", r.Key, r.Outcome)
		}
		keys = append(keys, r.Key)
	}
	return fmt.Sprint(keys)
}

// TestCrawlState_PendingAfterReopen: a reference a full deposit's Put
// settled (in the deposit's transaction, not by Settle) leaves Pending as
// one Settle ended does, and a file opened again lists the same.
func TestCrawlState_PendingAfterReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(ctx, path, &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	st := db.CrawlState()
	now := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	for i, k := range []string{"c", "b", "full", "a", "excluded"} {
		if _, _, err := st.See(ctx, "s", crawl.RefState{Key: k, URL: "https://news.example/" + k}, now.Add(time.Duration(i/2)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Settle(ctx, "s", "excluded", crawl.Excluded, "gated", now); err != nil {
		t.Fatal(err)
	}
	full := benchDeposit(1)
	full.Source, full.Key = "s", "full"
	full.Digest = full.Sum()
	if _, err := db.Deposits().Put(ctx, full); err != nil {
		t.Fatal(err)
	}
	const want = "[b c a]"
	if got := pendingKeys(t, st, "s"); got != want {
		t.Fatalf("Pending = %s, want %s", got, want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := pendingKeys(t, db.CrawlState(), "s"); got != want {
		t.Fatalf("Pending after reopening = %s, want %s", got, want)
	}
}

// TestCrawlState_PendingAfterMigration: a file of schema version 11, whose
// references were written before crawl_ref_pending existed, lists its
// pending ones once migrated (CREATE INDEX indexes the rows already there).
func TestCrawlState_PendingAfterMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	raw := rawOpen(t, path)
	for _, m := range migrations[:11] {
		if _, err := raw.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range []struct {
		key     string
		outcome crawl.Outcome
	}{{"z", crawl.Pending}, {"y", crawl.Deposited}, {"x", crawl.Pending}, {"w", crawl.Mismatch}, {"v", crawl.Pending}} {
		if _, err := raw.Exec(`INSERT INTO crawl_ref (source, `+refCols+`) VALUES ('s', ?1, '', '', '', 0, NULL, ?2, ?3, '', 0)`,
			r.key, int64(i)*1e9, int(r.outcome)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA application_id=%d; PRAGMA user_version=11", applicationID)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err := Open(ctx, path, &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := pendingKeys(t, db.CrawlState(), "s"); got != "[z x v]" {
		t.Fatalf("Pending after migrating = %s, want [z x v]", got)
	}
}

// TestCrawlState_PendingReadsItsIndex: SQLite's plan for Pending searches
// crawl_ref_pending, the partial index of the pending references, and
// sorts nothing (the index is in Refs' order).
func TestCrawlState_PendingReadsItsIndex(t *testing.T) {
	db := openTest(t, nil)
	rows, err := db.r.Query("EXPLAIN QUERY PLAN "+refPendingSQL, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	p := strings.Join(plan, "; ")
	if !strings.Contains(p, "crawl_ref_pending") || strings.Contains(p, "TEMP B-TREE") {
		t.Fatalf("plan %q: want a search of crawl_ref_pending without a sort", p)
	}
}
