package redis

import (
	"context"
	"strconv"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/fetch"
)

// Validators is the [fetch.ValidatorStore] in Redis: one hash per URL with
// its ETag, Last-Modified and body length, kept ValidatorRetain after it was last
// stored. Get one from [Store.Validators]; it is safe for concurrent use.
type Validators struct{ s *Store }

var _ fetch.ValidatorStore = (*Validators)(nil)

// Validators returns the Store's validators, for fetch.Stores.Validators.
func (s *Store) Validators() *Validators { return &Validators{s} }

// Get implements [fetch.ValidatorStore].
func (v *Validators) Get(ctx context.Context, key string) (fetch.Validator, bool, error) {
	ctx, cancel, err := v.s.call(ctx)
	defer cancel()
	if err != nil {
		return fetch.Validator{}, false, v.s.fail("validators get", key, err)
	}
	m, err := v.s.Client.HGetAll(ctx, v.s.key("val", key)).Result()
	if err != nil {
		return fetch.Validator{}, false, v.s.fail("validators get", key, err)
	}
	if len(m) == 0 {
		return fetch.Validator{}, false, nil
	}
	// length is absent in a hash written before it was kept, and then 0,
	// as is a value that is not a non-negative integer: a 304 to these
	// validators then says it saved nothing it knows of.
	n, err := strconv.ParseInt(m["length"], 10, 64)
	if err != nil || n < 0 {
		n = 0
	}
	return fetch.Validator{ETag: m["etag"], LastModified: m["last_modified"], Length: n}, true, nil
}

// Put implements [fetch.ValidatorStore].
func (v *Validators) Put(ctx context.Context, key string, val fetch.Validator) error {
	ctx, cancel, err := v.s.call(ctx)
	defer cancel()
	if err != nil {
		return v.s.fail("validators put", key, err)
	}
	k := v.s.key("val", key)
	_, err = v.s.Client.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.Del(ctx, k)
		p.HSet(ctx, k, "etag", val.ETag, "last_modified", val.LastModified, "length", strconv.FormatInt(max(val.Length, 0), 10))
		p.PExpire(ctx, k, or(v.s.ValidatorRetain, DefaultValidatorRetain))
		return nil
	})
	return v.s.fail("validators put", key, err)
}

// Delete implements [fetch.ValidatorStore].
func (v *Validators) Delete(ctx context.Context, key string) error {
	ctx, cancel, err := v.s.call(ctx)
	defer cancel()
	if err != nil {
		return v.s.fail("validators delete", key, err)
	}
	return v.s.fail("validators delete", key, v.s.Client.Del(ctx, v.s.key("val", key)).Err())
}
