package main

// Where a crawl's own state (schedules, pass leases, references, per-pass
// counters) and its deposits are kept: the SQLite file, beside the fetch
// state (ledger, robots.txt records, validators, pacing).

import (
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/store/sqlite"
)

// crawlStores returns the crawl state and the deposits kept in db.
func crawlStores(db *sqlite.DB) (crawl.State, crawl.Deposits) {
	return db.CrawlState(), db.Deposits()
}
