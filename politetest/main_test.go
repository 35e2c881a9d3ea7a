package politetest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: every Web's Close
// stops its servers, its handlers and its transports' idle connections.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
