package main

// Where a crawl's own state (schedules, leases, references) and its
// deposits are kept: the SQLite file, beside the fetch state.

import (
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/store/sqlite"
)

// crawlStores returns the crawl state and the deposits kept in db, and
// whether they outlive the process. store/sqlite does not keep them yet:
// until it does they are in memory, and the crawl says so.
func crawlStores(db *sqlite.DB) (crawl.State, crawl.Deposits, bool, error) {
	return new(crawl.MemoryState), new(crawl.MemoryDeposits), false, nil
}
