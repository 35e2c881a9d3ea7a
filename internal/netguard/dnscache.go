package netguard

import (
	"container/list"
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/politefetch/politefetch/internal/clock"
)

// Defaults for the zero fields of a [DNSCache].
const (
	DefaultTTL           = 5 * time.Minute
	DefaultNegativeTTL   = 30 * time.Second
	DefaultMaxEntries    = 10_000
	DefaultLookupTimeout = 15 * time.Second
)

// Resolver looks up a host's addresses. network is "ip", "ip4" or "ip6".
// [*net.Resolver] satisfies it, and so does [*DNSCache].
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DNSCache is a [Resolver] that caches another one's answers locally:
// each answer is kept for TTL, a "not found" answer for NegativeTTL, and at
// most MaxEntries answers are kept, the oldest evicted first. Concurrent
// lookups of one name share a single lookup of the underlying Resolver.
// Other failures (time-outs, refused connections, cancellation) are not
// cached.
//
// The zero value is ready to use over [net.DefaultResolver]. Fields must not
// be changed once the cache is in use; it is then safe for concurrent use.
// A DNSCache must not be copied after first use.
type DNSCache struct {
	Resolver Resolver // nil: net.DefaultResolver
	// TTL is how long an answer is kept. 0: DefaultTTL. Resolvers do not
	// report record TTLs through LookupNetIP, so one TTL applies to all.
	TTL time.Duration
	// NegativeTTL is how long a "not found" answer is kept. 0:
	// DefaultNegativeTTL; negative: not cached.
	NegativeTTL time.Duration
	MaxEntries  int         // 0: DefaultMaxEntries
	Clock       clock.Clock // nil: real time
	// LookupTimeout bounds one shared lookup, which runs on behalf of every
	// waiting caller and so outlives any one caller's context. 0:
	// DefaultLookupTimeout.
	LookupTimeout time.Duration

	mu      sync.Mutex
	entries map[string]*list.Element // of *entry
	order   list.List                // oldest first
	group   singleflight.Group
}

type entry struct {
	key     string
	addrs   []netip.Addr
	err     error
	expires time.Time
}

// Len returns the number of answers held, expired or not.
func (c *DNSCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// LookupNetIP returns host's addresses for network ("ip", "ip4" or "ip6")
// from the cache or, on a miss, from the underlying Resolver. An IP literal
// is returned as is, without a lookup. The returned slice belongs to the
// caller. LookupNetIP returns ctx's error as soon as ctx is done; the shared
// lookup then goes on for the other callers, bounded by LookupTimeout.
func (c *DNSCache) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	key := network + "\x00" + name
	if addrs, err, ok := c.get(key); ok {
		return addrs, err
	}
	ch := c.group.DoChan(key, func() (any, error) {
		// Another flight may have just filled the entry.
		if addrs, err, ok := c.get(key); ok {
			return addrs, err
		}
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.lookupTimeout())
		defer cancel()
		addrs, err := c.resolver().LookupNetIP(lctx, network, name)
		if err == nil && len(addrs) == 0 {
			err = &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
		}
		c.put(key, addrs, err)
		return addrs, err
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return clone(res.Val.([]netip.Addr)), nil
	}
}

func (c *DNSCache) get(key string) ([]netip.Addr, error, bool) {
	now := clock.Or(c.Clock).Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, nil, false
	}
	e := el.Value.(*entry)
	if !now.Before(e.expires) {
		c.order.Remove(el)
		delete(c.entries, key)
		return nil, nil, false
	}
	if e.err != nil {
		return nil, e.err, true
	}
	return clone(e.addrs), nil, true
}

func (c *DNSCache) put(key string, addrs []netip.Addr, err error) {
	ttl := c.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if err != nil {
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			return // transient: do not cache
		}
		ttl = c.NegativeTTL
		if ttl == 0 {
			ttl = DefaultNegativeTTL
		}
		if ttl < 0 {
			return
		}
		addrs = nil
	}
	limit := c.MaxEntries
	if limit <= 0 {
		limit = DefaultMaxEntries
	}
	e := &entry{key: key, addrs: clone(addrs), err: err, expires: clock.Or(c.Clock).Now().Add(ttl)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[string]*list.Element)
	}
	if old, ok := c.entries[key]; ok {
		c.order.Remove(old)
	}
	for len(c.entries) >= limit {
		oldest := c.order.Front()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*entry).key)
	}
	c.entries[key] = c.order.PushBack(e)
}

func (c *DNSCache) resolver() Resolver {
	if c.Resolver == nil {
		return net.DefaultResolver
	}
	return c.Resolver
}

func (c *DNSCache) lookupTimeout() time.Duration {
	if c.LookupTimeout <= 0 {
		return DefaultLookupTimeout
	}
	return c.LookupTimeout
}

func clone(a []netip.Addr) []netip.Addr {
	if a == nil {
		return nil
	}
	return append([]netip.Addr(nil), a...)
}
