package fetch

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// GetOptions.MaxBody lowers the caps for one Get and never raises them: a 64 KiB
// body fails under a 16 KiB cap, is read under the policy's own, and a cap
// above the policy's leaves the policy's in force.
func TestMaxBody_LowersCapsForOneGet(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("caps.example")
	s.Misbehave("/big", politetest.Behaviour{Kind: politetest.Oversize, Size: 64 << 10})
	p := testPolicy(StrictNews(), 10*time.Millisecond)
	p.MaxWire = 32 << 10
	c := newClient(t, web, p)
	ctx := context.Background()

	res, err := c.Get(ctx, s.URL("/big"), GetOptions{MaxBody: 16 << 10})
	if !errors.Is(err, ErrWireTooLarge) {
		t.Fatalf("under a 16 KiB cap: %v, want ErrWireTooLarge", err)
	}
	if res == nil || res.Status != http.StatusOK || res.Body != nil {
		t.Fatalf("under a 16 KiB cap: result %+v, want the 200 without a body", res)
	}
	if _, err := c.Get(ctx, s.URL("/big"), GetOptions{MaxBody: 1 << 20}); !errors.Is(err, ErrWireTooLarge) {
		t.Fatalf("a cap above the policy's: %v, want the policy's 32 KiB to hold", err)
	}
	s.Misbehave("/small", politetest.Behaviour{Kind: politetest.Oversize, Size: 8 << 10})
	res, err = c.Get(ctx, s.URL("/small"), GetOptions{MaxBody: 16 << 10})
	if err != nil || res.Decoded != 8<<10 {
		t.Fatalf("8 KiB under a 16 KiB cap: %v, %d bytes", err, res.Decoded)
	}
}
