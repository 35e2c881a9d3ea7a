package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/internal/clock"
)

// Clock is the injectable time source of the calling process: nil means
// real time. A Store reads it only to translate instants between the
// caller's clock and Redis's (see the package doc, Time).
type Clock = clock.Clock

// Defaults of a [Store]'s zero fields.
const (
	// DefaultPrefix namespaces every key of a Store whose Prefix is "".
	DefaultPrefix = "politefetch:"
	// DefaultTimeout bounds each call to Redis.
	DefaultTimeout = 2 * time.Second
	// DefaultScheduleRetain is how long a host's pacing keys outlive its
	// latest start and its last lease.
	DefaultScheduleRetain = time.Hour
	// DefaultRobotsRetain is how long a robots.txt record outlives its
	// expiry (so a last good copy survives failed fetches).
	DefaultRobotsRetain = 24 * time.Hour
	// DefaultRobotsFetchLease is how long one process may hold a host's
	// robots.txt fetch lease before another may fetch in its place.
	DefaultRobotsFetchLease = 30 * time.Second
	// DefaultValidatorRetain is how long validators are kept after they
	// were last stored.
	DefaultValidatorRetain = 30 * 24 * time.Hour
	// DefaultStateRetain is how long a crawl source's keys outlive their
	// last write.
	DefaultStateRetain = 90 * 24 * time.Hour
	// DefaultTurnGrace is how late a waiting claim may ask again and keep
	// its turn (see [Schedule.Acquire]).
	DefaultTurnGrace = 250 * time.Millisecond
	// DefaultMaxRetries bounds the optimistic retries of one
	// read-modify-write (WATCH/MULTI) that lost a race.
	DefaultMaxRetries = 100
	// skewTolerance is how far a new measure of the offset between the
	// caller's clock and Redis's may move before it replaces the old one.
	skewTolerance = 100 * time.Millisecond
)

// Store keeps politefetch's shared state in one Redis: the pacing schedule
// ([Store.Schedule]), the refusal ledger ([Store.Ledger]), robots.txt
// records ([Store.Robots]), validators ([Store.Validators]) and the crawl
// state ([Store.State]). Every process of a crawl uses a Store over the same
// Redis and Prefix.
//
// Set the fields before first use and do not change them after. The zero
// value has no Client: every call fails with [ErrNoClient], so a
// misconfigured crawler refuses every request rather than fetching without
// shared state. A Store is safe for concurrent use. It does not close
// Client.
type Store struct {
	// Client is the connection to Redis: a *redis.Client (a single server,
	// or Sentinel's failover client). Required. It must be made with
	// ContextTimeoutEnabled, so that every call ends by its context's
	// deadline (go-redis otherwise waits its own read and write timeouts):
	// a Store over a *redis.Client or *redis.ClusterClient without it
	// fails every call with [ErrUnbounded].
	Client goredis.UniversalClient
	// Prefix starts every key, so several crawlers can share one Redis.
	// "": DefaultPrefix.
	Prefix string
	// Timeout bounds each call (a call's context may bound it more). 0:
	// DefaultTimeout.
	Timeout time.Duration
	// Clock is the caller's clock, the one given to the fetch client and
	// the crawler (fetch.WithClock, crawl.Crawler.Clock). Nil: real time.
	Clock Clock
	// CallerClock makes the schedule and the pass leases take the time from
	// their callers' now arguments instead of Redis's TIME, and stores
	// instants without translation. Only for processes sharing one clock
	// (tests against a real server whose clock cannot be moved); false,
	// the zero, is what a crawl over several machines needs.
	CallerClock bool

	// ScheduleRetain, RobotsRetain, ValidatorRetain and StateRetain set the
	// expiries of the package doc's key table. 0: the Default of each.
	ScheduleRetain, RobotsRetain, ValidatorRetain, StateRetain time.Duration
	// RobotsFetchLease is how long a process holds a host's robots.txt
	// fetch lease. 0: DefaultRobotsFetchLease.
	RobotsFetchLease time.Duration
	// TurnGrace is how late after the wait it was told a waiting claim may
	// ask again and keep its turn; a waiter that gave up holds its host's
	// next slot back by at most its wait (at most the interval) and twice
	// this. 0: DefaultTurnGrace.
	TurnGrace time.Duration
	// MaxRetries bounds the retries of a read-modify-write that lost a race
	// with another process. 0: DefaultMaxRetries.
	MaxRetries int
	// MaxPending bounds the refusals kept in memory while Redis cannot be
	// written (see [Ledger]). 0: DefaultMaxPending.
	MaxPending int

	once      sync.Once
	token     string // this Store's owner token for robots.txt fetch leases
	unbounded bool   // Client ignores contexts' deadlines

	owed     atomic.Bool // pending or releases hold something
	flushing atomic.Bool
	mu       sync.Mutex
	offset   time.Duration // caller's clock minus Redis's
	haveOf   bool
	pending  map[string]backoff.State // refusals not yet written
	releases map[[2]string]struct{}   // schedule leases (key, owner) whose release failed

	claimMu sync.Mutex
	claims  map[string]claimView // ledger records read with a granted claim, for the Check after it
}

// claimView is a host's ledger record as Redis held it when a claim on the
// host was granted, read in the claim's script: the ledger's Check that
// follows the claim answers from it, with no round trip of its own.
type claimView struct {
	rec string        // the stored record ("" when none)
	ok  bool          // a record was stored
	off time.Duration // the clock offset to read it with
	at  time.Time     // when the claim was granted, on the caller's clock
}

// claimFresh is how long after its claim a claimView may answer; the Check
// it is for follows at once, so an older one is of a claim whose Check never
// came, and is dropped.
const claimFresh = 500 * time.Millisecond

// maxClaims bounds the claimViews kept.
const maxClaims = 4096

// claimed keeps the ledger record read with a claim granted on key.
func (s *Store) claimed(key, rec string, ok bool, off time.Duration) {
	now := s.now()
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if s.claims == nil {
		s.claims = map[string]claimView{}
	}
	if len(s.claims) >= maxClaims {
		for k, v := range s.claims {
			if now.Sub(v.at) >= claimFresh {
				delete(s.claims, k)
			}
		}
		if len(s.claims) >= maxClaims {
			return
		}
	}
	s.claims[key] = claimView{rec: rec, ok: ok, off: off, at: now}
}

// takeClaimed returns, and forgets, the record read with the latest claim
// on key, if it is fresh.
func (s *Store) takeClaimed(key string) (claimView, bool) {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	v, ok := s.claims[key]
	if !ok {
		return v, false
	}
	delete(s.claims, key)
	d := s.now().Sub(v.at)
	return v, d >= 0 && d < claimFresh
}

// forgetClaimed drops what a claim read of key's record: this process is
// about to change it.
func (s *Store) forgetClaimed(key string) {
	s.claimMu.Lock()
	delete(s.claims, key)
	s.claimMu.Unlock()
}

// Errors of a Store. Every failure of a call is an [*Error] wrapping the
// cause; these are the causes a caller may act on.
var (
	// ErrNoClient: the Store has no Client.
	ErrNoClient = errors.New("redis: store has no client")
	// ErrContention: a read-modify-write lost its race MaxRetries times in
	// a row.
	ErrContention = errors.New("redis: too much contention on a key")
	// ErrUnbounded: the Client was made without ContextTimeoutEnabled, so
	// a slow Redis could hold a call past its deadline.
	ErrUnbounded = errors.New("redis: client made without ContextTimeoutEnabled: calls would not end at their deadline")
	// ErrCorrupt: a key holds a value this package did not write.
	ErrCorrupt = errors.New("redis: stored value is corrupt")
)

// Error is the failure of one call to Redis: the operation (such as
// "schedule acquire"), its key, and the cause (a network error, a
// timeout, a Redis error, or one of the sentinels). The politefetch layers
// treat every error as a reason not to fetch.
type Error struct {
	Op  string
	Key string
	Err error
}

// Error says what failed, for which key, and why.
func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("redis: %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("redis: %s %q: %v", e.Op, e.Key, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func (s *Store) init() {
	s.once.Do(func() {
		var b [16]byte
		_, _ = rand.Read(b[:])
		s.token = hex.EncodeToString(b[:])
		switch c := s.Client.(type) {
		case *goredis.Client:
			s.unbounded = !c.Options().ContextTimeoutEnabled
		case *goredis.ClusterClient:
			s.unbounded = !c.Options().ContextTimeoutEnabled
		}
	})
}

func (s *Store) prefix() string {
	if s.Prefix == "" {
		return DefaultPrefix
	}
	return s.Prefix
}

// key builds a key: the prefix, the kind, and the subject in braces (a
// Redis Cluster hash tag: every key of one host, or of one source, lands on
// one slot, so one script may touch them all).
func (s *Store) key(kind, subject string) string {
	return s.prefix() + kind + ":{" + subject + "}"
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// call bounds ctx by Timeout and checks the Client.
func (s *Store) call(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if s.Client == nil {
		return ctx, func() {}, ErrNoClient
	}
	s.init()
	if s.unbounded {
		return ctx, func() {}, ErrUnbounded
	}
	ctx, cancel := context.WithTimeout(ctx, or(s.Timeout, DefaultTimeout))
	if s.owed.Load() && s.flushing.CompareAndSwap(false, true) {
		s.settle(ctx)
		s.flushing.Store(false)
	}
	return ctx, cancel, nil
}

// settle writes what this process owes Redis from calls that failed: the
// refusals first, then the releases of leases, so a host is never freed
// before its refusal is known to every worker.
func (s *Store) settle(ctx context.Context) {
	if err := (&Ledger{s}).flush(ctx); err != nil || s.refusalsOwed() {
		return
	}
	(&Schedule{s}).retryReleases(ctx)
	s.mu.Lock()
	s.owed.Store(len(s.pending) > 0 || len(s.releases) > 0)
	s.mu.Unlock()
}

// errRefusalOwed: a refusal this process owes Redis was added while the
// others were being written, and is not written yet.
var errRefusalOwed = errors.New("redis: a refusal owed to Redis is not written yet")

// refusalsOwed reports whether a refusal is still owed.
func (s *Store) refusalsOwed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending) > 0
}

// writeRefusals writes every refusal this process owes Redis, itself (it
// does not leave them to a call of another goroutine that may be writing
// others), and returns nil only once none is owed.
func (s *Store) writeRefusals(ctx context.Context) error {
	if !s.owed.Load() || !s.refusalsOwed() {
		return nil
	}
	ctx, cancel, err := s.call(ctx)
	defer cancel()
	if err != nil {
		return err
	}
	for range 2 {
		if err := (&Ledger{s}).flush(ctx); err != nil {
			return err
		}
		if !s.refusalsOwed() {
			return nil
		}
	}
	return errRefusalOwed
}

func (s *Store) fail(op, key string, err error) error {
	if err == nil {
		return nil
	}
	s.reloadCluster(err)
	return &Error{Op: op, Key: key, Err: err}
}

// reloadCluster asks a ClusterClient to reload the cluster's slots after a
// failure that may mean a node is gone: go-redis reloads them by itself on
// a MOVED answer, or once a minute, but not when a master it still routes
// to refuses connections, so that after a failover a Store would fail every
// call on the dead master's slots for up to a minute after its replica was
// promoted. The reload is lazy and rate-limited by go-redis (one at a time,
// 200 ms apart).
func (s *Store) reloadCluster(err error) {
	cc, ok := s.Client.(*goredis.ClusterClient)
	if !ok {
		return
	}
	for _, own := range []error{goredis.Nil, goredis.TxFailedErr, ErrNoClient, ErrUnbounded, ErrContention, ErrCorrupt, errRefusalOwed} {
		if errors.Is(err, own) {
			return
		}
	}
	cc.ReloadState(context.Background())
}

func (s *Store) now() time.Time { return clock.Or(s.Clock).Now() }

// observe folds one reading of Redis's TIME, taken during a round trip
// that began at the caller's reading before and ends now, into the offset
// between the two clocks, and returns it. The reading is compared with the
// round trip's midpoint, so it is off by half the round trip at most; the
// offset moves only when the reading differs from it by more than
// skewTolerance and that half, so an instant stored and read back by one
// process is unchanged to the nanosecond, and one slow round trip (a loaded
// machine, a request queued in Redis) does not shift every instant this
// process reads by its length.
func (s *Store) observe(before time.Time, server time.Time) time.Duration {
	if s.CallerClock {
		return 0
	}
	return s.observeSpan(before, s.now(), server)
}

// observeSpan is observe for a round trip from before to after.
func (s *Store) observeSpan(before, after, server time.Time) time.Duration {
	if s.CallerClock {
		return 0
	}
	half := max(after.Sub(before)/2, 0)
	m := before.Add(half).Sub(server).Round(time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := m - s.offset; !s.haveOf || d > skewTolerance+half || -d > skewTolerance+half {
		s.offset, s.haveOf = m, true
	}
	return s.offset
}

// toServer and toCaller translate an instant between the caller's clock and
// Redis's by offset; the zero instant stays zero.
func toServer(t time.Time, offset time.Duration) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Add(-offset).UnixNano()
}

func toCaller(ns int64, offset time.Duration) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).Add(offset)
}

func atoi64(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not an integer", ErrCorrupt, s)
	}
	return n, nil
}

// micros is d in whole microseconds, at least 1 for a positive d.
func micros(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return max(int64(d/time.Microsecond), 1)
}

// clockArgs are the first two arguments of every script that reads the
// time: the caller's now in microseconds (logged in MONITOR, and the time
// when CallerClock is set), and whether to use it ("1") rather than Redis's
// TIME ("0").
func (s *Store) clockArgs(now time.Time) []any {
	if s.CallerClock {
		return []any{now.UnixMicro(), "1"}
	}
	return []any{now.UnixMicro(), "0"}
}

// luaNow is the opening of every script that reads the time: now, in
// microseconds, from Redis's TIME or from ARGV[1] (see clockArgs).
const luaNow = `local now
if ARGV[2] == '1' then
  now = tonumber(ARGV[1])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
`
