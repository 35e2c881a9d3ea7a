package fetch

import (
	"context"
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
	// nothing and returns how long to wait before a claim may succeed: until
	// the latest start plus c.Gap while that is to come, else until the
	// earliest lease's expiry (a lease is usually released well before
	// either, so callers may ask again sooner; the gap's end comes first
	// even when a lease outlives it, so that a claim told to wait while a
	// request is in flight asks again as the gap ends, when that request is
	// most likely over). A wait returned with ok false is positive.
	//
	// Turns go in the order of asking: a claim told to wait is a waiter,
	// and while waiters that asked again in time are owed the free slots
	// (a slot for each, in the order they first asked), a claim that is
	// not among them is told to wait for them, though the gap has passed
	// and a slot is free. A waiter that does not ask again within the wait
	// it was told (at most the gap or the store's grace) and the grace
	// loses its place. fetchtest.RunTurns checks this.
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

// Defaults of a pacer with a [Schedule].
const (
	// defaultScheduleTimeout bounds each call to a Schedule.
	defaultScheduleTimeout = 2 * time.Second
	// defaultLeaseTTL is a lease's time to live for a request without a
	// deadline; a request with one holds its lease until its deadline and
	// defaultScheduleTimeout more. A lease is renewed while the body is read.
	defaultLeaseTTL = time.Minute
)

// defaultTurnGrace is MemorySchedule's TurnGrace when zero (the shared
// stores' default too).
const defaultTurnGrace = 250 * time.Millisecond

// MemorySchedule is a [Schedule] in memory: it shares pacing between Clients in
// one process (a test stand-in for a shared store). It takes the time from the
// callers' now arguments. Keys with no live lease and no waiter whose latest
// start lies more than Retain in the past are dropped. The zero value is ready
// to use, with Retain one hour and TurnGrace 250 ms. It is safe for
// concurrent use.
//
// Turns go in order of asking: a claim told to wait is marked a waiter, in
// the order its owner first asked, and a free slot goes to the earliest
// waiters first (a slot for each, in the order they asked); a claim that is
// not among them, such as the holder's next request asking the moment its
// previous one ends, waits until the first waiter's poll-by. A waiter must
// ask again by its poll-by (the wait it was told, at most the gap or the
// grace, plus TurnGrace) or it loses its place: a waiter that gave up holds
// nobody back for longer, and is forgotten.
type MemorySchedule struct {
	Retain time.Duration // 0: one hour
	// TurnGrace is how late after the wait it was told a waiting claim may
	// ask again and keep its turn; a waiter that gave up holds its key's
	// next slot back by at most its wait (at most the gap) and twice this.
	// 0: 250 ms.
	TurnGrace time.Duration

	mu   sync.Mutex
	keys map[string]*scheduleEntry
	ops  int
}

type scheduleEntry struct {
	last    time.Time
	leases  map[string]time.Time // owner → expiry
	seq     int64                // the latest waiter's place
	waiters map[string]waiter    // owner → its place in the order of asking
}

// waiter is a claim's place in its key's order of asking.
type waiter struct {
	seq    int64     // the order it first asked in
	pollBy time.Time // it must ask again before this, or lose its place
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

// dropGone forgets the waiters whose poll-by has come, and returns how
// many remain.
func (e *scheduleEntry) dropGone(now time.Time) int {
	for o, w := range e.waiters {
		if !w.pollBy.After(now) {
			delete(e.waiters, o)
		}
	}
	return len(e.waiters)
}

// place returns how many waiters asked before owner (all of them when
// owner is not one), whether owner is one, and the first waiter's poll-by.
func (e *scheduleEntry) place(owner string) (ahead int, waiting bool, firstBy time.Time) {
	me, waiting := e.waiters[owner]
	first := int64(0)
	for _, w := range e.waiters {
		if !waiting || w.seq < me.seq {
			ahead++
		}
		if first == 0 || w.seq < first {
			first, firstBy = w.seq, w.pollBy
		}
	}
	return ahead, waiting, firstBy
}

// queue marks c's owner a waiter (keeping its place if it is one), to ask
// again within wait and the grace, and returns wait.
func (e *scheduleEntry) queue(c Claim, wait, grace time.Duration) time.Duration {
	w, ok := e.waiters[c.Owner]
	if !ok {
		if e.waiters == nil {
			e.waiters = make(map[string]waiter, 1)
		}
		e.seq++
		w.seq = e.seq
	}
	w.pollBy = c.Now.Add(min(wait, max(c.Gap, grace)) + grace)
	e.waiters[c.Owner] = w
	return wait
}

// Acquire implements [Schedule]: a claim is granted if the key has a free
// slot, its latest start is at least c.Gap before now, and no claim that
// asked earlier is waiting for that slot (see [MemorySchedule]).
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
	defer s.sweepLocked(now)
	grace := s.TurnGrace
	if grace <= 0 {
		grace = defaultTurnGrace
	}
	limit := max(c.Limit, 1)
	e.dropGone(now)
	var wait time.Duration
	if !e.last.IsZero() {
		wait = e.last.Add(c.Gap).Sub(now)
	}
	held, first := e.live(now)
	if held >= limit && wait <= 0 {
		wait = first.Sub(now)
	}
	if wait > 0 {
		return e.queue(c, wait, grace), false, nil
	}
	ahead, waiting, firstBy := e.place(c.Owner)
	if ahead >= limit-held {
		return e.queue(c, max(firstBy.Sub(now), 1), grace), false, nil
	}
	if waiting {
		delete(e.waiters, c.Owner)
	}
	e.last = now
	if e.leases == nil {
		e.leases = make(map[string]time.Time, 1)
	}
	e.leases[c.Owner] = now.Add(c.TTL)
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

// sweepLocked drops idle keys older than Retain, and the waiters whose
// poll-by has come, once per len(keys) claims.
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
		if n, _ := e.live(now); e.dropGone(now) == 0 && n == 0 && now.Sub(e.last) > retain {
			delete(s.keys, k)
		}
	}
}
