package backoff_test

import (
	"testing"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/backoff/backofftest"
)

func TestMemoryStoreConformance(t *testing.T) {
	t.Parallel()
	backofftest.Run(t, func(*testing.T) backoff.Store { return new(backoff.MemoryStore) })
}
