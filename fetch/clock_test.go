package fetch

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/politefetch/politefetch/clock"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/provenance"
)

// offsetClock is real time moved by a fixed offset: a machine whose clock is
// set wrong, or a caller's own time source.
type offsetClock struct{ d time.Duration }

func (c offsetClock) Now() time.Time                         { return time.Now().Add(c.d) }
func (c offsetClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// TestClock_OneClockInTheProof: every instant a proof carries comes from the
// Client's clock, so a proof made on a clock an hour behind (or ahead) of the
// machine's verifies: no hop's handshake lies after the read instant, and the
// instants agree with the clock, not with the machine.
func TestClock_OneClockInTheProof(t *testing.T) {
	t.Parallel()
	for _, off := range []time.Duration{-time.Hour, time.Hour} {
		t.Run(off.String(), func(t *testing.T) {
			t.Parallel()
			web := politetest.NewWeb(t)
			site := web.Site("clock.example")
			a := site.AddArticle(politetest.Article{})
			var clk clock.Clock = offsetClock{off}
			c := newClient(t, web, testPolicy(Vault(), 5*time.Millisecond), WithClock(clk))
			before := clk.Now()
			res, err := c.Get(context.Background(), site.URL(a.Path))
			after := clk.Now()
			if err != nil {
				t.Fatal(err)
			}
			if res.Proof == nil {
				t.Fatalf("no proof: %v", res.Depositable())
			}
			opts := provenance.VerifyOptions{Roots: web.RootCAs(), RootsLabel: "politetest", AllowPrefixes: []netip.Prefix{loopback}}
			if _, err := provenance.Verify(res.Proof, res.Body, opts); err != nil {
				t.Fatalf("the client's own proof does not verify: %v", err)
			}
			for i, h := range res.Proof.Hops {
				if h.HandshakeAt.Before(before.Add(-time.Minute)) || h.HandshakeAt.After(after) {
					t.Errorf("hop %d: handshake at %v, not on the client's clock (%v to %v)", i, h.HandshakeAt, before, after)
				}
			}
			if r := res.Proof.ReadAt; r.Before(before) || r.After(after) {
				t.Errorf("read at %v, not on the client's clock (%v to %v)", r, before, after)
			}
		})
	}
}
