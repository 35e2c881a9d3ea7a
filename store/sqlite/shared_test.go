package sqlite

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/fetch"
)

// TestTwoOpensShareOneFile_P1: two DBs opened on one file, as two
// processes would (each its own connections, so only SQLite's file locks
// stand between them), share the pacing schedule and the ledger: of
// concurrent claims of one host at one instant exactly one wins, and
// concurrent ledger updates from both are all counted.
func TestTwoOpensShareOneFile_P1(t *testing.T) {
	dbs := twoOpens(t)
	t0 := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	for round := range 5 {
		now := t0.Add(time.Duration(round) * time.Minute)
		var won atomic.Int32
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, ok, err := dbs[g%2].Schedule().Acquire(ctx, fetch.Claim{Key: "shared.example", Owner: fmt.Sprint("worker-", g),
					Now: now, Gap: time.Second, Limit: 4, TTL: time.Minute})
				if err != nil {
					t.Error(err)
				}
				if ok {
					won.Add(1)
				}
			}()
		}
		wg.Wait()
		if n := won.Load(); n != 1 {
			t.Fatalf("round %d: %d of 16 claims across two opens won the same instant, want 1", round, n)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				err := dbs[g%2].Ledger().Update(ctx, "shared.example", func(cur backoff.State, _ bool) (backoff.State, bool) {
					cur.Strikes++
					return cur, true
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st, _, err := dbs[0].Ledger().Get(ctx, "shared.example")
	if err != nil || st.Strikes != 200 {
		t.Fatalf("strikes after 200 updates from two opens = %d, %v", st.Strikes, err)
	}
}

// twoOpens opens one new file twice, as two processes would (each its own
// connections), with no background sweep; both close at the test's end.
func twoOpens(t *testing.T) [2]*DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shared.db")
	var dbs [2]*DB
	for i := range dbs {
		db, err := Open(ctx, path, &Options{SweepEvery: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs
}
