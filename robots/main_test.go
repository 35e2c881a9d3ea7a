package robots

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: a robots
// fetch, its timeout watcher or a connection of the test web.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
