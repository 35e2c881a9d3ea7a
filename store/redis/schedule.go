package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/fetch"
)

// Schedule is the [fetch.Schedule] in Redis: each host's latest start and
// its in-flight leases, shared by every process using the same Redis and
// prefix. Each call is one Lua script, atomic in Redis, on Redis's clock
// (TIME), so workers' clocks, however skewed, cannot shorten an interval:
// the now arguments are ignored unless the Store's CallerClock is set. Get
// one from [Store.Schedule]; it is safe for concurrent use.
//
// A Release that fails (Redis unreachable) is tried again, by this process
// only and still compare-and-delete, at the start of the Store's next call
// of any kind, after the refusals the Store owes (see [Ledger]), until it
// succeeds or the lease has expired: a request that ended while Redis was
// away does not hold its host's slot for the lease's whole time to live
// once Redis is back. At most MaxPending releases wait so.
type Schedule struct{ s *Store }

var _ fetch.Schedule = (*Schedule)(nil)

// Schedule returns the Store's pacing schedule, for fetch.Stores.Schedule.
func (s *Store) Schedule() *Schedule { return &Schedule{s} }

// luaFmt formats a number as an integer, exactly (Lua's tostring would
// print large ones in exponent form).
const luaFmt = "local function int(x) return string.format('%.0f', x) end\n"

// luaKeep sets the pacing keys' expiry to at least ms milliseconds: the
// KEYS at the indexes given (none: the first two, the start hash and the
// lease set), never a key a script only reads (the ledger record, whose
// expiry is the ledger's).
const luaKeep = `local function keep(ms, ...)
  local idx = {...}
  if #idx == 0 then idx = {1, 2} end
  for _, i in ipairs(idx) do
    if KEYS[i] and redis.call('PTTL', KEYS[i]) < ms then redis.call('PEXPIRE', KEYS[i], ms) end
  end
end
`

// KEYS: start hash, lease sorted set, the host's ledger record, the waiters
// (owner → order of asking), the waiters' poll-by instants (owner → µs).
// ARGV: clock (2), gap µs, limit, ttl µs, owner, retain ms, grace µs.
// Returns {wait µs} when the claim must wait, else {0, now µs, the ledger
// record or false}.
//
// Turns go in order of asking: a claim told to wait is marked a waiter, in
// the order it first asked, and a free slot goes to the earliest waiters
// first (a slot for each, in the order they asked): a claim that is not
// among them, such as the holder's next request asking the moment its
// previous one ends, waits until the first waiter's poll-by. A waiter must
// ask again by its poll-by (the wait it was told, at most the gap or the
// grace, plus the grace) or it loses its place: a waiter that gave up or
// died holds nobody back for longer.
var acquireScript = goredis.NewScript(luaNow + luaFmt + luaKeep + `
local gap, limit, ttl, owner, retain, grace = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', int(now))
local gone = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', int(now))
if #gone > 0 then
  redis.call('ZREM', KEYS[4], unpack(gone))
  redis.call('ZREM', KEYS[5], unpack(gone))
end
local held = redis.call('ZCARD', KEYS[2])
local wait = 0
local last = redis.call('HGET', KEYS[1], 'last')
if last then wait = tonumber(last) + gap - now end
if wait <= 0 and held >= limit then
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  wait = tonumber(first[2]) - now
end
local keepMS = math.floor(math.max(ttl, gap) / 1000) + retain
local function queue(w)
  if not redis.call('ZSCORE', KEYS[4], owner) then
    redis.call('ZADD', KEYS[4], redis.call('HINCRBY', KEYS[1], 'seq', 1), owner)
  end
  redis.call('ZADD', KEYS[5], int(now + math.min(w, math.max(gap, grace)) + grace), owner)
  keep(keepMS, 1, 4, 5)
  return {w}
end
if wait > 0 then return queue(wait) end
local rank = redis.call('ZRANK', KEYS[4], owner)
local ahead = rank or redis.call('ZCARD', KEYS[4])
if ahead >= limit - held then
  local first = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
  local by = tonumber(redis.call('ZSCORE', KEYS[5], first) or (now + 1))
  return queue(math.max(by - now, 1))
end
if rank then
  redis.call('ZREM', KEYS[4], owner)
  redis.call('ZREM', KEYS[5], owner)
end
redis.call('HSET', KEYS[1], 'last', int(now))
redis.call('ZADD', KEYS[2], int(now + ttl), owner)
keep(keepMS)
return {0, now, redis.call('GET', KEYS[3])}
`)

// KEYS: start hash. ARGV: clock (2), retain ms.
var startedScript = goredis.NewScript(luaNow + luaFmt + luaKeep + `
local last = redis.call('HGET', KEYS[1], 'last')
if not last or now > tonumber(last) then
  redis.call('HSET', KEYS[1], 'last', int(now))
  keep(tonumber(ARGV[3]))
end
return 1
`)

// KEYS: start hash, lease sorted set. ARGV: clock (2), owner, ttl µs (0:
// release), retain ms. Returns 1 if owner held a live lease, else 0.
var leaseScript = goredis.NewScript(luaNow + luaFmt + luaKeep + `
local owner, ttl, retain = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local exp = redis.call('ZSCORE', KEYS[2], owner)
if not exp then return 0 end
if tonumber(exp) <= now then
  redis.call('ZREM', KEYS[2], owner)
  return 0
end
if ttl == 0 then
  redis.call('ZREM', KEYS[2], owner)
  return 1
end
redis.call('ZADD', KEYS[2], int(now + ttl), owner)
keep(math.floor(ttl / 1000) + retain)
return 1
`)

func (sc *Schedule) keys(host string) []string {
	return []string{sc.s.key("sched", host), sc.s.key("lease", host)}
}

func (sc *Schedule) retainMS() int64 {
	return or(sc.s.ScheduleRetain, DefaultScheduleRetain).Milliseconds()
}

// Acquire implements [fetch.Schedule]: one script that drops expired
// leases, and grants a start and a lease if the key has a free slot, its
// latest start is at least c.Gap before Redis's now, and no claim that
// asked earlier is waiting for that slot. A granted claim also reads the
// key's ledger record, for the ledger's Check that follows (see [Ledger]).
//
// Turns go in order of asking, across processes: a claim told to wait is
// a waiter, and a free slot goes to the waiters in the order they first
// asked before any claim that did not wait, such as the holder's next
// request asking the moment its previous one ends (which would otherwise
// win nearly every turn, its process knowing the instant the interval
// ends). A waiter keeps its place while it asks again within the wait it
// was told (at most the gap) and the Store's TurnGrace; one that gave up or
// died holds the slot back by that much at most.
func (sc *Schedule) Acquire(ctx context.Context, c fetch.Claim) (time.Duration, bool, error) {
	ctx, cancel, err := sc.s.call(ctx)
	defer cancel()
	if err != nil {
		return 0, false, sc.s.fail("schedule acquire", c.Key, err)
	}
	args := append(sc.s.clockArgs(c.Now), micros(c.Gap), max(c.Limit, 1), max(micros(c.TTL), 1), c.Owner, sc.retainMS(),
		micros(or(sc.s.TurnGrace, DefaultTurnGrace)))
	before := sc.s.now()
	keys := append(sc.keys(c.Key), sc.s.key("ledger", c.Key), sc.s.key("wait", c.Key), sc.s.key("waitby", c.Key))
	res, err := acquireScript.Run(ctx, sc.s.Client, keys, args...).Slice()
	if err != nil {
		return 0, false, sc.s.fail("schedule acquire", c.Key, err)
	}
	wait, ok := res[0].(int64)
	if !ok {
		return 0, false, sc.s.fail("schedule acquire", c.Key, fmt.Errorf("%w: script answered %v", ErrCorrupt, res))
	}
	if wait > 0 {
		return time.Duration(wait) * time.Microsecond, false, nil
	}
	if len(res) >= 2 {
		if now, ok := res[1].(int64); ok {
			rec, _ := res[len(res)-1].(string)
			sc.s.claimed(c.Key, rec, len(res) == 3 && rec != "", sc.s.observe(before, time.UnixMicro(now)))
		}
	}
	return 0, true, nil
}

// Started implements [fetch.Schedule]: the key's latest start moves to
// Redis's now if that is later.
func (sc *Schedule) Started(ctx context.Context, key, _ string, now time.Time) error {
	ctx, cancel, err := sc.s.call(ctx)
	defer cancel()
	if err != nil {
		return sc.s.fail("schedule started", key, err)
	}
	args := append(sc.s.clockArgs(now), sc.retainMS())
	err = startedScript.Run(ctx, sc.s.Client, sc.keys(key)[:1], args...).Err()
	return sc.s.fail("schedule started", key, err)
}

// Renew implements [fetch.Schedule].
func (sc *Schedule) Renew(ctx context.Context, key, owner string, now time.Time, ttl time.Duration) error {
	return sc.lease(ctx, "schedule renew", key, owner, now, max(micros(ttl), 1))
}

// Release implements [fetch.Schedule]: compare-and-delete of owner's lease.
//
// While this process owes Redis a refusal (see [Ledger]), Release first
// writes every refusal owed, whatever another of the process's calls is
// doing meanwhile, and frees no slot until they are all written: a release
// that cannot wait so is kept, and tried again after them, as a failed one.
func (sc *Schedule) Release(ctx context.Context, key, owner string, now time.Time) error {
	err := sc.s.writeRefusals(ctx)
	if err == nil {
		err = sc.lease(ctx, "schedule release", key, owner, now, 0)
	} else {
		err = sc.s.fail("schedule release", key, err)
	}
	var e *Error
	if errors.As(err, &e) && !errors.Is(err, ErrNoClient) {
		sc.s.mu.Lock()
		if sc.s.releases == nil {
			sc.s.releases = map[[2]string]struct{}{}
		}
		if len(sc.s.releases) < or(sc.s.MaxPending, DefaultMaxPending) {
			sc.s.releases[[2]string{key, owner}] = struct{}{}
			sc.s.owed.Store(true)
		}
		sc.s.mu.Unlock()
	}
	return err
}

// retryReleases tries the releases that failed again, stopping at the first
// that fails again.
func (sc *Schedule) retryReleases(ctx context.Context) {
	sc.s.mu.Lock()
	if len(sc.s.releases) == 0 {
		sc.s.mu.Unlock()
		return
	}
	todo := make([][2]string, 0, len(sc.s.releases))
	for r := range sc.s.releases {
		todo = append(todo, r)
	}
	sc.s.mu.Unlock()
	for _, r := range todo {
		err := sc.lease(ctx, "schedule release", r[0], r[1], sc.s.now(), 0)
		var e *Error
		if errors.As(err, &e) {
			return
		}
		sc.s.mu.Lock()
		delete(sc.s.releases, r)
		sc.s.mu.Unlock()
	}
}

func (sc *Schedule) lease(ctx context.Context, op, key, owner string, now time.Time, ttl int64) error {
	ctx, cancel, err := sc.s.call(ctx)
	defer cancel()
	if err != nil {
		return sc.s.fail(op, key, err)
	}
	args := append(sc.s.clockArgs(now), owner, ttl, sc.retainMS())
	held, err := leaseScript.Run(ctx, sc.s.Client, sc.keys(key), args...).Int64()
	if err != nil {
		return sc.s.fail(op, key, err)
	}
	if held == 0 {
		return fetch.ErrLeaseNotHeld
	}
	return nil
}
