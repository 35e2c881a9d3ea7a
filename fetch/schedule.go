package fetch

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Schedule is per-host pacing state shared by several processes, so that
// politeness holds across all of them: the latest start of a request to
// each key (a host, or a site), and the key's in-flight slots, each held by a
// lease. Each process's pacer keeps its own queue; once a request's local turn
// comes, the pacer acquires a lease in the Schedule for it, reports each moment
// the request put load on the host (a connection opened, its bytes written), and
// releases the lease when the request is over. fetchtest.RunSchedule checks an
// implementation.
//
// # Contract
//
// A key's state is its latest start and its live leases. A lease is named by an
// owner token, unique across every process (the pacer draws 128 random bits per
// request), and lives until it is released or its time to live runs out, so a
// process that dies holding one blocks the key for one TTL at most, never for
// ever.
//
// Acquire is the only call that grants anything: it must be atomic across every
// process sharing the store (one Lua script in Redis, one transaction in SQLite).
// A claim is for now, never for a future instant: a process that may not start
// yet learns how long to wait, and asks again. Started, Renew and Release touch
// one lease or one start and need no more than a single atomic update each.
//
// # Time
//
// Each call carries the caller's reading of the clock (the Claim's Now, the now
// arguments). A store used by processes on one machine may use it. A store
// shared between machines should rather take the time from one clock of its
// own (Redis's TIME, the database server's now) and ignore the argument, so
// that clocks skewed between the processes cannot shorten an interval. That is
// why Acquire answers with a duration to wait, not an instant: a duration means
// the same on every clock. A store must use one clock for every call.
//
// # Bounded calls
//
// The pacer bounds every call with a context: Acquire with the request's own
// (its deadline, and ScheduleTimeout); Started, Renew and Release, which must
// happen even when the request was cancelled, with a context that keeps the
// request's values but not its cancellation, bounded by the pacer's
// ScheduleTimeout. An implementation doing I/O must honour the context. Started
// is called from the connection's writer, so a slow store delays the writer
// by ScheduleTimeout at most.
//
// # Failures
//
// An Acquire error refuses the request (the pacer returns it, and nothing is
// sent): pacing never fails open. A Started error leaves the latest start at the
// claim, a few milliseconds early at worst. A Release error leaves the lease to
// expire.
type Schedule interface {
	// Acquire asks to start a request to c.Key now, holding one of its
	// in-flight slots. If the key has fewer than c.Limit live leases, and no
	// start recorded or its latest start at least c.Gap before now, Acquire
	// records now as the key's latest start, adds a lease owned by c.Owner
	// that expires c.TTL after now, and returns ok. Otherwise it records
	// nothing and returns how long to wait before a claim can succeed, as far
	// as the store can tell (the latest start plus c.Gap, or the earliest
	// lease's expiry; a lease released earlier lets a claim succeed earlier,
	// so callers may ask again sooner). A wait returned with ok false is
	// positive.
	Acquire(ctx context.Context, c Claim) (wait time.Duration, ok bool, err error)
	// Started reports that the request holding owner's lease on key put load
	// on the host at now (a connection opened, its bytes written): the key's
	// latest start moves to now if now is later. It is recorded even if the
	// lease has expired meanwhile: the load is real.
	Started(ctx context.Context, key, owner string, now time.Time) error
	// Renew extends owner's live lease on key to expire ttl after now. It
	// returns [ErrLeaseNotHeld] if owner holds no live lease on key (it was
	// released, or it expired).
	Renew(ctx context.Context, key, owner string, now time.Time, ttl time.Duration) error
	// Release deletes owner's lease on key, compare-and-delete: if owner
	// holds no live lease on key (never had one, released it, or let it
	// expire), Release changes nothing and returns [ErrLeaseNotHeld]. The
	// latest start stays.
	Release(ctx context.Context, key, owner string, now time.Time) error
}

// Claim is one request's ask to a [Schedule] for a start and an in-flight slot.
type Claim struct {
	Key   string        // the pacing key: a normalised host, or a site
	Owner string        // the lease's owner token, unique across every process
	Now   time.Time     // the caller's clock; a store with a clock of its own may ignore it
	Gap   time.Duration // the least time from the key's latest start to this one
	Limit int           // the most live leases on the key (the in-flight limit); < 1 means 1
	TTL   time.Duration // how long the lease lives unless renewed or released; > 0
}

// ErrLeaseNotHeld is returned by a [Schedule]'s Renew and Release when the owner
// holds no live lease on the key.
var ErrLeaseNotHeld = errors.New("fetch: schedule lease not held")

// Defaults of a pacer with a [Schedule].
const (
	// defaultScheduleTimeout bounds each call to a Schedule.
	defaultScheduleTimeout = 2 * time.Second
	// defaultLeaseTTL is a lease's time to live for a request without a
	// deadline; a request with one holds its lease until its deadline and
	// defaultScheduleTimeout more. A lease is renewed while the body is read.
	defaultLeaseTTL = time.Minute
)

// MemorySchedule is a [Schedule] in memory: it shares pacing between Clients in
// one process (a test stand-in for a shared store). It takes the time from the
// callers' now arguments. Keys with no live lease whose latest start lies more
// than Retain in the past are dropped. The zero value is ready to use, with
// Retain one hour. It is safe for concurrent use.
type MemorySchedule struct {
	Retain time.Duration // 0: one hour

	mu   sync.Mutex
	keys map[string]*scheduleEntry
	ops  int
}

type scheduleEntry struct {
	last   time.Time
	leases map[string]time.Time // owner → expiry
}

// live drops expired leases and returns how many remain and the earliest
// expiry among them.
func (e *scheduleEntry) live(now time.Time) (n int, first time.Time) {
	for o, exp := range e.leases {
		if !exp.After(now) {
			delete(e.leases, o)
			continue
		}
		if first.IsZero() || exp.Before(first) {
			first = exp
		}
	}
	return len(e.leases), first
}

// Acquire implements [Schedule].
func (s *MemorySchedule) Acquire(_ context.Context, c Claim) (time.Duration, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		s.keys = make(map[string]*scheduleEntry)
	}
	now := c.Now
	e := s.keys[c.Key]
	if e == nil {
		e = &scheduleEntry{}
		s.keys[c.Key] = e
	}
	var wait time.Duration
	if n, first := e.live(now); n >= max(c.Limit, 1) {
		wait = first.Sub(now)
	}
	if !e.last.IsZero() {
		wait = max(wait, e.last.Add(c.Gap).Sub(now))
	}
	if wait > 0 {
		return wait, false, nil
	}
	e.last = now
	if e.leases == nil {
		e.leases = make(map[string]time.Time, 1)
	}
	e.leases[c.Owner] = now.Add(c.TTL)
	s.sweepLocked(now)
	return 0, true, nil
}

// Started implements [Schedule].
func (s *MemorySchedule) Started(_ context.Context, key, _ string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.keys[key]; e != nil && now.After(e.last) {
		e.last = now
	}
	return nil
}

// Renew implements [Schedule].
func (s *MemorySchedule) Renew(_ context.Context, key, owner string, now time.Time, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.keys[key]
	if e == nil {
		return ErrLeaseNotHeld
	}
	if exp, ok := e.leases[owner]; !ok || !exp.After(now) {
		delete(e.leases, owner)
		return ErrLeaseNotHeld
	}
	e.leases[owner] = now.Add(ttl)
	return nil
}

// Release implements [Schedule].
func (s *MemorySchedule) Release(_ context.Context, key, owner string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.keys[key]
	if e == nil {
		return ErrLeaseNotHeld
	}
	exp, ok := e.leases[owner]
	if !ok || !exp.After(now) {
		delete(e.leases, owner)
		return ErrLeaseNotHeld
	}
	delete(e.leases, owner)
	return nil
}

// sweepLocked drops idle keys older than Retain, once per len(keys) grants.
func (s *MemorySchedule) sweepLocked(now time.Time) {
	s.ops++
	if s.ops <= len(s.keys)+64 {
		return
	}
	s.ops = 0
	retain := s.Retain
	if retain <= 0 {
		retain = time.Hour
	}
	for k, e := range s.keys {
		if n, _ := e.live(now); n == 0 && now.Sub(e.last) > retain {
			delete(s.keys, k)
		}
	}
}
