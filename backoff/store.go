package backoff

import (
	"context"
	"sync"
	"time"
)

// State is the ledger's record of one host (or site). The zero State is a
// host with nothing against it; stores need not keep it.
type State struct {
	// Strikes counts the refusals in a row.
	Strikes int
	// RefusedKind is the weightiest Kind refused since the last clearing
	// success: a success clears the record only if its kind weighs at least
	// as much (an article refusal is not cleared by a feed read).
	RefusedKind Kind
	// LastStatus is the status code of the last refusal.
	LastStatus int
	// LastChallenge names the provider whose challenge page was the last
	// refusal, or "".
	LastChallenge string
	// LastAt is when the last refusal was observed.
	LastAt time.Time
	// Until is the end of the cool-down; zero or past means none.
	Until time.Time
	// Suspended means the host's articles are off, apart from one re-check
	// at NextCheck.
	Suspended bool
	// NextCheck is when a suspended host's articles may be tried again.
	NextCheck time.Time
}

// Cause describes the last refusal: "challenge cloudflare", "status 429",
// or "" when there was none.
func (s State) Cause() string {
	return Outcome{Status: s.LastStatus, Challenge: s.LastChallenge}.causeIfAny()
}

func (o Outcome) causeIfAny() string {
	if o.Challenge == "" && o.Status == 0 {
		return ""
	}
	return o.Cause()
}

// idle reports whether s holds nothing that matters at now, so a store may
// drop it.
func (s *State) idle(now time.Time) bool {
	return s.Strikes == 0 && !s.Suspended && !s.Until.After(now)
}

// Store keeps the ledger's per-host records. Keys are the ledger's host or
// site keys. Implementations must be safe for concurrent use; a store shared
// by several processes must make Update atomic across them (a transaction,
// or optimistic retries), so that politeness holds in all of them.
// [backofftest.Run] checks an implementation.
//
// A Store error makes the ledger refuse the request (it never fails open).
type Store interface {
	// Get returns key's record and whether there is one.
	Get(ctx context.Context, key string) (State, bool, error)
	// Update replaces key's record by fn's result, atomically with respect
	// to every other Update of the same key. fn gets the current record
	// and whether it exists; it returns the new record and whether to keep
	// it (false deletes the record). fn must be pure: a store may call it
	// more than once, and only its last result is stored. Update must not
	// call fn while holding a lock that another key's Update needs for
	// I/O.
	Update(ctx context.Context, key string, fn func(cur State, ok bool) (next State, keep bool)) error
}

// MemoryStore is the in-memory [Store]. Its zero value is ready to use; it is
// safe for concurrent use and must not be copied after first use.
//
// It holds only hosts that have something against them: a record the
// ledger no longer needs (no strikes, no suspension, cool-down over) is
// deleted as soon as the ledger next touches it, so idle hosts with no
// state cost nothing. A record is compact (about 64 bytes plus the key) and
// is kept until a success clears it: a refusal is never forgotten because
// memory ran short.
type MemoryStore struct {
	shards [memShards]memShard
}

const memShards = 64

type memShard struct {
	mu sync.Mutex
	m  map[string]packed
	_  [48]byte // one shard per 64-byte cache line
}

// packed is a State in 48 bytes.
type packed struct {
	lastAt, until, nextCheck int64 // Unix ns; 0 is the zero Time
	challenge                string
	strikes                  int32
	status                   int16
	kind                     Kind
	suspended                bool
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	n := t.UnixNano()
	if n == 0 {
		n = 1 // 0 is reserved for the zero Time; 1 ns off at the epoch
	}
	return n
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func pack(s State) packed {
	st := s.Strikes
	if st > 1<<30 {
		st = 1 << 30
	}
	return packed{
		lastAt: unixNano(s.LastAt), until: unixNano(s.Until), nextCheck: unixNano(s.NextCheck),
		challenge: s.LastChallenge, strikes: int32(st), status: int16(s.LastStatus),
		kind: s.RefusedKind, suspended: s.Suspended,
	}
}

func (p packed) unpack() State {
	return State{
		Strikes: int(p.strikes), RefusedKind: p.kind, LastStatus: int(p.status),
		LastChallenge: p.challenge, LastAt: fromUnixNano(p.lastAt), Until: fromUnixNano(p.until),
		Suspended: p.suspended, NextCheck: fromUnixNano(p.nextCheck),
	}
}

func (m *MemoryStore) shard(key string) *memShard {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return &m.shards[h%memShards]
}

// Get returns key's record. It never fails.
func (m *MemoryStore) Get(_ context.Context, key string) (State, bool, error) {
	sh := m.shard(key)
	sh.mu.Lock()
	p, ok := sh.m[key]
	sh.mu.Unlock()
	if !ok {
		return State{}, false, nil
	}
	return p.unpack(), true, nil
}

// Update replaces key's record by fn's result under the key's shard lock
// (fn is pure; no I/O happens under the lock). It never fails.
func (m *MemoryStore) Update(_ context.Context, key string, fn func(State, bool) (State, bool)) error {
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	p, ok := sh.m[key]
	var cur State
	if ok {
		cur = p.unpack()
	}
	next, keep := fn(cur, ok)
	switch {
	case keep:
		if sh.m == nil {
			sh.m = make(map[string]packed)
		}
		sh.m[key] = pack(next)
	case ok:
		delete(sh.m, key)
	}
	return nil
}

// Len returns the number of records held.
func (m *MemoryStore) Len() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	return n
}

// Sweeper is implemented by a [Store] that can drop, in one pass, the
// records that hold nothing any more at now: no strikes, no suspension and
// a cool-down that has ended (a Retry-After honoured without a strike leaves
// such a record behind). [Ledger.Sweep] calls it. A record that still
// holds strikes is never swept: only a success clears it.
type Sweeper interface {
	Sweep(ctx context.Context, now time.Time) (int, error)
}

// Sweep deletes the records that hold nothing at now and returns how many
// it deleted. It holds one shard's lock at a time.
func (m *MemoryStore) Sweep(_ context.Context, now time.Time) (int, error) {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		for k, p := range sh.m {
			if st := p.unpack(); st.idle(now) {
				delete(sh.m, k)
				n++
			}
		}
		sh.mu.Unlock()
	}
	return n, nil
}
