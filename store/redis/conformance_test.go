package redis

// The conformance suites of every store this package implements, each on a
// real redis-server: the suites' own clocks are the callers' (CallerClock),
// since a real server's clock cannot be moved. The scripts' reading of
// Redis's TIME is what the skew and worker tests run on.

import (
	"testing"

	"github.com/politefetch/politefetch/store/storetest"
)

// TestConformance_Server runs every suite of the parts a Store hands out
// (the ledger, robots.txt entries, validators, the schedule, the crawl state)
// on a real redis-server, each check on a fresh key prefix. The schedule's and
// the state's suites set instants months from the server's clock, which a real
// server's cannot follow: the Store takes its callers' clock (CallerClock).
func TestConformance_Server(t *testing.T) {
	requireServer(t)
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		s := realStore(t)
		s.CallerClock = true
		return s
	})
}
