package fetch_test

import (
	"testing"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/fetch/fetchtest"
)

// TestMemoryStore_D4_Conformance runs the ValidatorStore conformance checks on MemoryStore.
func TestMemoryStore_D4_Conformance(t *testing.T) {
	fetchtest.Run(t, func(*testing.T) fetch.ValidatorStore { return &fetch.MemoryStore{} })
}
