package digest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/politefetch/politefetch/extract"
)

type counting struct {
	calls atomic.Int32
	fail  bool
}

func (c *counting) Summarize(ctx context.Context, a *extract.Article) (Summary, error) {
	c.calls.Add(1)
	if c.fail {
		return Summary{}, errors.New("down")
	}
	return Summary{Sentences: []string{a.Headline.Value + "."}, By: "counting"}, nil
}

func TestCache(t *testing.T) {
	t.Parallel()
	inner := &counting{}
	c := &Cache{Summarizer: inner, Size: 2}
	ctx := context.Background()
	a1, a2, a3 := article("One", "Text one here."), article("Two", "Text two here."), article("Three", "Text three here.")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s, err := c.Summarize(ctx, a1); err != nil || s.Text() != "One." {
				t.Errorf("Summarize = %q, %v", s.Text(), err)
			}
		}()
	}
	wg.Wait()
	n := inner.calls.Load()
	if _, err := c.Summarize(ctx, a1); err != nil || inner.calls.Load() != n {
		t.Errorf("a known article was summarized again")
	}
	changed := article("One", "Text one, revised.")
	_, _ = c.Summarize(ctx, changed)
	if inner.calls.Load() != n+1 {
		t.Errorf("a changed article was not summarized again")
	}
	_, _ = c.Summarize(ctx, a2)
	_, _ = c.Summarize(ctx, a3)
	if c.Len() != 2 {
		t.Errorf("Len = %d, want the bound 2", c.Len())
	}
	failing := &Cache{Summarizer: &counting{fail: true}}
	for i := range 2 {
		if _, err := failing.Summarize(ctx, a1); err == nil {
			t.Errorf("call %d: no error", i)
		}
	}
	if failing.Len() != 0 {
		t.Errorf("an error was remembered")
	}
}

func BenchmarkCacheHit(b *testing.B) {
	c := &Cache{}
	a := article("Headline", strings.Repeat("Some body text of the story. ", 40))
	_, _ = c.Summarize(context.Background(), a)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = c.Summarize(context.Background(), a)
	}
}
