package netguard

import (
	"testing"

	"github.com/politefetch/politefetch/internal/leaktest"
)

// TestMain fails the package's tests if any goroutine outlives them.
func TestMain(m *testing.M) { leaktest.Main(m) }
