// Package storetest checks a state backend whole: every part it hands out
// through Stores passes that part's conformance suite, unchanged.
//
// A backend's own test is then one line:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Backend { return openTest(t) })
//	}
package storetest

import (
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/backoff/backofftest"
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/crawl/crawltest"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/fetch/fetchtest"
	"github.com/politefetch/politefetch/robots"
	"github.com/politefetch/politefetch/robots/robotstest"
)

// Backend is a state backend as the suites see it: something that hands out
// its stores whole, as store/sqlite's DB and store/redis's Store do.
type Backend interface {
	Stores() (fetch.Stores, crawl.Stores)
}

// Run runs, as subtests of t, the conformance suite of each part the backends
// of newBackend hand out: the ledger (backofftest.Run), robots.txt entries
// (robotstest.Run), validators (fetchtest.Run), the pacing schedule
// (fetchtest.RunSchedule), the crawl state (crawltest.Run) and deposits
// (crawltest.RunDeposits). A part the backend leaves nil is skipped, saying
// so. newBackend is called for every check with that check's own t, and must
// return an empty backend whose resources t's cleanup releases (or skip t,
// where the backend cannot be had).
func Run(t *testing.T, newBackend func(t *testing.T) Backend) {
	t.Helper()
	fetchSide := func(t *testing.T) fetch.Stores { f, _ := newBackend(t).Stores(); return f }
	crawlSide := func(t *testing.T) crawl.Stores { _, c := newBackend(t).Stores(); return c }
	// One look at which parts this backend has, on a backend of its own.
	var f fetch.Stores
	var c crawl.Stores
	had := false
	t.Run("Parts", func(t *testing.T) {
		f, c = newBackend(t).Stores()
		had = true
	})
	if !had {
		t.Skip("no backend could be had (see Parts): no suite run")
	}
	part := func(name string, present bool, run func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			if !present {
				t.Skipf("the backend keeps no %s", name)
			}
			run(t)
		})
	}
	part("Ledger", f.Ledger != nil, func(t *testing.T) {
		backofftest.Run(t, func(t *testing.T) backoff.Store { return fetchSide(t).Ledger })
	})
	part("Robots", f.Robots != nil, func(t *testing.T) {
		robotstest.Run(t, func(t *testing.T) robots.Store { return fetchSide(t).Robots })
	})
	part("Validators", f.Validators != nil, func(t *testing.T) {
		fetchtest.Run(t, func(t *testing.T) fetch.ValidatorStore { return fetchSide(t).Validators })
	})
	part("Schedule", f.Schedule != nil, func(t *testing.T) {
		fetchtest.RunSchedule(t, func(t *testing.T, _ func() time.Time) fetch.Schedule { return fetchSide(t).Schedule })
	})
	part("State", c.State != nil, func(t *testing.T) {
		crawltest.Run(t, func(t *testing.T) crawl.State { return crawlSide(t).State })
	})
	part("Deposits", c.Deposits != nil, func(t *testing.T) {
		crawltest.RunDeposits(t, func(t *testing.T) crawl.Deposits { return crawlSide(t).Deposits })
	})
}
