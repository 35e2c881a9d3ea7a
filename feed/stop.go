package feed

import (
	"context"
	"iter"
	"slices"
	"sync"
	"time"
)

// DefaultWindow is the backlog window that is always re-read: refs
// dated within the last 48 hours are yielded even when known.
const DefaultWindow = 48 * time.Hour

// Ref is a reference to an article, as a feed or a backlog list names it.
// Walkers read references only, never the articles.
type Ref struct {
	// ID is the CMS's identifier when the list gives one (the same
	// string as the feed's, e.g. WordPress "123"); "" when it gives none.
	// Sitemaps name no identifier, so their refs have none.
	ID string
	// URL is the article's address: absolute, tracking parameters removed.
	URL string
	// Published is the publication time the list gives (a news sitemap's
	// publication_date, an API's date); zero when none.
	Published time.Time
	// Updated is the modification time the list gives (a sitemap's
	// lastmod, an API's modified date); zero when none.
	Updated time.Time
}

// Date is the ref's date for ordering and for the floor date: Published,
// else Updated; zero when the list gives neither.
func (r Ref) Date() time.Time {
	if !r.Published.IsZero() {
		return r.Published
	}
	return r.Updated
}

// latest is the later of Published and Updated.
func (r Ref) latest() time.Time {
	if r.Updated.After(r.Published) {
		return r.Updated
	}
	return r.Published
}

// Known tells a walker which references the caller already holds.
// Implementations must be safe for concurrent use.
type Known interface {
	Known(ref Ref) bool
}

// KnownFunc adapts a function to [Known].
type KnownFunc func(ref Ref) bool

// Known calls f(ref).
func (f KnownFunc) Known(ref Ref) bool { return f(ref) }

// KnownSet is an in-memory [Known]: a ref is known when its ID (if any) or
// its URL was added. The zero value is empty and ready; it is safe for
// concurrent use.
type KnownSet struct {
	mu sync.Mutex
	m  map[string]struct{}
}

// Add records ref as known.
func (s *KnownSet) Add(ref Ref) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]struct{})
	}
	if ref.ID != "" {
		s.m["id:"+ref.ID] = struct{}{}
	}
	if ref.URL != "" {
		s.m["url:"+ref.URL] = struct{}{}
	}
}

// Known implements [Known].
func (s *KnownSet) Known(ref Ref) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ref.ID != "" {
		if _, ok := s.m["id:"+ref.ID]; ok {
			return true
		}
	}
	_, ok := s.m["url:"+ref.URL]
	return ref.URL != "" && ok
}

// Len reports how many keys (IDs and URLs) the set holds.
func (s *KnownSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// Stop holds a backlog walk's stop rules. The zero value walks the
// whole backlog, bounded only by the walker's limits.
type Stop struct {
	// Floor is the source's floor date: refs dated before it are not
	// yielded and the walk ends there. Zero: no floor. Undated refs cannot
	// be compared and are yielded.
	Floor time.Time
	// Known tells which refs the caller holds. A known ref dated within
	// the window is yielded again; a known ref beyond it is not, and a
	// batch (one sitemap file, one API page) made only of such refs ends
	// the walk. Undated refs count as beyond the window. Nil: nothing is
	// known.
	Known Known
	// Window is the span always re-read. 0: DefaultWindow.
	Window time.Duration
	// Now is the instant the window is measured from. Zero: the time the
	// walk starts, from the walker's clock.
	Now time.Time
}

// verdict is what the stop rules say about one batch.
type verdict struct {
	yield []Ref // the refs to yield, newest first
	floor bool  // a dated ref before the floor was seen: the walk ends
	known bool  // the whole batch is known and beyond the window: the walk ends
}

// judge applies the stop rules to one batch at instant now. It orders the
// batch newest first (stable; undated refs last, in list order).
func (s Stop) judge(batch []Ref, now time.Time) verdict {
	batch = slices.Clone(batch)
	slices.SortStableFunc(batch, func(a, b Ref) int {
		da, db := a.Date(), b.Date()
		switch {
		case da.IsZero() && db.IsZero():
			return 0
		case da.IsZero():
			return 1
		case db.IsZero():
			return -1
		}
		return db.Compare(da)
	})
	w := s.Window
	if w <= 0 {
		w = DefaultWindow
	}
	edge := now.Add(-w)
	var v verdict
	considered, knownOld := 0, 0
	for _, r := range batch {
		if d := r.Date(); !s.Floor.IsZero() && !d.IsZero() && d.Before(s.Floor) {
			v.floor = true
			continue
		}
		considered++
		recent := r.latest().After(edge)
		if !recent && s.Known != nil && s.Known.Known(r) {
			knownOld++
			continue
		}
		v.yield = append(v.yield, r)
	}
	v.known = considered > 0 && knownOld == considered
	return v
}

// Walker walks a backlog list newest to oldest, yielding references only.
// Iteration stops when the caller breaks, when a stop rule fires, or
// at the walker's bounds. A non-nil error is yielded with a zero Ref; the
// caller may continue (the walker goes on with the next document where it
// can) or break.
type Walker interface {
	Walk(ctx context.Context, stop Stop) iter.Seq2[Ref, error]
}

// The walkers of this package.
var (
	_ Walker = (*SitemapWalker)(nil)
	_ Walker = (*APIWalker)(nil)
)
