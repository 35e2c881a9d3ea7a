package fetch

import (
	"context"
	"errors"
	"testing"

	"github.com/politefetch/politefetch/politetest"
)

// TestPacer_P1_FailedReusedConnNotResent: net/http sends an idempotent
// request again, at once, on a new connection when a reused one fails after
// the request was written to it (here the server resets it before any
// answer). That resend is a second request to the host within its interval:
// the chain must not send it, and says so (ErrNotResent).
func TestPacer_P1_FailedReusedConnNotResent(t *testing.T) {
	web := politetest.NewWeb(t)
	s := web.Site("reset.example")
	a := s.AddArticle(politetest.Article{})
	s.Misbehave(a.Path, politetest.Behaviour{Kind: politetest.Reset})
	p := testPolicy(Digest(), auditInterval)
	c := newClient(t, web, p)
	// robots.txt first, then the article on the same, reused, connection.
	_, err := c.Get(context.Background(), s.URL(a.Path))
	if !errors.Is(err, ErrNotResent) {
		t.Errorf("Get: %v, want ErrNotResent", err)
	}
	n := 0
	for _, r := range web.Requests() {
		if r.Path == a.Path {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the article was requested %d times, want 1", n)
	}
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Error(rep)
	}
}
