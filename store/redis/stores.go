package redis

import (
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
)

// Stores hands out every part of the state that processes share through
// Redis: the fetch side (robots.txt entries, the ledger, validators, the
// pacing schedule) for fetch.WithStores, and the crawl state. Redis keeps no
// deposits: the crawl side's Deposits is nil, for the caller to set (each
// worker its own SQLite file, a JSONL or WARC writer).
func (s *Store) Stores() (fetch.Stores, crawl.Stores) {
	return fetch.Stores{
			Robots:     s.Robots(),
			Ledger:     s.Ledger(),
			Validators: s.Validators(),
			Schedule:   s.Schedule(),
		}, crawl.Stores{
			State: s.State(),
		}
}
