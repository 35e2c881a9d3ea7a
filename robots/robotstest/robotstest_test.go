package robotstest_test

import (
	"testing"

	"github.com/politefetch/politefetch/robots"
	"github.com/politefetch/politefetch/robots/robotstest"
)

func TestMemoryStore(t *testing.T) {
	robotstest.Run(t, func(*testing.T) robots.Store { return &robots.MemoryStore{} })
}
