package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politefetch/politefetch/store/sqlite"
)

// P1: a command that fetches holds its file's schedule (store.schedule's
// default): a second one on the same file is refused, with what to do,
// until the first ends; with store.schedule: shared both open, sharing the
// file's schedule.
func TestStore_P1_SecondFetcherOfAHeldFileRefused(t *testing.T) {
	ctx := context.Background()
	cfg, err := LoadConfig(readyConfig("strict-news"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "crawl.db")
	c1, db1, err := openClient(ctx, cfg, path, &netFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := db1.Fetch().Schedule.(*sqlite.HeldSchedule); !ok {
		t.Fatalf("the fetch side paces through %T, want the held schedule", db1.Fetch().Schedule)
	}
	_, _, err = openClient(ctx, cfg, path, &netFlags{})
	if !errors.Is(err, sqlite.ErrHeld) || !strings.Contains(err.Error(), "store.schedule: shared") {
		t.Fatalf("a second fetcher of a held file: %v; want ErrHeld, naming store.schedule: shared", err)
	}
	c1.Close()
	if err := db1.Close(); err != nil {
		t.Fatal(err)
	}
	shared := *cfg
	shared.Store.Schedule = "shared"
	for range 2 {
		c, db, err := openClient(ctx, &shared, path, &netFlags{})
		if err != nil {
			t.Fatalf("with store.schedule: shared: %v", err)
		}
		if _, ok := db.Fetch().Schedule.(*sqlite.Schedule); !ok {
			t.Fatalf("store.schedule: shared paces through %T, want the file's shared schedule", db.Fetch().Schedule)
		}
		t.Cleanup(func() { c.Close(); db.Close() })
	}
}
