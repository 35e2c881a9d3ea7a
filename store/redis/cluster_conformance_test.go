package redis

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

// TestCluster_Conformance: every conformance suite the stores of this
// package pass on one redis-server passes unchanged on a real Redis
// Cluster (three masters, three replicas) through a ClusterClient. The
// cluster itself checks the keys: a script or a transaction whose keys
// are not all in one slot fails with CROSSSLOT, and a script touching a
// key it did not declare, or one on another node, fails too.
func TestCluster_Conformance(t *testing.T) {
	requireCluster(t)
	t.Run("Schedule", func(t *testing.T) {
		fetchtest.RunSchedule(t, func(t *testing.T, _ func() time.Time) fetch.Schedule {
			s := clusterStore(t)
			s.CallerClock = true // as on one server: the suite's clock is the callers'
			return s.Schedule()
		})
	})
	t.Run("Ledger", func(t *testing.T) {
		backofftest.Run(t, func(t *testing.T) backoff.Store { return clusterStore(t).Ledger() })
	})
	t.Run("Validators", func(t *testing.T) {
		fetchtest.Run(t, func(t *testing.T) fetch.ValidatorStore { return clusterStore(t).Validators() })
	})
	t.Run("Robots", func(t *testing.T) {
		robotstest.Run(t, func(t *testing.T) robots.Store { return clusterStore(t).Robots() })
	})
	t.Run("State", func(t *testing.T) {
		crawltest.Run(t, func(t *testing.T) crawl.State {
			s := clusterStore(t)
			s.CallerClock = true
			return s.State()
		})
	})
}
