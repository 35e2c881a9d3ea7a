package crawl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Sink receives deposits beside the store of record: an export to JSONL,
// a WARC file, a queue.
type Sink interface {
	// Write receives one deposit the store has just added. d is the
	// Crawler's: Write must not keep or change it after it returns.
	Write(ctx context.Context, d *Deposit) error
}

// SinkFunc is a function that is a Sink.
type SinkFunc func(ctx context.Context, d *Deposit) error

// Write calls f.
func (f SinkFunc) Write(ctx context.Context, d *Deposit) error { return f(ctx, d) }

// Tee is a Deposits that fans one stream of deposits out: each is put into
// Store, the store of record, and each that Store added (not one it already
// held) is then written to every Sink, in order. Put returns Store's added;
// List and Withdraw are Store's.
//
// A Store that fails leaves the sinks untouched and its error is Put's. A
// sink that fails misses that deposit, which Store has kept; Put returns a
// *SinkError, which the Crawler counts as a failure of ours to deposit, so
// a pass whose output cannot be written (a full disk) stops after
// MaxFailures of them. Each sink is written from one goroutine at a time,
// however many passes put deposits at once, so it needs no lock of its own.
// The zero Tee has no Store: its Put fails.
type Tee struct {
	Store Deposits
	Sinks []Sink

	mu sync.Mutex // serialises the sinks' writes
}

var _ Deposits = (*Tee)(nil)

// ErrNoStore is returned by a Tee without a Store.
var ErrNoStore = errors.New("crawl: tee without a store")

// SinkError says which of a Tee's sinks failed to write a deposit that the
// store kept.
type SinkError struct {
	Sink   int // its index in Sinks
	Source string
	Digest string
	Err    error
}

func (e *SinkError) Error() string {
	return fmt.Sprintf("crawl: deposit %s %s kept, but sink %d failed: %v", e.Source, e.Digest, e.Sink, e.Err)
}

func (e *SinkError) Unwrap() error { return e.Err }

// Put implements Deposits.
func (t *Tee) Put(ctx context.Context, d *Deposit) (bool, error) {
	if t.Store == nil {
		return false, ErrNoStore
	}
	added, err := t.Store.Put(ctx, d)
	if err != nil || !added {
		return added, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for i, s := range t.Sinks {
		if err := s.Write(ctx, d); err != nil {
			errs = append(errs, &SinkError{Sink: i, Source: d.Source, Digest: d.Digest, Err: err})
		}
	}
	return added, errors.Join(errs...)
}

// List implements Deposits: Store's.
func (t *Tee) List(ctx context.Context, source string, since time.Time) ([]*Deposit, error) {
	if t.Store == nil {
		return nil, ErrNoStore
	}
	return t.Store.List(ctx, source, since)
}

// Withdraw implements Deposits: Store's. What the sinks were given stays
// where they wrote it.
func (t *Tee) Withdraw(ctx context.Context, source string) (int, error) {
	if t.Store == nil {
		return 0, ErrNoStore
	}
	return t.Store.Withdraw(ctx, source)
}
