package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
)

// A running crawl's tallies count in the report before it ends; a run that
// died without its last write is folded into the totals by the next save
// once its entry is stale, and never counted twice.
func TestTallies_LiveAndStaleRuns(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crawl.db.tallies.json")
	old := &Tallies{Runs: 1, Sources: map[string]*Tally{"s": {Deposits: 1}}, Hosts: map[string]*Tally{},
		Live: map[string]*RunTally{
			"dead":  {Updated: time.Now().Add(-2 * staleRun), Sources: map[string]*Tally{"s": {Deposits: 10}}},
			"alive": {Updated: time.Now(), Sources: map[string]*Tally{"s": {Deposits: 100}}},
		}}
	b, _ := json.Marshal(old)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := loadTallies(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := got.total().Sources["s"].Deposits; n != 111 {
		t.Errorf("total deposits %d, want 111 (ended, dead and alive runs)", n)
	}
	o := newObserver(time.Second, nil)
	if err := saveTallies(path, "mine", newTestCrawler(), o, false); err != nil {
		t.Fatal(err)
	}
	got, _ = loadTallies(path)
	if got.Runs != 2 || got.Live["dead"] != nil || got.Live["alive"] == nil || got.Live["mine"] == nil {
		t.Errorf("after a save: runs %d, live %v", got.Runs, got.Live)
	}
	if n := got.total().Sources["s"].Deposits; n != 111 {
		t.Errorf("total deposits %d after folding the dead run, want 111", n)
	}
	if err := saveTallies(path, "mine", newTestCrawler(), o, true); err != nil {
		t.Fatal(err)
	}
	got, _ = loadTallies(path)
	if got.Runs != 3 || got.Live["mine"] != nil {
		t.Errorf("after the final save: runs %d, live %v", got.Runs, got.Live)
	}
}

// newTestCrawler is a crawler that has done nothing.
func newTestCrawler() *crawl.Crawler { return &crawl.Crawler{} }
