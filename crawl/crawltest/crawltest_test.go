package crawltest_test

import (
	"testing"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/crawl/crawltest"
)

func TestMemoryState(t *testing.T) {
	crawltest.Run(t, func(*testing.T) crawl.State { return new(crawl.MemoryState) })
}

func TestMemoryDeposits(t *testing.T) {
	crawltest.RunDeposits(t, func(*testing.T) crawl.Deposits { return new(crawl.MemoryDeposits) })
}
