package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/store/sqlite"
)

// A refusal recorded in the file is still honoured after a restart.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "politefetch")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "state.db")
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		log.Fatal(err)
	}
	ledger := &backoff.Ledger{Store: db.Ledger()}
	if _, err := ledger.Observe(ctx, "news.example", backoff.Outcome{Kind: backoff.Article, Status: 429}, now); err != nil {
		log.Fatal(err)
	}
	db.Close()

	// The next run opens the same file.
	db, err = sqlite.Open(ctx, path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ledger = &backoff.Ledger{Store: db.Ledger()}
	d := ledger.Check(ctx, "news.example", backoff.Feed, now.Add(time.Minute))
	fmt.Println(d.Allowed, d.Until.Sub(now))
	// Output: false 5m0s
}
