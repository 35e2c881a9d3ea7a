// Package consumer is a service's view of the library: it imports fetch,
// crawl and store/sqlite and nothing else. Its test builds such a service as a
// module of its own and checks that the library brings none of the CLI's,
// the browser test's or the test servers' modules into its module graph.
package consumer

import (
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/store/sqlite"
)

// Service is what a service holds: a polite client, a crawler and a store.
type Service struct {
	Client  *fetch.Client
	Crawler *crawl.Crawler
	Store   *sqlite.DB
}
