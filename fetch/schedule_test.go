package fetch_test

import (
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/fetch/fetchtest"
)

// TestMemorySchedule_P1 runs the Schedule conformance suite on MemorySchedule,
// which takes the time from its callers' now arguments.
func TestMemorySchedule_P1_Conformance(t *testing.T) {
	t.Parallel()
	fetchtest.RunSchedule(t, func(*testing.T, func() time.Time) fetch.Schedule { return &fetch.MemorySchedule{} })
}
