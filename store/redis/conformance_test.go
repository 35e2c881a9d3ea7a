package redis

// The conformance suites of every store this package implements, each on a
// real redis-server: the suites' own clocks are the callers' (CallerClock),
// since a real server's clock cannot be moved. The scripts' reading of
// Redis's TIME is what the skew and worker tests run on.

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

func TestScheduleConformance_Server(t *testing.T) {
	requireServer(t)
	fetchtest.RunSchedule(t, func(t *testing.T, _ func() time.Time) fetch.Schedule {
		s := realStore(t)
		s.CallerClock = true // a real server's clock cannot be moved: the suite's clock is the callers'
		return s.Schedule()
	})
}

func TestLedgerConformance_Server(t *testing.T) {
	requireServer(t)
	backofftest.Run(t, func() backoff.Store { return realStore(t).Ledger() })
}

func TestValidatorConformance_Server(t *testing.T) {
	requireServer(t)
	fetchtest.Run(t, func(t *testing.T) fetch.ValidatorStore { return realStore(t).Validators() })
}

func TestRobotsConformance_Server(t *testing.T) {
	requireServer(t)
	robotstest.Run(t, func(t *testing.T) robots.Store { return realStore(t).Robots() })
}

func TestStateConformance_Server(t *testing.T) {
	requireServer(t)
	crawltest.Run(t, func(t *testing.T) crawl.State {
		s := realStore(t)
		s.CallerClock = true // the suite's instants are months from the server's clock
		return s.State()
	})
}
