package backoff_test

import (
	"testing"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/backoff/backofftest"
)

func TestMemStoreConformance(t *testing.T) {
	backofftest.Run(t, func() backoff.Store { return new(backoff.MemStore) })
}
