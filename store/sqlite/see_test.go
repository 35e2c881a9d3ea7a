package sqlite

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
)

// A reference seen by several writers at once, each having read it as
// absent, is created once: the first insert adds it, and each other writer
// finds it there and merges into it, as a See of a stored reference does.
func TestCrawlState_SeeAtOnceCreatesOnce(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, nil).CrawlState()
	now := time.Unix(1_700_000_000, 0)
	const writers = 8
	for round := range 5 {
		key := "story-" + string(rune('a'+round))
		var wg sync.WaitGroup
		var mu sync.Mutex
		created := 0
		start := make(chan struct{})
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ref := crawl.RefState{Key: key, URL: "https://news.example/" + key, FeedID: "feed-" + string(rune('0'+w))}
				got, isNew, err := s.See(ctx, "src", ref, now)
				if err != nil {
					t.Error(err)
					return
				}
				if got.Key != key || got.URL != ref.URL || !got.FirstSeen.Equal(now) {
					t.Errorf("writer %d: See returned %+v", w, got)
				}
				if isNew {
					mu.Lock()
					created++
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		if created != 1 {
			t.Errorf("%s: %d writers were told they created it, want 1", key, created)
		}
		r, ok, err := s.Ref(ctx, "src", key)
		if err != nil || !ok || r.URL != "https://news.example/"+key || r.Outcome != crawl.Pending {
			t.Fatalf("%s: stored %+v, %v, %v", key, r, ok, err)
		}
	}
	refs, err := s.Pending(ctx, "src")
	if err != nil || len(refs) != 5 {
		t.Fatalf("pending: %d references, %v; want 5", len(refs), err)
	}
}
