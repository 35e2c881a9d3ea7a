package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
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
//
// A granted [Schedule] claim reads the host's record in its own script, as
// Redis holds it at the claim's instant; the first Get of that host in the
// next 500 ms (the ledger's Check, which the fetch chain makes right after
// the claim) answers from that read, with no round trip of its own. An
// Update of the host by this process drops it first.
//
// A refusal whose write fails (Redis unreachable) is not lost: the Store
// keeps it in this process (at most MaxPending records) and writes it,
// merged with what Redis holds by taking the more cautious of each field,
// at the start of its next call of any kind. The host is meanwhile blocked
// for every worker by the in-flight lease the refused request could not
// release (see [Schedule]), so the others learn of the refusal before they
// may ask the host again.
type Ledger struct{ s *Store }

var _ backoff.Store = (*Ledger)(nil)

// Ledger returns the Store's refusal ledger, for fetch.Stores.Ledger or
// backoff.Ledger's Store.
func (s *Store) Ledger() *Ledger { return &Ledger{s} }

// DefaultMaxPending bounds the refusals a Store keeps in memory while their
// writes fail.
const DefaultMaxPending = 100_000

// remember keeps next as key's pending refusal, merged with one already
// pending, if it holds anything against the host at now.
func (s *Store) remember(key string, next backoff.State, now time.Time) {
	if next.Strikes == 0 && !next.Suspended && !next.Until.After(now) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[string]backoff.State{}
	}
	if cur, ok := s.pending[key]; ok {
		next = cautious(cur, next)
	} else if len(s.pending) >= or(s.MaxPending, DefaultMaxPending) {
		return
	}
	s.pending[key] = next
	s.owed.Store(true)
}

// cautious merges two records of one host, field by field, the more
// cautious way: more strikes, the later cool-down and re-check, suspended
// if either is.
func cautious(a, b backoff.State) backoff.State {
	if b.Strikes > a.Strikes {
		a.Strikes, a.LastStatus, a.LastChallenge, a.RefusedKind = b.Strikes, b.LastStatus, b.LastChallenge, b.RefusedKind
	}
	if b.LastAt.After(a.LastAt) {
		a.LastAt = b.LastAt
	}
	if b.Until.After(a.Until) {
		a.Until = b.Until
	}
	if b.NextCheck.After(a.NextCheck) {
		a.NextCheck = b.NextCheck
	}
	a.Suspended = a.Suspended || b.Suspended
	return a
}

// flush writes the pending refusals, each merged into what Redis holds.
// It stops at the first failure, keeping what is not yet written.
func (l *Ledger) flush(ctx context.Context) error {
	l.s.mu.Lock()
	if len(l.s.pending) == 0 {
		l.s.mu.Unlock()
		return nil
	}
	todo := make(map[string]backoff.State, len(l.s.pending))
	for k, v := range l.s.pending {
		todo[k] = v
	}
	l.s.mu.Unlock()
	for key, p := range todo {
		err := l.update(ctx, key, func(cur backoff.State, ok bool) (backoff.State, bool) {
			if !ok {
				return p, true
			}
			return cautious(cur, p), true
		})
		if err != nil {
			return err
		}
		l.s.mu.Lock()
		if cur, ok := l.s.pending[key]; ok && cur == p {
			delete(l.s.pending, key)
		}
		l.s.mu.Unlock()
	}
	return nil
}

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
	var st backoff.State
	var ok bool
	if v, fresh := l.s.takeClaimed(key); fresh {
		// Read by the claim this Get follows, in the same script.
		ok = v.ok
		if ok {
			if st, err = decodeState(v.rec, v.off); err != nil {
				return backoff.State{}, false, l.s.fail("ledger get", key, err)
			}
		}
	} else if st, ok, _, _, err = l.read(ctx, l.s.Client, l.s.key("ledger", key)); err != nil {
		return backoff.State{}, false, l.s.fail("ledger get", key, err)
	}
	// A refusal still owed (its write failed again) counts here at once.
	l.s.mu.Lock()
	p, owed := l.s.pending[key]
	l.s.mu.Unlock()
	switch {
	case owed && ok:
		st = cautious(st, p)
	case owed:
		st, ok = p, true
	}
	return st, ok, nil
}

// Update implements [backoff.Store]: WATCH the key, read it, call fn, and
// write its result in MULTI/EXEC; if another process wrote the key
// meanwhile, start again (fn is pure).
func (l *Ledger) Update(ctx context.Context, key string, fn func(backoff.State, bool) (backoff.State, bool)) error {
	l.s.forgetClaimed(key)
	ctx, cancel, err := l.s.call(ctx)
	defer cancel()
	if err != nil {
		return l.s.fail("ledger update", key, err)
	}
	err = l.update(ctx, key, fn)
	if err != nil {
		// Not written: keep what fn makes of the record as this process
		// last knew it, so a refusal is not forgotten.
		l.s.mu.Lock()
		cur, ok := l.s.pending[key]
		l.s.mu.Unlock()
		if next, keep := fn(cur, ok); keep {
			l.s.remember(key, next, l.s.now())
		}
	}
	return l.s.fail("ledger update", key, err)
}

// update is Update's read-modify-write, without the pending refusals.
func (l *Ledger) update(ctx context.Context, key string, fn func(backoff.State, bool) (backoff.State, bool)) error {
	k := l.s.key("ledger", key)
	return l.s.optimistic(ctx, []string{k}, func(tx *goredis.Tx) error {
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
}

// optimistic runs fn under WATCH of keys, again while another client's
// write to one of them makes its transaction fail, at most MaxRetries
// times. Between tries it waits a random moment that grows with each lost
// race (up to 8 ms), so that writers contending for one key take turns
// instead of all retrying at once; the wait ends early with ctx.
func (s *Store) optimistic(ctx context.Context, keys []string, fn func(tx *goredis.Tx) error) error {
	for attempt := range or(s.MaxRetries, DefaultMaxRetries) {
		err := s.Client.Watch(ctx, fn, keys...)
		if !errors.Is(err, goredis.TxFailedErr) {
			return err
		}
		limit := 50 * time.Microsecond << min(attempt, 8)
		t := time.NewTimer(rand.N(limit) + time.Microsecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return ErrContention
}
