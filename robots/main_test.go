package robots

import (
	"testing"

	"github.com/politefetch/politefetch/internal/leaktest"
)

// TestMain fails the run if any test leaves a goroutine behind: a robots
// fetch, its timeout watcher or a connection of the test web.
func TestMain(m *testing.M) {
	leaktest.Main(m)
}
