package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/crawl"
)

// State is the [crawl.State] in Redis, shared by every worker of a crawl:
// per source, its schedule, its pass lease with the pass number and the
// pass's consecutive failures, the pass's attempt counters, and the
// references it has announced, and its [crawl.Tally] (State is a
// [crawl.Tallier]). Leases and counters are Lua scripts on
// Redis's clock (TIME), so a worker whose clock is skewed or jumps can
// neither take a lease early nor keep one late; the schedule's instants
// are stored on Redis's clock and read back on the caller's; references
// keep their instants (first seen, settled) as the caller gave them. Every
// key of a source expires StateRetain after its last write. Get one from
// [Store.State]; it is safe for concurrent use.
type State struct{ s *Store }

var (
	_ crawl.State   = (*State)(nil)
	_ crawl.Tallier = (*State)(nil)
)

// State returns the Store's crawl state, for crawl.Crawler's State.
func (s *Store) State() *State { return &State{s} }

func (st *State) keys(source string) (sched, lease, attempts, refs string) {
	return st.s.key("src", source), st.s.key("pass", source), st.s.key("attempts", source), st.s.key("refs", source)
}

func (st *State) retainMS() int64 { return or(st.s.StateRetain, DefaultStateRetain).Milliseconds() }

// scheduleRecord is a crawl.Schedule as stored: Unix nanoseconds on Redis's
// clock, 0 for none.
type scheduleRecord struct {
	LastTrigger int64 `json:"last_trigger,omitempty"`
	NextTrigger int64 `json:"next_trigger,omitempty"`
	LastBacklog int64 `json:"last_backlog,omitempty"`
	NextBacklog int64 `json:"next_backlog,omitempty"`
	Embargo     int64 `json:"embargo,omitempty"`
	Slowed      int64 `json:"slowed,omitempty"`
}

// offset reads Redis's TIME and returns the offset of the caller's clock.
func (s *Store) offsetNow(ctx context.Context) (time.Duration, error) {
	if s.CallerClock {
		return 0, nil
	}
	before := s.now()
	server, err := s.Client.Time(ctx).Result()
	if err != nil {
		return 0, err
	}
	return s.observe(before, server), nil
}

// Schedule implements [crawl.State].
func (st *State) Schedule(ctx context.Context, source string) (crawl.Schedule, error) {
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return crawl.Schedule{}, st.s.fail("state schedule", source, err)
	}
	k, _, _, _ := st.keys(source)
	var tc *goredis.TimeCmd
	var gc *goredis.StringCmd
	before := st.s.now()
	_, err = st.s.Client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		tc, gc = p.Time(ctx), p.Get(ctx, k)
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return crawl.Schedule{}, st.s.fail("state schedule", source, err)
	}
	server, err := tc.Result()
	if err != nil {
		return crawl.Schedule{}, st.s.fail("state schedule", source, err)
	}
	off := st.s.observe(before, server)
	v, err := gc.Result()
	if errors.Is(err, goredis.Nil) {
		return crawl.Schedule{}, nil
	}
	var r scheduleRecord
	if err == nil {
		if e := json.Unmarshal([]byte(v), &r); e != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, e)
		}
	}
	if err != nil {
		return crawl.Schedule{}, st.s.fail("state schedule", source, err)
	}
	return crawl.Schedule{
		LastTrigger: toCaller(r.LastTrigger, off), NextTrigger: toCaller(r.NextTrigger, off),
		LastBacklog: toCaller(r.LastBacklog, off), NextBacklog: toCaller(r.NextBacklog, off),
		Embargo: toCaller(r.Embargo, off), Slowed: toCaller(r.Slowed, off),
	}, nil
}

// SetSchedule implements [crawl.State].
func (st *State) SetSchedule(ctx context.Context, source string, sc crawl.Schedule) error {
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return st.s.fail("state set schedule", source, err)
	}
	off, err := st.s.offsetNow(ctx)
	if err != nil {
		return st.s.fail("state set schedule", source, err)
	}
	b, _ := json.Marshal(scheduleRecord{
		LastTrigger: toServer(sc.LastTrigger, off), NextTrigger: toServer(sc.NextTrigger, off),
		LastBacklog: toServer(sc.LastBacklog, off), NextBacklog: toServer(sc.NextBacklog, off),
		Embargo: toServer(sc.Embargo, off), Slowed: toServer(sc.Slowed, off),
	})
	k, _, _, _ := st.keys(source)
	return st.s.fail("state set schedule", source, st.s.Client.Set(ctx, k, b, or(st.s.StateRetain, DefaultStateRetain)).Err())
}

// The lease scripts answer {held, owner, expires µs, pass, now µs, count}:
// held 1 when the call got what it asked, 0 when the lease is another's (or
// nobody's), -1 for a pass that is not the latest.
const luaLeaseReply = `local function reply(held, count)
  local f = redis.call('HMGET', KEYS[1], 'owner', 'exp', 'pass')
  return {held, f[1] or '', f[2] or '0', f[3] or '0', int(now), count or 0}
end
`

// KEYS: pass hash, attempts hash. ARGV: clock (2), owner, ttl µs, retain ms.
var stateAcquireScript = goredis.NewScript(luaNow + luaFmt + luaLeaseReply + `
local owner, exp = redis.call('HGET', KEYS[1], 'owner'), tonumber(redis.call('HGET', KEYS[1], 'exp') or '0')
if owner and owner ~= '' and now < exp then return reply(0) end
redis.call('HINCRBY', KEYS[1], 'pass', 1)
redis.call('HSET', KEYS[1], 'owner', ARGV[3], 'exp', int(now + tonumber(ARGV[4])), 'failures', 0)
redis.call('DEL', KEYS[2])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return reply(1)
`)

// KEYS: pass hash. ARGV: clock (2), owner, ttl µs, retain ms.
var stateRenewScript = goredis.NewScript(luaNow + luaFmt + luaLeaseReply + `
local owner, exp = redis.call('HGET', KEYS[1], 'owner'), tonumber(redis.call('HGET', KEYS[1], 'exp') or '0')
if not owner or owner == '' or owner ~= ARGV[3] or now >= exp then return reply(0) end
redis.call('HSET', KEYS[1], 'exp', int(now + tonumber(ARGV[4])))
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return reply(1)
`)

// KEYS: pass hash. ARGV: owner.
var stateReleaseScript = goredis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'owner', '', 'exp', 0)
end
return 1
`)

// KEYS: pass hash, attempts hash, tally hash. ARGV: clock (2), pass,
// "attempt" or "failure", the reference's key or "1"/"0" (failed), retain
// ms. A read and a deposit failure are counted in the source's tally in
// the same script.
var stateCountScript = goredis.NewScript(luaNow + luaFmt + luaLeaseReply + `
if redis.call('HGET', KEYS[1], 'pass') ~= ARGV[3] then return reply(-1) end
local n
if ARGV[4] == 'attempt' then
  n = redis.call('HINCRBY', KEYS[2], ARGV[5], 1)
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
  redis.call('HINCRBY', KEYS[3], 'reads', 1)
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
elseif ARGV[5] == '1' then
  n = redis.call('HINCRBY', KEYS[1], 'failures', 1)
  redis.call('HINCRBY', KEYS[3], 'deposit_failures', 1)
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
else
  redis.call('HSET', KEYS[1], 'failures', 0)
  n = 0
end
return reply(1, n)
`)

// leaseReply is a lease script's answer, its instants on the caller's clock.
type leaseReply struct {
	held  int64
	lease crawl.Lease
	count int
}

func (st *State) runLease(ctx context.Context, script *goredis.Script, keys []string, now time.Time, args ...any) (leaseReply, error) {
	v, err := script.Run(ctx, st.s.Client, keys, append(st.s.clockArgs(now), args...)...).Slice()
	if err != nil {
		return leaseReply{}, err
	}
	if len(v) != 6 {
		return leaseReply{}, fmt.Errorf("%w: lease script answered %d values", ErrCorrupt, len(v))
	}
	held, _ := v[0].(int64)
	owner, _ := v[1].(string)
	var n [3]int64
	for i, x := range []any{v[2], v[3], v[4]} {
		s, _ := x.(string)
		if n[i], err = strconv.ParseInt(s, 10, 64); err != nil {
			return leaseReply{}, fmt.Errorf("%w: lease script answered %v", ErrCorrupt, v)
		}
	}
	count, _ := v[5].(int64)
	var off time.Duration
	if !st.s.CallerClock {
		off = st.s.observeSpan(now, now, time.UnixMicro(n[2])) // now: the caller's, not a reading before the trip
	}
	r := leaseReply{held: held, count: int(count), lease: crawl.Lease{Owner: owner, Pass: uint64(n[1])}}
	if owner != "" {
		r.lease.Expires = toCaller(n[0]*1000, off)
	}
	return r, nil
}

// AcquireLease implements [crawl.State]: one script, on Redis's clock.
func (st *State) AcquireLease(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (crawl.Lease, error) {
	if owner == "" || ttl <= 0 {
		return crawl.Lease{}, errors.New("redis: a lease needs an owner and a positive ttl")
	}
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return crawl.Lease{}, st.s.fail("state acquire lease", source, err)
	}
	_, lk, ak, _ := st.keys(source)
	r, err := st.runLease(ctx, stateAcquireScript, []string{lk, ak}, now, owner, micros(ttl), st.retainMS())
	if err != nil {
		return crawl.Lease{}, st.s.fail("state acquire lease", source, err)
	}
	if r.held != 1 {
		return crawl.Lease{}, &crawl.LeaseError{Source: source, Held: r.lease, Err: crawl.ErrLeaseHeld}
	}
	return r.lease, nil
}

// RenewLease implements [crawl.State].
func (st *State) RenewLease(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (crawl.Lease, error) {
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return crawl.Lease{}, st.s.fail("state renew lease", source, err)
	}
	_, lk, _, _ := st.keys(source)
	r, err := st.runLease(ctx, stateRenewScript, []string{lk}, now, owner, micros(ttl), st.retainMS())
	if err != nil {
		return crawl.Lease{}, st.s.fail("state renew lease", source, err)
	}
	if r.held != 1 {
		return crawl.Lease{}, &crawl.LeaseError{Source: source, Held: r.lease, Err: crawl.ErrLeaseLost}
	}
	return r.lease, nil
}

// ReleaseLease implements [crawl.State]: compare-and-delete of owner's
// lease (the pass number stays).
func (st *State) ReleaseLease(ctx context.Context, source, owner string) error {
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return st.s.fail("state release lease", source, err)
	}
	_, lk, _, _ := st.keys(source)
	return st.s.fail("state release lease", source, stateReleaseScript.Run(ctx, st.s.Client, []string{lk}, owner).Err())
}

func (st *State) count(ctx context.Context, op, source string, pass uint64, kind, arg string) (int, error) {
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return 0, st.s.fail(op, source, err)
	}
	_, lk, ak, _ := st.keys(source)
	r, err := st.runLease(ctx, stateCountScript, []string{lk, ak, st.tallyKey(source)}, st.s.now(), strconv.FormatUint(pass, 10), kind, arg, st.retainMS())
	if err != nil {
		return 0, st.s.fail(op, source, err)
	}
	if r.held != 1 {
		return 0, &crawl.LeaseError{Source: source, Held: r.lease, Err: crawl.ErrLeaseLost}
	}
	return r.count, nil
}

// Attempt implements [crawl.State]: one script checking the pass and
// incrementing the reference's counter.
func (st *State) Attempt(ctx context.Context, source string, pass uint64, key string) (int, error) {
	return st.count(ctx, "state attempt", source, pass, "attempt", key)
}

// Failure implements [crawl.State].
func (st *State) Failure(ctx context.Context, source string, pass uint64, failed bool) (int, error) {
	arg := "0"
	if failed {
		arg = "1"
	}
	return st.count(ctx, "state failure", source, pass, "failure", arg)
}

// See implements [crawl.State]: the reference is read, merged and written
// under WATCH of the source's references.
func (st *State) See(ctx context.Context, source string, ref crawl.RefState, now time.Time) (crawl.RefState, bool, error) {
	if ref.Key == "" {
		return crawl.RefState{}, false, errors.New("redis: a reference needs a key")
	}
	var out crawl.RefState
	var created bool
	err := st.updateRef(ctx, "state see", source, ref.Key, nil, func(cur crawl.RefState, ok bool) (crawl.RefState, error) {
		created = !ok
		if !ok {
			cur = crawl.RefState{Key: ref.Key, FirstSeen: now}
		}
		cur.Merge(ref)
		out = cur
		return cur, nil
	})
	return out, created, err
}

// Settle implements [crawl.State]. A pending reference's outcome is
// counted in the source's tally in the same transaction as the write.
func (st *State) Settle(ctx context.Context, source, key string, outcome crawl.Outcome, note string, now time.Time) error {
	var d crawl.Tally
	return st.updateRef(ctx, "state settle", source, key, &d, func(cur crawl.RefState, ok bool) (crawl.RefState, error) {
		if !ok {
			return cur, fmt.Errorf("redis: settle %s/%s: unknown reference", source, key)
		}
		d = crawl.Tally{}
		if cur.Outcome == crawl.Pending {
			d = outcomeTally(outcome)
		}
		cur.Outcome, cur.Note, cur.Settled = outcome, note, now
		return cur, nil
	})
}

var errNoWrite = errors.New("no write")

// updateRef writes key's reference as fn makes it from the stored one, under
// WATCH of the source's references and pending set; tally, when set, is
// what fn left in it to add to the source's tally in the same transaction.
// The pending set is kept in the same transaction, where it is built (see
// keepsPending).
func (st *State) updateRef(ctx context.Context, op, source, key string, tally *crawl.Tally, fn func(crawl.RefState, bool) (crawl.RefState, error)) error {
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return st.s.fail(op, source+"/"+key, err)
	}
	_, _, _, rk := st.keys(source)
	pk := st.pendingKey(source)
	var fnErr error
	err = st.s.optimistic(ctx, []string{rk, pk}, func(tx *goredis.Tx) error {
		cur, ok, fresh, keep, err := st.readRef(ctx, tx, rk, pk, key)
		if err != nil {
			return err
		}
		next, err := fn(cur, ok)
		if err != nil {
			fnErr = err
			return errNoWrite
		}
		b, err := json.Marshal(next)
		if err != nil {
			return err
		}
		retain := or(st.s.StateRetain, DefaultStateRetain)
		_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			p.HSet(ctx, rk, key, b)
			p.PExpire(ctx, rk, retain)
			if keep {
				if fresh {
					p.Del(ctx, pk) // left by a hash that expired before it
				}
				p.SAdd(ctx, pk, pendingBuilt)
				if next.Outcome == crawl.Pending {
					p.SAdd(ctx, pk, key)
				} else {
					p.SRem(ctx, pk, key)
				}
				p.PExpire(ctx, pk, retain)
			}
			if tally != nil {
				st.addTally(ctx, p, source, *tally)
			}
			return nil
		})
		return err
	})
	if errors.Is(err, errNoWrite) {
		return fnErr
	}
	return st.s.fail(op, source+"/"+key, err)
}

// readRef reads, in one round trip under tx's WATCH, key's stored
// reference (ok false when there is none), whether the source's references
// hash is still to be made (fresh), and whether its pending set is to be
// kept (keep): it is when built, or when fresh, since the set is then
// complete from the first reference on.
func (st *State) readRef(ctx context.Context, tx *goredis.Tx, rk, pk, key string) (cur crawl.RefState, ok, fresh, keep bool, err error) {
	var get *goredis.StringCmd
	var refsExist, setExists *goredis.IntCmd
	_, err = tx.Pipelined(ctx, func(p goredis.Pipeliner) error {
		get = p.HGet(ctx, rk, key)
		refsExist = p.Exists(ctx, rk)
		setExists = p.Exists(ctx, pk)
		return nil
	})
	if err != nil && !errors.Is(err, goredis.Nil) {
		return cur, false, false, false, err
	}
	v, err := get.Result()
	switch {
	case errors.Is(err, goredis.Nil):
	case err != nil:
		return cur, false, false, false, err
	default:
		if err := json.Unmarshal([]byte(v), &cur); err != nil {
			return cur, false, false, false, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		ok = true
	}
	fresh = refsExist.Val() == 0
	return cur, ok, fresh, fresh || setExists.Val() == 1, nil
}

// Ref implements [crawl.State].
func (st *State) Ref(ctx context.Context, source, key string) (crawl.RefState, bool, error) {
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return crawl.RefState{}, false, st.s.fail("state ref", source+"/"+key, err)
	}
	_, _, _, rk := st.keys(source)
	v, err := st.s.Client.HGet(ctx, rk, key).Result()
	if errors.Is(err, goredis.Nil) {
		return crawl.RefState{}, false, nil
	}
	var r crawl.RefState
	if err == nil {
		if e := json.Unmarshal([]byte(v), &r); e != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, e)
		}
	}
	if err != nil {
		return crawl.RefState{}, false, st.s.fail("state ref", source+"/"+key, err)
	}
	return r, true, nil
}

// Refs implements [crawl.State].
func (st *State) Refs(ctx context.Context, source string) ([]crawl.RefState, error) {
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return nil, st.s.fail("state refs", source, err)
	}
	_, _, _, rk := st.keys(source)
	m, err := st.s.Client.HGetAll(ctx, rk).Result()
	if err != nil {
		return nil, st.s.fail("state refs", source, err)
	}
	out, err := decodeRefs(m, func(crawl.RefState) bool { return true })
	return out, st.s.fail("state refs", source, err)
}

// decodeRefs decodes the stored references in m that keep accepts, oldest
// first-seen first (ties by key).
func decodeRefs(m map[string]string, keep func(crawl.RefState) bool) ([]crawl.RefState, error) {
	out := make([]crawl.RefState, 0, len(m))
	for _, v := range m {
		var r crawl.RefState
		if err := json.Unmarshal([]byte(v), &r); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		if keep(r) {
			out = append(out, r)
		}
	}
	sortRefs(out)
	return out, nil
}

// sortRefs orders refs as Refs returns them: oldest first-seen first, ties
// by key.
func sortRefs(refs []crawl.RefState) {
	slices.SortFunc(refs, func(a, b crawl.RefState) int {
		if c := a.FirstSeen.Compare(b.FirstSeen); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
}

// Forget implements [crawl.State]: the schedule, the references (with
// their pending set) and the counters go; the pass number (and a lease
// still held) stays, so a later pass is never confused with an earlier one.
func (st *State) Forget(ctx context.Context, source string) error {
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return st.s.fail("state forget", source, err)
	}
	sk, _, ak, rk := st.keys(source)
	return st.s.fail("state forget", source, st.s.Client.Del(ctx, sk, ak, rk, st.pendingKey(source), st.tallyKey(source)).Err())
}

// tallyKey is the source's tally: a hash of counters, one field each (see
// tallyFields), in the source's slot.
func (st *State) tallyKey(source string) string { return st.s.key("tally", source) }

// tallyFields are a tally's counters by their field names.
func tallyFields(t *crawl.Tally) []struct {
	name string
	n    *int
} {
	return []struct {
		name string
		n    *int
	}{
		{"reads", &t.Reads}, {"trigger_reads", &t.TriggerReads}, {"not_modified", &t.NotModified},
		{"robots_reads", &t.RobotsReads}, {"image_reads", &t.ImageReads}, {"deposits", &t.Deposits},
		{"excerpts", &t.Excerpts}, {"excluded", &t.Excluded}, {"mismatches", &t.Mismatches},
		{"refusals", &t.Refusals}, {"failures", &t.Failures}, {"deposit_failures", &t.DepositFailures},
	}
}

// addTally queues on p the increments of d's counters that are not zero.
func (st *State) addTally(ctx context.Context, p goredis.Pipeliner, source string, d crawl.Tally) {
	if d == (crawl.Tally{}) {
		return
	}
	k := st.tallyKey(source)
	for _, f := range tallyFields(&d) {
		if *f.n != 0 {
			p.HIncrBy(ctx, k, f.name, int64(*f.n))
		}
	}
	p.PExpire(ctx, k, or(st.s.StateRetain, DefaultStateRetain))
}

// AddTally implements [crawl.Tallier]: the increments in one MULTI.
func (st *State) AddTally(ctx context.Context, source string, d crawl.Tally) error {
	if d == (crawl.Tally{}) {
		return nil
	}
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return st.s.fail("state add tally", source, err)
	}
	_, err = st.s.Client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		st.addTally(ctx, p, source, d)
		return nil
	})
	return st.s.fail("state add tally", source, err)
}

// Tally implements [crawl.Tallier].
func (st *State) Tally(ctx context.Context, source string) (crawl.Tally, error) {
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return crawl.Tally{}, st.s.fail("state tally", source, err)
	}
	m, err := st.s.Client.HGetAll(ctx, st.tallyKey(source)).Result()
	if err != nil {
		return crawl.Tally{}, st.s.fail("state tally", source, err)
	}
	var t crawl.Tally
	for _, f := range tallyFields(&t) {
		v, ok := m[f.name]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return crawl.Tally{}, st.s.fail("state tally", source, fmt.Errorf("%w: tally field %s is %q", ErrCorrupt, f.name, v))
		}
		*f.n = n
	}
	return t, nil
}

// outcomeTally is the tally of one reference settled as o.
func outcomeTally(o crawl.Outcome) crawl.Tally {
	switch o {
	case crawl.Deposited:
		return crawl.Tally{Deposits: 1}
	case crawl.Excerpted:
		return crawl.Tally{Excerpts: 1}
	case crawl.Excluded:
		return crawl.Tally{Excluded: 1}
	case crawl.Mismatch:
		return crawl.Tally{Mismatches: 1}
	}
	return crawl.Tally{}
}
