package digest

import (
	"container/list"
	"context"
	"crypto/sha256"
	"sync"

	"github.com/politefetch/politefetch/extract"
)

// DefaultCacheSize is how many summaries a [Cache] keeps.
const DefaultCacheSize = 1024

// Cache remembers the summaries of a Summarizer, so that a digest rebuilt
// for every reader asks a slow or costly summarizer (a language model)
// once per article. An article is known by its headline, language,
// description and body blocks: one whose text changed is summarized again. Errors are not
// remembered. At most Size summaries are kept, the least recently used
// dropped first.
//
// Set Summarizer; the zero value of Size works. A Cache is safe for
// concurrent use if its Summarizer is; do not change its fields after the
// first call.
type Cache struct {
	// Summarizer summarizes what the cache does not know. Nil: Extractive{}.
	Summarizer Summarizer
	// Size bounds the summaries kept. 0: DefaultCacheSize.
	Size int

	mu    sync.Mutex
	order *list.List // of *cacheEntry, most recently used first
	byKey map[[32]byte]*list.Element
}

type cacheEntry struct {
	key [32]byte
	sum Summary
}

var _ Summarizer = (*Cache)(nil)

// Summarize implements [Summarizer].
func (c *Cache) Summarize(ctx context.Context, a *extract.Article) (Summary, error) {
	n := len(a.Headline.Value) + len(a.Language.Value) + len(a.Description.Value) + 3
	for _, b := range a.Blocks {
		n += len(b.Text) + 2
	}
	buf := make([]byte, 0, n)
	buf = append(append(buf, a.Headline.Value...), 0)
	buf = append(append(buf, a.Language.Value...), 0)
	buf = append(append(buf, a.Description.Value...), 0)
	for _, b := range a.Blocks {
		buf = append(append(append(buf, byte(b.Kind)), b.Text...), 0)
	}
	key := sha256.Sum256(buf)

	c.mu.Lock()
	if c.byKey == nil {
		c.order, c.byKey = list.New(), map[[32]byte]*list.Element{}
	}
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		s := e.Value.(*cacheEntry).sum
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()

	inner := c.Summarizer
	if inner == nil {
		inner = Extractive{}
	}
	s, err := inner.Summarize(ctx, a)
	if err != nil {
		return Summary{}, err
	}
	s.Sentences = append([]string(nil), s.Sentences...)

	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok { // another call got there first
		c.order.MoveToFront(e)
		return e.Value.(*cacheEntry).sum, nil
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry{key: key, sum: s})
	size := c.Size
	if size <= 0 {
		size = DefaultCacheSize
	}
	for c.order.Len() > size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*cacheEntry).key)
	}
	return s, nil
}

// Len returns the number of summaries kept.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.order == nil {
		return 0
	}
	return c.order.Len()
}
