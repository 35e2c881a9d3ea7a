package feed

import (
	"context"
	"sync"
)

// Validators are the conditional-GET validators a server sent with a feed
// (D4). The zero value means none.
type Validators struct {
	ETag         string // sent back as If-None-Match
	LastModified string // sent back as If-Modified-Since
}

// Store keeps validators per feed URL. Implementations must be safe for
// concurrent use. [MemStore] is the in-memory one.
type Store interface {
	// Validators returns the validators kept for url; the zero value when
	// none are kept.
	Validators(ctx context.Context, url string) (Validators, error)
	// SetValidators keeps v for url, replacing what was kept.
	SetValidators(ctx context.Context, url string, v Validators) error
}

// MemStore is an in-memory [Store]. Its zero value is empty and ready; it is
// safe for concurrent use. It grows with the number of feeds read.
type MemStore struct {
	mu sync.Mutex
	m  map[string]Validators
}

// Validators implements [Store].
func (s *MemStore) Validators(_ context.Context, url string) (Validators, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[url], nil
}

// SetValidators implements [Store].
func (s *MemStore) SetValidators(_ context.Context, url string, v Validators) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]Validators)
	}
	if v == (Validators{}) {
		delete(s.m, url)
		return nil
	}
	s.m[url] = v
	return nil
}
