package fetch

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

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

// lateWriter is a connection whose write of a request for slowPath is slow,
// as when the writer goroutine is descheduled on a busy machine: its bytes
// reach the kernel 80 ms after the write began, and the write returns 300 ms
// after that, so the answer can come, and the request end, before it does.
type lateWriter struct {
	net.Conn
	slowPath string
}

func (c *lateWriter) Write(p []byte) (int, error) {
	slow := bytes.Contains(p, []byte(" "+c.slowPath+" "))
	if slow {
		time.Sleep(80 * time.Millisecond)
	}
	n, err := c.Conn.Write(p)
	if slow {
		time.Sleep(300 * time.Millisecond)
	}
	return n, err
}

// TestPacer_P1_WriteCountsBeforeTheSlotIsFree: a request's start is the
// write of its bytes, recorded once the write returns. On a busy machine the
// answer may arrive, and the request end, before that; the next request to
// the host must still count its interval from the write (at 3,000 hosts on
// two cores it was granted from the turn's grant instead: 52 interval
// breaches in a run, a new connection opened 0.2-0.93 s after the previous
// request).
func TestPacer_P1_WriteCountsBeforeTheSlotIsFree(t *testing.T) {
	web := politetest.NewWeb(t)
	s := web.Site("late.example")
	s.AddArticle(politetest.Article{})
	s.AddArticle(politetest.Article{})
	slow, next := s.Articles()[0].Path, s.Articles()[1].Path
	p := testPolicy(Digest(), auditInterval)
	p.AllowHTTP = true // the request line is visible to the connection below ours
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := web.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &lateWriter{Conn: c, slowPath: slow}, nil
	}
	c := newClient(t, web, p, WithNetwork(Network{Dial: dial}))
	ctx := context.Background()
	if _, err := c.Get(ctx, "http://late.example/robots.txt"); err != nil && !errors.Is(err, ErrNotResent) {
		t.Logf("robots.txt: %v", err)
	}
	var wg sync.WaitGroup
	for _, path := range []string{slow, next} {
		wg.Go(func() {
			if _, err := c.Get(ctx, "http://late.example"+path); err != nil {
				t.Errorf("Get(%s): %v", path, err)
			}
		})
		time.Sleep(10 * time.Millisecond) // the slow one first
	}
	wg.Wait()
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Error(rep)
	}
}
