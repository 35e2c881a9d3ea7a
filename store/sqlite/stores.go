package sqlite

import (
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
)

// Stores hands out every part of the file's state: the fetch side (robots.txt
// entries, the ledger, validators, the pacing schedule) for fetch.WithStores,
// and the crawl side (crawl state and deposits) for a crawl.Crawler. All of
// them live in db's one file.
func (db *DB) Stores() (fetch.Stores, crawl.Stores) {
	return fetch.Stores{
			Robots:     db.Robots(),
			Ledger:     db.Ledger(),
			Validators: db.Validators(),
			Schedule:   db.Schedule(),
		}, crawl.Stores{
			State:    db.CrawlState(),
			Deposits: db.Deposits(),
		}
}
