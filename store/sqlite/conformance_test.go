package sqlite

import (
	"context"
	"path/filepath"
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

func TestLedgerConformance(t *testing.T) {
	backofftest.Run(t, func() backoff.Store { return openTest(t, nil).Ledger() })
}

func TestValidatorConformance(t *testing.T) {
	fetchtest.Run(t, func(t *testing.T) fetch.ValidatorStore { return openTest(t, nil).Validators() })
}

func TestScheduleConformance(t *testing.T) {
	fetchtest.RunSchedule(t, func(t *testing.T, _ func() time.Time) fetch.Schedule { return openTest(t, nil).Schedule() })
}

func TestRobotsConformance(t *testing.T) {
	robotstest.Run(t, func(t *testing.T) robots.Store { return openTest(t, nil).Robots() })
}

func TestCrawlStateConformance(t *testing.T) {
	crawltest.Run(t, func(t *testing.T) crawl.State { return openTest(t, nil).CrawlState() })
}

func TestDepositsConformance(t *testing.T) {
	crawltest.RunDeposits(t, func(t *testing.T) crawl.Deposits { return openTest(t, nil).Deposits() })
}
