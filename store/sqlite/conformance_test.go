package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/politefetch/politefetch/store/storetest"
)

// openTest opens a fresh file in t's temporary directory, with no
// background sweep unless opts asks for one, and closes it at the end.
func openTest(t testing.TB, opts *Options) *DB {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.SweepEvery == 0 {
		o.SweepEvery = -1
	}
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "state.db"), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// TestConformance runs every suite of the parts a DB hands out (the ledger,
// robots.txt entries, validators, the schedule, the crawl state, deposits),
// each check on a fresh file.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend { return openTest(t, nil) })
}
