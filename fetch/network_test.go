package fetch

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestWithNetwork_LaterNonZeroFieldsWin: several WithNetwork merge in order: a
// later value's non-zero fields replace the earlier ones', its zero fields
// leave them, and a later Allow replaces the earlier list.
func TestWithNetwork_LaterNonZeroFieldsWin(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("merge.example")
	a := s.AddArticle(politetest.Article{})
	p := testPolicy(Vault(), time.Millisecond)
	ctx := context.Background()

	// A later Resolver alone: the earlier Dial, RootCAs and Allow still hold.
	res := &countingResolver{web: web}
	c := newClient(t, web, p, WithNetwork(Network{Resolver: res}), WithNetwork(Network{DNSTTL: time.Hour}))
	if _, err := c.Get(ctx, s.URL(a.Path)); err != nil {
		t.Fatalf("with a later resolver: %v", err)
	}
	if res.calls.Load() == 0 {
		t.Fatal("the later resolver was not used")
	}

	// A later Allow replaces the earlier list: loopback is no longer admitted.
	other := []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	blocked := newClient(t, web, p, WithNetwork(Network{Allow: other}))
	_, err := blocked.Get(ctx, s.URL(a.Path))
	refusal(t, err, BlockedAddr)

	// A zero Network changes nothing.
	var o options
	for _, f := range []Option{
		WithNetwork(Network{Resolver: web, DNSTTL: time.Minute, Allow: []netip.Prefix{loopback}}),
		WithNetwork(Network{}),
	} {
		f(&o)
	}
	if o.network.Resolver != Resolver(web) || o.network.DNSTTL != time.Minute || len(o.network.Allow) != 1 {
		t.Fatalf("a zero Network changed the earlier one: %+v", o.network)
	}
}
