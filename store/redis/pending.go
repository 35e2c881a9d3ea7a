package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/crawl"
)

// pendingBuilt is the member every built pending set holds besides the
// keys, so that a set whose source has no reference pending still exists
// (Redis deletes an empty set). No reference has the empty key.
const pendingBuilt = ""

// pendingKey is the source's pending set: the keys of its references still
// pending, and pendingBuilt, in the source's slot. See and Settle keep it
// in the transaction that writes the reference.
func (st *State) pendingKey(source string) string { return st.s.key("pending", source) }

// KEYS: pending set, references hash. The stored references the set names,
// or false when the hash exists without the set (written before the set
// was kept, or the set expired first): Pending builds it then.
var statePendingScript = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  if redis.call('EXISTS', KEYS[2]) == 1 then return false end
  return {}
end
local out = {}
for _, k in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if k ~= '' then
    local v = redis.call('HGET', KEYS[2], k)
    if v then out[#out + 1] = v end
  end
end
return out
`)

// Pending implements [crawl.State]: one script reading the source's
// pending set and the references it names, so a pass's cost follows the
// references still pending. A source whose references were stored without
// the set (by an older version of this package) has it built from them
// once, by the first Pending, under WATCH of both keys.
func (st *State) Pending(ctx context.Context, source string) ([]crawl.RefState, error) {
	ctx, cancel, err := st.s.call(ctx)
	defer cancel()
	if err != nil {
		return nil, st.s.fail("state pending", source, err)
	}
	_, _, _, rk := st.keys(source)
	pk := st.pendingKey(source)
	vs, err := statePendingScript.Run(ctx, st.s.Client, []string{pk, rk}).StringSlice()
	if errors.Is(err, goredis.Nil) {
		out, err := st.buildPending(ctx, pk, rk)
		return out, st.s.fail("state pending", source, err)
	}
	if err != nil {
		return nil, st.s.fail("state pending", source, err)
	}
	out := make([]crawl.RefState, 0, len(vs))
	for _, v := range vs {
		var r crawl.RefState
		if err := json.Unmarshal([]byte(v), &r); err != nil {
			return nil, st.s.fail("state pending", source, fmt.Errorf("%w: %v", ErrCorrupt, err))
		}
		out = append(out, r)
	}
	sortRefs(out)
	return out, nil
}

// buildPending writes the pending set pk from the references hash rk and
// returns the pending references. Both keys get the references' retention
// anew, so that they expire together.
func (st *State) buildPending(ctx context.Context, pk, rk string) ([]crawl.RefState, error) {
	var out []crawl.RefState
	err := st.s.optimistic(ctx, []string{pk, rk}, func(tx *goredis.Tx) error {
		m, err := tx.HGetAll(ctx, rk).Result()
		if err != nil {
			return err
		}
		out, err = decodeRefs(m, func(r crawl.RefState) bool { return r.Outcome == crawl.Pending })
		if err != nil || len(m) == 0 {
			return err
		}
		members := []any{pendingBuilt}
		for _, r := range out {
			members = append(members, r.Key)
		}
		retain := or(st.s.StateRetain, DefaultStateRetain)
		_, err = tx.TxPipelined(ctx, func(p goredis.Pipeliner) error {
			p.Del(ctx, pk)
			p.SAdd(ctx, pk, members...)
			p.PExpire(ctx, pk, retain)
			p.PExpire(ctx, rk, retain)
			return nil
		})
		return err
	})
	return out, err
}
