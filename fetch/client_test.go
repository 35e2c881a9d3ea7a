package fetch

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/provenance"
)

func TestGet_V12_CompleteArticleWithProof(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("news-1.example")
	a := site.AddArticle(politetest.Article{})
	p := testPolicy(Vault(), auditInterval)
	c := newClient(t, web, p)
	res, err := c.Get(context.Background(), site.URL(a.Path))
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Depositable(); err != nil {
		t.Fatalf("Depositable = %v, want nil", err)
	}
	if res.Status != 200 || res.MediaType != "text/html" || len(res.Body) == 0 {
		t.Fatalf("got status %d media %q body %d bytes", res.Status, res.MediaType, len(res.Body))
	}
	if res.Proof == nil || len(res.Proof.Hops) != 1 || res.Proof.Hops[0].SNI != "news-1.example" || len(res.Proof.Hops[0].Chain) == 0 {
		t.Fatalf("proof = %+v", res.Proof)
	}
	if got, want := res.Proof.Hops[0].ConnectedIP, "127.0.0.1"; got != want {
		t.Fatalf("connected IP %q, want %q", got, want)
	}
	if tm := res.Timings; tm.FirstByte <= 0 || tm.Total < tm.FirstByte || tm.Wait < 0 {
		// robots.txt's request opened the connection, so DNS, Connect and TLS
		// are robots.txt's. Whether the article waited for its interval depends
		// on how long robots.txt took: TestGet_TimingsWaitIsThePacersWait
		// asserts Wait exactly, on a manual clock.
		t.Fatalf("timings %+v", tm)
	}
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Fatal(rep)
	}
	reqs := web.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/robots.txt" || reqs[1].Path != a.Path {
		t.Fatalf("requests: %+v", reqs)
	}
	var refused *RefusedError
	_, err = c.Get(context.Background(), "http://news-1.example/")
	if !errors.As(err, &refused) || refused.Reason != NotHTTPS || !errors.Is(err, ErrNotHTTPS) {
		t.Fatalf("http URL: err = %v, want NotHTTPS refusal", err)
	}
}

// TestGet_TimingsWaitIsThePacersWait: the article requested right after its
// host's robots.txt waits one interval in the pacer, and Result.Timings.Wait says
// exactly how long, on the client's clock (a manual one here: the wait ends when
// the test advances it, so nothing depends on how fast the machine is).
func TestGet_TimingsWaitIsThePacersWait(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("news-1.example")
	a := site.AddArticle(politetest.Article{})
	clk := clock.NewManual(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	const interval = time.Hour
	c := newClient(t, web, testPolicy(Vault(), interval), WithClock(clk))
	type got struct {
		res *Result
		err error
	}
	done := make(chan got, 1)
	go func() {
		res, err := c.Get(context.Background(), site.URL(a.Path))
		done <- got{res, err}
	}()
	queued := func() bool {
		c.pacer.mu.Lock()
		defer c.pacer.mu.Unlock()
		st := c.pacer.hosts["news-1.example"]
		return st != nil && len(st.queue) == 1
	}
	for !queued() { // robots.txt read, the article queued for its turn
		select {
		case g := <-done:
			t.Fatalf("Get returned without waiting for its turn: %+v, %v", g.res, g.err)
		default:
			runtime.Gosched()
		}
	}
	clk.Advance(interval)
	g := <-done
	if g.err != nil {
		t.Fatal(g.err)
	}
	if g.res.Timings.Wait != interval {
		t.Fatalf("Timings.Wait = %v, want %v", g.res.Timings.Wait, interval)
	}
}

// TestDigestOf_SameAsProvenance: the chain's digest is provenance.DigestOf's,
// computed with fewer allocations.
func TestDigestOf_SameAsProvenance(t *testing.T) {
	for _, b := range [][]byte{nil, {}, []byte("<p>envelope</p>"), make([]byte, 100_000)} {
		if got, want := digestOf(b), provenance.DigestOf(b); got != want {
			t.Errorf("digestOf(%d bytes) = %q, want %q", len(b), got, want)
		}
	}
}

// gatedConn holds its next Write, once armed, until the test opens the gate.
type gatedConn struct {
	net.Conn
	armed   *atomic.Bool
	waiting chan<- struct{}
	open    <-chan struct{}
}

func (c gatedConn) Write(p []byte) (int, error) {
	if c.armed.CompareAndSwap(true, false) {
		c.waiting <- struct{}{}
		<-c.open
	}
	return c.Conn.Write(p)
}

// TestPacer_D2_IntervalCountsFromTheWrite: the host's last start is the
// moment the request's bytes were handed to the kernel, not the grant nor Go's
// WroteHeaders hook (which fires before the transport flushes): a request whose
// write is held 300 ms (on the client's manual clock) moves the next start
// 300 ms later, so a server never sees two starts closer than the interval
// however late a write leaves.
func TestPacer_D2_IntervalCountsFromTheWrite(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("news-1.example")
	a := site.AddArticle(politetest.Article{})
	b := site.AddArticle(politetest.Article{})
	clk := clock.NewManual(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	const interval = time.Hour
	var armed atomic.Bool
	waiting, open := make(chan struct{}), make(chan struct{})
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := web.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return gatedConn{Conn: conn, armed: &armed, waiting: waiting, open: open}, nil
	}
	c := newClient(t, web, testPolicy(Vault(), interval), WithClock(clk), WithNetwork(Network{Dial: dial}))
	last := func() time.Time {
		c.pacer.mu.Lock()
		defer c.pacer.mu.Unlock()
		return c.pacer.hosts["news-1.example"].last
	}
	get := func(path string) <-chan error {
		done := make(chan error, 1)
		go func() { _, err := c.Get(context.Background(), site.URL(path)); done <- err }()
		return done
	}
	queued := func() bool {
		c.pacer.mu.Lock()
		defer c.pacer.mu.Unlock()
		st := c.pacer.hosts["news-1.example"]
		return st != nil && len(st.queue) == 1
	}
	// robots.txt, then article a one interval later.
	done := get(a.Path)
	for !queued() {
		runtime.Gosched()
	}
	clk.Advance(interval)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Article b: granted at its turn, its write held 300 ms.
	armed.Store(true)
	done = get(b.Path)
	for !queued() {
		runtime.Gosched()
	}
	clk.Advance(interval)
	granted := clk.Now()
	<-waiting
	clk.Advance(300 * time.Millisecond)
	close(open)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := last(), granted.Add(300*time.Millisecond); !got.Equal(want) {
		t.Fatalf("last start = %v after the grant, want %v (the write)", got.Sub(granted), want.Sub(granted))
	}
}

// TestGet_PacingDeadlineSaysSo: a Get whose deadline comes while it waits for
// its host's turn fails with ErrPacingDeadline (and context.DeadlineExceeded),
// and its text says it was waiting for the host's turn.
func TestGet_PacingDeadlineSaysSo(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("slow-turn.example")
	a := site.AddArticle(politetest.Article{})
	clk := clock.NewManual(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	c := newClient(t, web, testPolicy(Vault(), time.Hour), WithClock(clk)) // the manual clock never reaches the turn
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := c.Get(ctx, site.URL(a.Path)) // robots.txt is read, then the article waits an hour
	if !errors.Is(err, ErrPacingDeadline) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrPacingDeadline and context.DeadlineExceeded", err)
	}
	if want := "waiting for slow-turn.example's turn"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
	if requested(web, "slow-turn.example", a.Path) {
		t.Fatal("the article was sent")
	}
}
