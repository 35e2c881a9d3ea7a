package politetest

import (
	"testing"

	"github.com/politefetch/politefetch/internal/leaktest"
)

// TestMain checks that no goroutine outlives the tests: every Web's Close
// stops its servers, its handlers and its transports' idle connections.
func TestMain(m *testing.M) {
	leaktest.Main(m)
}
