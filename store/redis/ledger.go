package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/backoff"
)

// Ledger is the [backoff.Store] in Redis: one string per host (or site)
// with something against it, read and written by every process. Update is
// optimistic (WATCH, then MULTI/EXEC, retried when another process wrote
// the key meanwhile, at most the Store's MaxRetries times), so it is atomic
// across processes. Instants are stored on Redis's clock and read back on
// the caller's (see the package doc, Time). Get one from [Store.Ledger];
// it is safe for concurrent use.
type Ledger struct{ s *Store }

var _ backoff.Store = (*Ledger)(nil)

// Ledger returns the Store's refusal ledger, for fetch.WithLedgerStore or
// backoff.Ledger's Store.
func (s *Store) Ledger() *Ledger { return &Ledger{s} }

// ledgerRecord is a backoff.State as stored: instants in Unix nanoseconds
// on Redis's clock, 0 for none.
type ledgerRecord struct {
	Strikes   int          `json:"strikes,omitempty"`
	Kind      backoff.Kind `json:"kind,omitempty"`
	Status    int          `json:"status,omitempty"`
	Challenge string       `json:"challenge,omitempty"`
	LastAt    int64        `json:"last_at,omitempty"`
	Until     int64        `json:"until,omitempty"`
	Suspended bool         `json:"suspended,omitempty"`
	NextCheck int64        `json:"next_check,omitempty"`
}

func encodeState(st backoff.State, off time.Duration) []byte {
	b, _ := json.Marshal(ledgerRecord{
		Strikes: st.Strikes, Kind: st.RefusedKind, Status: st.LastStatus, Challenge: st.LastChallenge,
		LastAt: toServer(st.LastAt, off), Until: toServer(st.Until, off), Suspended: st.Suspended,
		NextCheck: toServer(st.NextCheck, off),
	})
	return b
}

func decodeState(b string, off time.Duration) (backoff.State, error) {
	var r ledgerRecord
	if err := json.Unmarshal([]byte(b), &r); err != nil {
		return backoff.State{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return backoff.State{
		Strikes: r.Strikes, RefusedKind: r.Kind, LastStatus: r.Status, LastChallenge: r.Challenge,
		LastAt: toCaller(r.LastAt, off), Until: toCaller(r.Until, off), Suspended: r.Suspended,
		NextCheck: toCaller(r.NextCheck, off),
	}, nil
}

// ledgerExpiry is how long a record is to be kept: for ever (0) while it
// holds strikes or a suspension (only a success clears a refusal), else
// until its cool-down is over and a minute more; negative when it holds
// nothing at now.
func ledgerExpiry(st backoff.State, now time.Time) time.Duration {
	if st.Strikes > 0 || st.Suspended {
		return 0
	}
	if d := st.Until.Sub(now); d > 0 {
		return d + time.Minute
	}
	return -1
}

// read gets the key's record with one reading of Redis's TIME, in one round
// trip, through c (the client, or a transaction's connection).
func (l *Ledger) read(ctx context.Context, c goredis.Cmdable, k string) (backoff.State, bool, time.Time, time.Duration, error) {
	before := l.s.now()
	var tc *goredis.TimeCmd
	var gc *goredis.StringCmd
	_, err := c.Pipelined(ctx, func(p goredis.Pipeliner) error {
		tc, gc = p.Time(ctx), p.Get(ctx, k)
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return backoff.State{}, false, before, 0, err
	}
	server, err := tc.Result()
	if err != nil {
		return backoff.State{}, false, before, 0, err
	}
	off := l.s.observe(before, server)
	v, err := gc.Result()
	if errors.Is(err, goredis.Nil) {
		return backoff.State{}, false, before, off, nil
	}
	if err != nil {
		return backoff.State{}, false, before, off, err
	}
	st, err := decodeState(v, off)
	return st, err == nil, before, off, err
}

// Get implements [backoff.Store].
func (l *Ledger) Get(ctx context.Context, key string) (backoff.State, bool, error) {
	ctx, cancel, err := l.s.call(ctx)
	defer cancel()
	if err != nil {
		return backoff.State{}, false, l.s.fail("ledger get", key, err)
	}
	st, ok, _, _, err := l.read(ctx, l.s.Client, l.s.key("ledger", key))
	if err != nil {
		return backoff.State{}, false, l.s.fail("ledger get", key, err)
	}
	return st, ok, nil
}

// Update implements [backoff.Store]: WATCH the key, read it, call fn, and
// write its result in MULTI/EXEC; if another process wrote the key
// meanwhile, start again (fn is pure).
func (l *Ledger) Update(ctx context.Context, key string, fn func(backoff.State, bool) (backoff.State, bool)) error {
	ctx, cancel, err := l.s.call(ctx)
	defer cancel()
	if err != nil {
		return l.s.fail("ledger update", key, err)
	}
	k := l.s.key("ledger", key)
	err = l.s.optimistic(ctx, k, func(tx *goredis.Tx) error {
		cur, ok, now, off, err := l.read(ctx, tx, k)
		if err != nil {
			return err
		}
		next, keep := fn(cur, ok)
		exp := ledgerExpiry(next, now)
		if (!keep || exp < 0) && !ok {
			return nil
		}
		_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			if !keep || exp < 0 {
				p.Del(ctx, k)
			} else {
				p.Set(ctx, k, encodeState(next, off), exp)
			}
			return nil
		})
		return err
	})
	return l.s.fail("ledger update", key, err)
}

// optimistic runs fn under WATCH of key, again while another client's write
// to key makes its transaction fail, at most MaxRetries times.
func (s *Store) optimistic(ctx context.Context, key string, fn func(tx *goredis.Tx) error) error {
	for range or(s.MaxRetries, DefaultMaxRetries) {
		err := s.Client.Watch(ctx, fn, key)
		if !errors.Is(err, goredis.TxFailedErr) {
			return err
		}
	}
	return ErrContention
}
