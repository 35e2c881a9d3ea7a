package robots

import (
	"container/list"
	"context"
	"sync"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
)

// Clock is the injectable time source: nil means real time.
type Clock = clock.Clock

// Record is the robots.txt state of one host as a [Store] keeps it: what
// its last fetch decided and until when it stands. It is plain data (no
// error, no parsed rules), so a networked store can serialise every field
// as it is; the [Cache] parses Body into its own bounded in-memory view. The
// zero value is an unfetched host's (expired, ParseBody with no body).
// Records are values; a Store may share the Body of the records it returns,
// which nobody modifies.
type Record struct {
	// Outcome is the decision for the whole host: ParseBody (obey the rules
	// of Body), AllowAll or DisallowAll.
	Outcome Outcome
	// Status is the HTTP status of the fetch behind Outcome, 0 when no
	// response arrived.
	Status int
	// Failure is the text of the fetch's failure: a network failure
	// (behind a DisallowAll) or too many redirects; "" when a response
	// arrived in full.
	Failure string
	// Body is the robots.txt body (at most [MaxBodySize]+1 bytes) when
	// Outcome is ParseBody.
	Body []byte
	// FetchedAt is when the fetch behind Outcome finished.
	FetchedAt time.Time
	// Expires is when robots.txt is to be fetched again: the end of its TTL
	// or of the retry interval after a failure.
	Expires time.Time
	// Stale reports a last good copy kept after failed fetches
	// ([UseLastGood]): Outcome, Status, Body and FetchedAt are the good
	// fetch's, Expires the next retry.
	Stale bool
	// LastFailure says why the latest fetch failed when Stale.
	LastFailure string
}

// Store keeps Records per host. The key is the host as every per-host
// layer of politefetch keys it (lower case, IDNA A-labels, no trailing dot,
// the port only when it is not the scheme's default), prefixed with
// "http://" for a host read over plain http, whose robots.txt is a
// different file (RFC 9309 §2.3). Implementations must be safe for concurrent use. Get returns
// ok=false for an unknown host; it may return expired records (the Cache
// needs the last good copy). robotstest.Run (package robots/robotstest)
// checks an implementation.
type Store interface {
	Get(ctx context.Context, host string) (r Record, ok bool, err error)
	Put(ctx context.Context, host string, r Record) error
}

// FetchReleaser is implemented by a [Store] that holds something for a
// robots.txt fetch between the Get that let it start and the Put of its
// record: a fetch lease shared by several processes, so that their Caches
// fetch once, not once each. When the request of such a fetch was not sent
// ([ErrNotSent]), the Cache puts no record and calls ReleaseFetch instead,
// so that the other processes waiting for the record stop waiting and ask
// robots.txt themselves. ReleaseFetch must release only what this Store
// holds; an error leaves the lease to expire.
type FetchReleaser interface {
	ReleaseFetch(ctx context.Context, host string) error
}

// DefaultMaxHosts bounds a [MemoryStore] whose MaxEntries is zero.
const DefaultMaxHosts = 10000

// DefaultMaxBytes bounds the bytes of robots.txt bodies a [MemoryStore]
// holds when MaxBytes is zero.
const DefaultMaxBytes = 64 << 20

// DefaultRetain is how long a [MemoryStore] keeps an entry after it
// expires when Retain is zero.
const DefaultRetain = 24 * time.Hour

// MemoryStore is the in-memory [Store], bounded by size and by time: it
// holds at most MaxEntries hosts and about MaxBytes of robots.txt (each
// body counted twice: raw and parsed), evicting the least recently used, and
// forgets an entry Retain after it expired. The zero value is ready to use;
// set the fields before first use. It is safe for concurrent use.
type MemoryStore struct {
	// MaxEntries bounds the hosts held; 0 means DefaultMaxHosts.
	MaxEntries int
	// MaxBytes bounds the memory held for bodies and rules; 0 means
	// DefaultMaxBytes.
	MaxBytes int64
	// Retain is how long an expired entry is still returned (so a last good
	// copy survives failed fetches); 0 means DefaultRetain.
	Retain time.Duration
	// Clock tells the time; nil means real time.
	Clock Clock

	mu sync.Mutex
	m  map[string]*list.Element
	l  list.List // front: most recently used
	n  int64     // bytes accounted
}

type memItem struct {
	host string
	e    entry
}

// Get returns the host's record.
func (s *MemoryStore) Get(_ context.Context, host string) (Record, bool, error) {
	e, ok := s.get(host, clock.Or(s.Clock).Now())
	return e.Record, ok, nil
}

// get returns the host's record with the Cache's view of it, at the time
// now, for a Cache that has just read the same clock.
func (s *MemoryStore) get(host string, now time.Time) (entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.m[host]
	if !ok {
		return entry{}, false
	}
	it := el.Value.(*memItem)
	if now.After(it.e.Expires.Add(s.retain())) {
		s.evict(el)
		return entry{}, false
	}
	s.l.MoveToFront(el)
	return it.e, true
}

// Put stores the host's record, evicting the least recently used ones beyond
// MaxEntries and any expired past Retain at the back of the list.
func (s *MemoryStore) Put(_ context.Context, host string, r Record) error {
	s.put(host, entry{Record: r})
	return nil
}

// put stores a record with the Cache's view of it (its parsed rules and
// fetch error), so the default store serves a cached host without parsing.
func (s *MemoryStore) put(host string, e entry) {
	now := clock.Or(s.Clock).Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]*list.Element)
		s.l.Init()
	}
	if el, ok := s.m[host]; ok {
		it := el.Value.(*memItem)
		s.n -= size(host, it.e)
		it.e = e
		s.l.MoveToFront(el)
	} else {
		s.m[host] = s.l.PushFront(&memItem{host: host, e: e})
	}
	s.n += size(host, e)
	maxN, maxB := s.MaxEntries, s.MaxBytes
	if maxN <= 0 {
		maxN = DefaultMaxHosts
	}
	if maxB <= 0 {
		maxB = DefaultMaxBytes
	}
	for s.l.Len() > maxN || (s.n > maxB && s.l.Len() > 1) {
		s.evict(s.l.Back())
	}
	for i := 0; i < 2 && s.l.Len() > 0; i++ { // a little sweeping per Put
		back := s.l.Back()
		if !now.After(back.Value.(*memItem).e.Expires.Add(s.retain())) {
			break
		}
		s.evict(back)
	}
}

// Len returns the number of hosts held.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.l.Len()
}

// Bytes returns the bytes accounted for the entries held.
func (s *MemoryStore) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// size estimates an entry's memory: its body twice (raw and parsed), its
// texts and a fixed overhead for the entry, map and list.
func size(host string, e entry) int64 {
	return int64(2*len(e.Body)+len(host)+len(e.Failure)+len(e.LastFailure)) + 256
}

func (s *MemoryStore) evict(el *list.Element) {
	s.n -= size(el.Value.(*memItem).host, el.Value.(*memItem).e)
	s.l.Remove(el)
	delete(s.m, el.Value.(*memItem).host)
}

func (s *MemoryStore) retain() time.Duration {
	if s.Retain > 0 {
		return s.Retain
	}
	return DefaultRetain
}
