package crawl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/politefetch/politefetch/feed"
)

// State is the crawl state store: per source, its schedule, its pass lease,
// the references it has seen, and the counters of the current pass. A
// Crawler keeps everything it must remember between passes, and between
// processes, here.
//
// Time: every method that needs the time takes now from its caller (the
// Crawler's clock). An implementation shared by several machines may use
// its own server's clock instead (Redis TIME, SQLite's), provided it does so
// for every method, so that leases compare instants of one clock.
//
// Atomicity: AcquireLease, RenewLease and ReleaseLease are each one atomic
// compare-and-set on the source's lease (SQLite: one UPDATE … WHERE owner =
// ? OR expires <= ?; Redis: SET NX PX, or a script); Attempt and Failure are
// each one atomic increment returning the new count (INSERT … ON CONFLICT DO
// UPDATE … RETURNING; HINCRBY). Counters are kept per pass: a lease
// acquired anew starts a new pass, numbered one more than the last, and the
// counters of older passes are no longer consulted (an implementation may
// delete them).
//
// Implementations must be safe for concurrent use and must pass
// crawltest.Run. Errors other than ErrLeaseHeld and ErrLeaseLost mean the
// store could not answer: the Crawler then stops the source's pass (fail
// closed).
type State interface {
	// Schedule returns the source's schedule; the zero Schedule for a
	// source never seen.
	Schedule(ctx context.Context, source string) (Schedule, error)
	// SetSchedule replaces the source's schedule.
	SetSchedule(ctx context.Context, source string, s Schedule) error

	// AcquireLease gives owner the source's pass lease until now+ttl and
	// starts a new pass, if nobody holds an unexpired lease; else it
	// returns ErrLeaseHeld (wrapped in a *LeaseError saying who holds it
	// and until when). An owner that already holds the lease also gets
	// ErrLeaseHeld: a pass is renewed, never restarted.
	AcquireLease(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (Lease, error)
	// RenewLease extends owner's unexpired lease to now+ttl; ErrLeaseLost
	// when owner no longer holds it (it expired, or another owner took it).
	RenewLease(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (Lease, error)
	// ReleaseLease ends owner's lease; releasing a lease one does not hold
	// is a no-op.
	ReleaseLease(ctx context.Context, source, owner string) error

	// See records that the source announced ref (by its key) at now,
	// merging in what is new (URL, the identifiers the trigger and the
	// backlog gave, the excerpt). It returns the stored record, whose
	// FirstSeen is the first instant it was ever seen, and whether this
	// call created it.
	See(ctx context.Context, source string, ref RefState, now time.Time) (r RefState, created bool, err error)
	// Ref returns the source's record of key; ok false when unknown.
	Ref(ctx context.Context, source, key string) (r RefState, ok bool, err error)
	// Refs returns the source's records, oldest first-seen first (ties by
	// key).
	Refs(ctx context.Context, source string) ([]RefState, error)
	// Pending returns the source's records whose Outcome is Pending, in
	// Refs' order: oldest first-seen first, ties by key. It is what a
	// pass reads: its cost follows the references still to be read, not
	// every reference the source ever announced.
	Pending(ctx context.Context, source string) ([]RefState, error)
	// Settle records the end of key's story: deposited (as an article, or
	// as an excerpt), excluded (gated) or mismatched, with its
	// note. A settled reference is not read again.
	Settle(ctx context.Context, source, key string, outcome Outcome, note string, now time.Time) error

	// Attempt counts one read of key in the given pass and returns how many
	// reads of it that pass has now made (1 for the first).
	Attempt(ctx context.Context, source string, pass uint64, key string) (int, error)
	// Failure records a deposit outcome of the pass: failed true adds one
	// to the consecutive failures, false resets them to zero. It returns
	// the count after the change.
	//
	// Attempt and Failure for a pass other than the source's latest return
	// ErrLeaseLost (in a *LeaseError): a newer pass has begun, and the
	// older one must stop.
	Failure(ctx context.Context, source string, pass uint64, failed bool) (int, error)

	// Forget removes everything kept for the source (withdrawal).
	Forget(ctx context.Context, source string) error
}

// Schedule is a source's schedule.
type Schedule struct {
	LastTrigger time.Time // when the trigger was last read (sent, whatever the answer); zero: never
	NextTrigger time.Time // when it is next due; zero: now
	LastBacklog time.Time // when the backlog was last walked in full; zero: never
	NextBacklog time.Time // when the backlog is next due; zero: now
	// Embargo is the earliest instant an embargoed article of the source
	// may be read, as the last pass found; zero: none waiting.
	Embargo time.Time
	// Slowed is the instant until which the source's site asked us to slow
	// down or refused us, as learnt at the last trigger read; a Refresh
	// before it is declined.
	Slowed time.Time
}

// Lease is a source's pass lease: who holds it, until when, and the pass
// it belongs to.
type Lease struct {
	Owner   string
	Expires time.Time
	Pass    uint64 // 1 for a source's first pass
}

// Lease errors.
var (
	ErrLeaseHeld = errors.New("crawl: pass lease held")
	ErrLeaseLost = errors.New("crawl: pass lease lost")
)

// LeaseError says who holds a lease that could not be had. It matches
// ErrLeaseHeld or ErrLeaseLost.
type LeaseError struct {
	Source string
	Held   Lease // the lease as it stands (zero Owner: nobody)
	Err    error // ErrLeaseHeld or ErrLeaseLost
}

func (e *LeaseError) Error() string {
	if e.Held.Owner == "" {
		return fmt.Sprintf("%v: source %s", e.Err, e.Source)
	}
	return fmt.Sprintf("%v: source %s held by %s until %s", e.Err, e.Source, e.Held.Owner, e.Held.Expires.Format(time.RFC3339))
}

func (e *LeaseError) Unwrap() error { return e.Err }

// Outcome is how a reference's story ended.
type Outcome uint8

// The outcomes.
const (
	Pending   Outcome = iota // not settled: read on the next pass
	Deposited                // deposited in full
	Excerpted                // deposited as the feed's excerpt
	Excluded                 // gated: never deposited
	Mismatch                 // identifiers disagreed: nothing deposited
)

var outcomeNames = [...]string{"pending", "deposited", "excerpted", "excluded", "mismatch"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// RefState is what the store keeps about one announced article.
type RefState struct {
	// Key identifies the article within its source: the CMS identifier,
	// or the URL for a source identified by URL.
	Key string
	// URL is the article's address.
	URL string
	// FeedID and ListID are the identifiers the trigger and the backlog
	// list gave; "" when that side has not named it.
	FeedID, ListID string
	// Published is the date the trigger or list gave; zero when none.
	Published time.Time
	// Excerpt is the feed's description of the story, kept only where the
	// source keeps excerpts (never under the vault policy).
	Excerpt *feed.Excerpt
	// FirstSeen is when the article was first announced.
	FirstSeen time.Time
	// Outcome, Note and Settled say how and when the story ended.
	Outcome Outcome
	Note    string
	Settled time.Time
}

// MemoryState is a State in memory. The zero value is ready to use; it is
// safe for concurrent use. Everything is lost with the process.
type MemoryState struct {
	mu      sync.RWMutex // guards sources; each source has its own lock
	sources map[string]*memSource
}

type memSource struct {
	mu       sync.Mutex
	sched    Schedule
	lease    Lease
	pass     uint64
	refs     map[string]*RefState
	pending  map[string]*RefState // the refs still Pending
	attempts map[string]int       // this pass
	failures int                  // this pass
	tally    Tally
}

var (
	_ State   = (*MemoryState)(nil)
	_ Tallier = (*MemoryState)(nil)
)

// src returns the source's record, locked (the caller unlocks it): made
// when create is set and it is missing, else nil when missing.
func (m *MemoryState) src(id string, create bool) *memSource {
	m.mu.RLock()
	s := m.sources[id]
	m.mu.RUnlock()
	if s == nil {
		if !create {
			return nil
		}
		m.mu.Lock()
		if m.sources == nil {
			m.sources = map[string]*memSource{}
		}
		s = m.sources[id]
		if s == nil {
			s = &memSource{refs: map[string]*RefState{}, pending: map[string]*RefState{}, attempts: map[string]int{}}
			m.sources[id] = s
		}
		m.mu.Unlock()
	}
	s.mu.Lock()
	return s
}

// Schedule implements State.
func (m *MemoryState) Schedule(ctx context.Context, source string) (Schedule, error) {
	if s := m.src(source, false); s != nil {
		defer s.mu.Unlock()
		return s.sched, nil
	}
	return Schedule{}, nil
}

// SetSchedule implements State.
func (m *MemoryState) SetSchedule(ctx context.Context, source string, sc Schedule) error {
	s := m.src(source, true)
	defer s.mu.Unlock()
	s.sched = sc
	return nil
}

// AcquireLease implements State.
func (m *MemoryState) AcquireLease(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (Lease, error) {
	if owner == "" || ttl <= 0 {
		return Lease{}, errors.New("crawl: a lease needs an owner and a positive ttl")
	}
	s := m.src(source, true)
	defer s.mu.Unlock()
	if s.lease.Owner != "" && now.Before(s.lease.Expires) {
		return Lease{}, &LeaseError{Source: source, Held: s.lease, Err: ErrLeaseHeld}
	}
	s.pass++
	s.lease = Lease{Owner: owner, Expires: now.Add(ttl), Pass: s.pass}
	s.attempts = map[string]int{}
	s.failures = 0
	return s.lease, nil
}

// RenewLease implements State.
func (m *MemoryState) RenewLease(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (Lease, error) {
	s := m.src(source, true)
	defer s.mu.Unlock()
	if s.lease.Owner != owner || owner == "" || !now.Before(s.lease.Expires) {
		return Lease{}, &LeaseError{Source: source, Held: s.lease, Err: ErrLeaseLost}
	}
	s.lease.Expires = now.Add(ttl)
	return s.lease, nil
}

// ReleaseLease implements State.
func (m *MemoryState) ReleaseLease(ctx context.Context, source, owner string) error {
	if s := m.src(source, false); s != nil {
		if s.lease.Owner == owner {
			s.lease = Lease{Pass: s.lease.Pass}
			s.attempts = nil // the pass is over: its counts are not consulted again
		}
		s.mu.Unlock()
	}
	return nil
}

// See implements State.
func (m *MemoryState) See(ctx context.Context, source string, ref RefState, now time.Time) (RefState, bool, error) {
	if ref.Key == "" {
		return RefState{}, false, errors.New("crawl: a reference needs a key")
	}
	s := m.src(source, true)
	defer s.mu.Unlock()
	r := s.refs[ref.Key]
	created := r == nil
	if created {
		r = &RefState{Key: ref.Key, FirstSeen: now}
		s.refs[ref.Key] = r
		s.pending[ref.Key] = r
	}
	r.Merge(ref)
	return cloneRef(*r), created, nil
}

// Merge folds into r what a sighting of the same reference says that is new: a
// URL, a feed or list identifier, a publication instant, an excerpt. The
// identity (Key, FirstSeen) and the outcome stay. Every [State]
// implementation's See merges with it, so all keep the same fields.
func (r *RefState) Merge(ref RefState) {
	if ref.URL != "" {
		r.URL = ref.URL
	}
	if ref.FeedID != "" {
		r.FeedID = ref.FeedID
	}
	if ref.ListID != "" {
		r.ListID = ref.ListID
	}
	if !ref.Published.IsZero() {
		r.Published = ref.Published
	}
	if ref.Excerpt != nil {
		e := *ref.Excerpt
		r.Excerpt = &e
	}
}

func cloneRef(r RefState) RefState {
	if r.Excerpt != nil {
		e := *r.Excerpt
		r.Excerpt = &e
	}
	return r
}

// Ref implements State.
func (m *MemoryState) Ref(ctx context.Context, source, key string) (RefState, bool, error) {
	if s := m.src(source, false); s != nil {
		defer s.mu.Unlock()
		if r := s.refs[key]; r != nil {
			return cloneRef(*r), true, nil
		}
	}
	return RefState{}, false, nil
}

// Refs implements State.
func (m *MemoryState) Refs(ctx context.Context, source string) ([]RefState, error) {
	s := m.src(source, false)
	if s == nil {
		return nil, nil
	}
	defer s.mu.Unlock()
	return sortedRefs(s.refs), nil
}

// Pending implements State.
func (m *MemoryState) Pending(ctx context.Context, source string) ([]RefState, error) {
	s := m.src(source, false)
	if s == nil {
		return nil, nil
	}
	defer s.mu.Unlock()
	return sortedRefs(s.pending), nil
}

// sortedRefs returns copies of refs, oldest first-seen first (ties by key).
func sortedRefs(refs map[string]*RefState) []RefState {
	out := make([]RefState, 0, len(refs))
	for _, r := range refs {
		out = append(out, cloneRef(*r))
	}
	slices.SortFunc(out, func(a, b RefState) int {
		if c := a.FirstSeen.Compare(b.FirstSeen); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out
}

// Settle implements State.
func (m *MemoryState) Settle(ctx context.Context, source, key string, outcome Outcome, note string, now time.Time) error {
	s := m.src(source, true)
	defer s.mu.Unlock()
	r := s.refs[key]
	if r == nil {
		return fmt.Errorf("crawl: settle %s/%s: unknown reference", source, key)
	}
	if r.Outcome == Pending {
		s.tally.Add(outcomeTally(outcome))
	}
	r.Outcome, r.Note, r.Settled = outcome, note, now
	if outcome == Pending {
		s.pending[key] = r
	} else {
		delete(s.pending, key)
	}
	return nil
}

// Attempt implements State.
func (m *MemoryState) Attempt(ctx context.Context, source string, pass uint64, key string) (int, error) {
	s := m.src(source, true)
	defer s.mu.Unlock()
	if pass != s.pass {
		return 0, &LeaseError{Source: source, Held: s.lease, Err: ErrLeaseLost}
	}
	if s.attempts == nil {
		s.attempts = map[string]int{}
	}
	s.attempts[key]++
	s.tally.Reads++
	return s.attempts[key], nil
}

// Failure implements State.
func (m *MemoryState) Failure(ctx context.Context, source string, pass uint64, failed bool) (int, error) {
	s := m.src(source, true)
	defer s.mu.Unlock()
	if pass != s.pass {
		return 0, &LeaseError{Source: source, Held: s.lease, Err: ErrLeaseLost}
	}
	if failed {
		s.failures++
		s.tally.DepositFailures++
	} else {
		s.failures = 0
	}
	return s.failures, nil
}

// Forget implements State.
func (m *MemoryState) Forget(ctx context.Context, source string) error {
	if s := m.src(source, false); s != nil {
		// The pass number and the lease survive, so a later pass is never
		// confused with an earlier one.
		s.sched, s.refs, s.attempts, s.failures, s.tally = Schedule{}, map[string]*RefState{}, map[string]int{}, 0, Tally{}
		s.pending = map[string]*RefState{}
		s.mu.Unlock()
	}
	return nil
}

// AddTally implements Tallier.
func (m *MemoryState) AddTally(ctx context.Context, source string, d Tally) error {
	s := m.src(source, true)
	defer s.mu.Unlock()
	s.tally.Add(d)
	return nil
}

// Tally implements Tallier.
func (m *MemoryState) Tally(ctx context.Context, source string) (Tally, error) {
	s := m.src(source, false)
	if s == nil {
		return Tally{}, nil
	}
	defer s.mu.Unlock()
	return s.tally, nil
}
