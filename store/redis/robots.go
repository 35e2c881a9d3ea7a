package redis

import (
	"context"
	"errors"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/robots"
)

// Robots is the [robots.Store] in Redis: one hash per host with its
// robots.txt record, kept RobotsRetain after the record expires, and a
// fetch lease per host, so that workers whose copy expires together fetch
// robots.txt once, not once each.
//
// The lease lives in Get, since robots.Store has no call of its own for it:
// a Get that finds no record, or an expired one, takes the host's fetch
// lease (SET NX PX, RobotsFetchLease) and returns what it found, and its
// caller, the robots Cache, fetches; the Put of the new record releases the
// lease (compare-and-delete), or [Robots.ReleaseFetch] does when the fetch
// was never sent. A Get from another Store while the lease is
// held waits for that Put, polling, until the record is fresh, the lease is
// gone (then it takes the lease itself), its context ends, or
// RobotsFetchLease has passed, and then returns what is stored. A Store's
// own lease never makes it wait: within a process the Cache's singleflight
// already fetches once.
//
// Instants are stored on Redis's clock and read back on the caller's. Get
// one from [Store.Robots]; it is safe for concurrent use.
type Robots struct{ s *Store }

var _ robots.Store = (*Robots)(nil)

// Robots returns the Store's robots.txt records, for fetch.Stores.Robots.
func (s *Store) Robots() *Robots { return &Robots{s} }

// robotsPoll is how often a Get waiting for another process's fetch looks
// for its record.
const robotsPoll = 50 * time.Millisecond

// KEYS: record hash, fetch lease. ARGV: token, expiry ms, then the fields
// and values of the record.
var robotsPutScript = goredis.NewScript(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
`)

// KEYS: fetch lease. ARGV: token, lease ms. Returns 1 if this token holds
// the lease (taken now, or already).
var robotsLeaseScript = goredis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end
return 0
`)

// KEYS: fetch lease. ARGV: token. Deletes the lease if this token holds it.
var robotsReleaseScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`)

var _ robots.FetchReleaser = (*Robots)(nil)

// ReleaseFetch implements [robots.FetchReleaser]: the robots Cache calls it
// when the fetch this Store's lease was for was never sent, so that the
// other processes waiting for the host's record take the lease at once
// rather than when it expires. Compare-and-delete: only this Store's lease
// goes.
func (r *Robots) ReleaseFetch(ctx context.Context, host string) error {
	ctx, cancel, err := r.s.call(ctx)
	defer cancel()
	if err != nil {
		return r.s.fail("robots release", host, err)
	}
	err = robotsReleaseScript.Run(ctx, r.s.Client, []string{r.s.key("robotsfetch", host)}, r.s.token).Err()
	if errors.Is(err, goredis.Nil) {
		err = nil
	}
	return r.s.fail("robots release", host, err)
}

// Get implements [robots.Store], with the fetch lease described on
// [Robots].
func (r *Robots) Get(ctx context.Context, host string) (robots.Record, bool, error) {
	if r.s.Client == nil {
		return robots.Record{}, false, r.s.fail("robots get", host, ErrNoClient)
	}
	r.s.init()
	if r.s.unbounded {
		return robots.Record{}, false, r.s.fail("robots get", host, ErrUnbounded)
	}
	lease := or(r.s.RobotsFetchLease, DefaultRobotsFetchLease)
	deadline := time.Now().Add(lease)
	for {
		rec, ok, now, err := r.read(ctx, host)
		if err != nil {
			return robots.Record{}, false, r.s.fail("robots get", host, err)
		}
		if ok && now.Before(rec.Expires) {
			return rec, true, nil
		}
		held, err := r.takeLease(ctx, host, lease)
		if err != nil {
			return robots.Record{}, false, r.s.fail("robots get", host, err)
		}
		if held || !time.Now().Before(deadline) {
			return rec, ok, nil
		}
		t := time.NewTimer(robotsPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return rec, ok, nil
		case <-t.C:
		}
	}
}

func (r *Robots) takeLease(ctx context.Context, host string, lease time.Duration) (bool, error) {
	ctx, cancel, err := r.s.call(ctx)
	defer cancel()
	if err != nil {
		return false, err
	}
	n, err := robotsLeaseScript.Run(ctx, r.s.Client, []string{r.s.key("robotsfetch", host)}, r.s.token, lease.Milliseconds()).Int64()
	return n == 1, err
}

// read returns the stored record, the caller's now, and whether there is one.
func (r *Robots) read(ctx context.Context, host string) (robots.Record, bool, time.Time, error) {
	ctx, cancel, err := r.s.call(ctx)
	defer cancel()
	if err != nil {
		return robots.Record{}, false, time.Time{}, err
	}
	before := r.s.now()
	var tc *goredis.TimeCmd
	var hc *goredis.MapStringStringCmd
	_, err = r.s.Client.Pipelined(ctx, func(p goredis.Pipeliner) error {
		tc, hc = p.Time(ctx), p.HGetAll(ctx, r.s.key("robots", host))
		return nil
	})
	if err != nil {
		return robots.Record{}, false, before, err
	}
	server, err := tc.Result()
	if err != nil {
		return robots.Record{}, false, before, err
	}
	off := r.s.observe(before, server)
	m := hc.Val()
	if len(m) == 0 {
		return robots.Record{}, false, before, nil
	}
	var rec robots.Record
	var fetched, expires int64
	var outcome, status int64
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"outcome", &outcome}, {"status", &status}, {"fetched_at", &fetched}, {"expires", &expires}} {
		if *f.dst, err = atoi64(m[f.name]); err != nil {
			return robots.Record{}, false, before, err
		}
	}
	rec.Outcome, rec.Status = robots.Outcome(outcome), int(status)
	rec.FetchedAt, rec.Expires = toCaller(fetched, off), toCaller(expires, off)
	rec.Failure, rec.LastFailure = m["failure"], m["last_failure"]
	rec.Stale = m["stale"] == "1"
	if b := m["body"]; b != "" {
		rec.Body = []byte(b)
	}
	return rec, true, before, nil
}

// Put implements [robots.Store], releasing this Store's fetch lease on the
// host.
func (r *Robots) Put(ctx context.Context, host string, rec robots.Record) error {
	ctx, cancel, err := r.s.call(ctx)
	defer cancel()
	if err != nil {
		return r.s.fail("robots put", host, err)
	}
	before := r.s.now()
	server, err := r.s.Client.Time(ctx).Result()
	if err != nil {
		return r.s.fail("robots put", host, err)
	}
	off := r.s.observe(before, server)
	keep := max(rec.Expires.Sub(before), 0) + or(r.s.RobotsRetain, DefaultRobotsRetain)
	stale := "0"
	if rec.Stale {
		stale = "1"
	}
	args := []any{r.s.token, max(keep.Milliseconds(), 1),
		"outcome", int64(rec.Outcome), "status", rec.Status, "failure", rec.Failure, "body", rec.Body,
		"fetched_at", strconv.FormatInt(toServer(rec.FetchedAt, off), 10), "expires", strconv.FormatInt(toServer(rec.Expires, off), 10),
		"stale", stale, "last_failure", rec.LastFailure}
	err = robotsPutScript.Run(ctx, r.s.Client, []string{r.s.key("robots", host), r.s.key("robotsfetch", host)}, args...).Err()
	if errors.Is(err, goredis.Nil) {
		err = nil
	}
	return r.s.fail("robots put", host, err)
}
