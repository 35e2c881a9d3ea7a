package fetch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http/httptrace"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// stage is where in its life a request of the cancellation test is cancelled.
type stage int

const (
	stageNone        stage = iota // read to the end
	stageWaiting                  // while it waits for its turn
	stageDialling                 // as a connection is dialled for it
	stageHandshaking              // as that connection's TLS handshake begins
	stageWriting                  // as its headers are written
	stageHeaders                  // once it is written, before the response
	stageBody                     // at the response's first byte, as the body is read
	stageRandom                   // at a random moment within three intervals
	stages
)

var stageNames = [...]string{"none", "waiting", "dialling", "handshaking", "writing", "headers", "body", "random"}

func (s stage) String() string { return stageNames[s] }

// cancelPlan is what one Get of the test carries in its context: where to
// cancel it, and the function that does.
type cancelPlan struct {
	at     stage
	cancel context.CancelFunc
	fired  atomic.Bool
}

func (p *cancelPlan) fire(at stage) {
	if p != nil && p.at == at && p.fired.CompareAndSwap(false, true) {
		p.cancel()
	}
}

type cancelPlanKey struct{}

// handshakeConn cancels its request's plan at its first Write: the TLS
// ClientHello.
type handshakeConn struct {
	net.Conn
	plan *cancelPlan
	once sync.Once
}

func (c *handshakeConn) Write(p []byte) (int, error) {
	c.once.Do(func() { c.plan.fire(stageHandshaking) })
	return c.Conn.Write(p)
}

// connLog records, per host, when each connection's dial began and when its
// Close returned.
type connLog struct {
	mu    sync.Mutex
	spans map[string][][2]time.Time
}

type loggedConn struct {
	net.Conn
	log  *connLog
	addr string
	i    int
	once sync.Once
}

func (l *connLog) track(addr string, opened time.Time, c net.Conn) net.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.spans == nil {
		l.spans = make(map[string][][2]time.Time)
	}
	l.spans[addr] = append(l.spans[addr], [2]time.Time{opened})
	return &loggedConn{Conn: c, log: l, addr: addr, i: len(l.spans[addr]) - 1}
}

func (c *loggedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.log.mu.Lock()
		c.log.spans[c.addr][c.i][1] = time.Now()
		c.log.mu.Unlock()
	})
	return err
}

// open counts the connections not closed yet.
func (l *connLog) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, spans := range l.spans {
		for _, s := range spans {
			if s[1].IsZero() {
				n++
			}
		}
	}
	return n
}

// overlaps lists the connections whose dial began before the previous one to
// the same address was closed (or that were never closed).
func (l *connLog) overlaps() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for addr, spans := range l.spans {
		for i := 1; i < len(spans); i++ {
			if prev := spans[i-1][1]; prev.IsZero() || spans[i][0].Before(prev) {
				out = append(out, fmt.Sprintf("%s #%d dialled %v before #%d closed", addr, i, prev.Sub(spans[i][0]), i-1))
			}
		}
		if last := spans[len(spans)-1]; last[1].IsZero() {
			out = append(out, fmt.Sprintf("%s #%d never closed", addr, len(spans)-1))
		}
	}
	return out
}

// TestCancel_P1_PoliteAtEveryStage: a slot granted and then abandoned must
// still count as load on the publisher. 160 goroutines read 30 hosts at the
// audit interval for a second and a half, each Get cancelled at a stage drawn
// at random: while it waits for its turn, as its connection is dialled, as
// the TLS handshake begins, as its headers are written, once written, as its
// body is read, or at a random moment (net/http closes the connection of a
// request cancelled once written, so new ones are dialled all the time). The
// auditor then finds no request closer to the previous one than the interval
// and never two in flight to one host; the client's own log of its dials and
// closes shows never two connections open to one host (the auditor checks
// that too when the machine is idle). The same again with every core kept
// busy by spinning goroutines.
func TestCancel_P1_PoliteAtEveryStage(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of audited load")
	}
	for _, loaded := range []bool{false, true} {
		t.Run(map[bool]string{false: "idle", true: "cpu-load"}[loaded], func(t *testing.T) {
			web := politetest.NewWeb(t)
			const hosts = 30
			var urls []string
			for h := range hosts {
				s := web.Site(fmt.Sprintf("cancel-%d.example", h))
				for range 8 {
					urls = append(urls, s.URL(s.AddArticle(politetest.Article{}).Path))
				}
			}
			var dials atomic.Int32
			conns := &connLog{}
			dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				plan, _ := ctx.Value(cancelPlanKey{}).(*cancelPlan)
				plan.fire(stageDialling) // net/http goes on dialling: the dial's context is not the request's
				opened := time.Now()
				conn, err := web.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				host := addr // Network.Dial's address is the resolved one: name the host by the request's turn
				if t := turnFrom(ctx); t != nil {
					host = t.key
				}
				conn = conns.track(host, opened, conn)
				if plan == nil || plan.at != stageHandshaking {
					return conn, nil
				}
				return &handshakeConn{Conn: conn, plan: plan}, nil
			}
			p := testPolicy(Digest(), auditInterval)
			c := newClient(t, web, p, WithNetwork(Network{Dial: dial}))

			stop := make(chan struct{})
			var bg sync.WaitGroup
			if loaded {
				for range 2 * runtime.NumCPU() {
					bg.Add(1)
					go func() {
						defer bg.Done()
						for x := 0; ; x++ {
							select {
							case <-stop:
								return
							default:
							}
							for range 10_000 {
								x = x*31 + 7
							}
							// Busy, but yielding: the load delays every
							// goroutine, the client's as much as the
							// referee's, without starving the web so long
							// that it reads a connection's close late.
							runtime.Gosched()
						}
					}()
				}
			}
			var counts [stages]atomic.Int32
			var ok atomic.Int32
			deadline := time.Now().Add(1500 * time.Millisecond)
			var wg sync.WaitGroup
			for g := range 160 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 11))
					for time.Now().Before(deadline) {
						plan := &cancelPlan{at: stage(rng.IntN(int(stages)))}
						ctx, cancel := context.WithCancel(context.Background())
						plan.cancel = cancel
						switch plan.at {
						case stageWaiting:
							ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(int(auditInterval))))
						case stageRandom:
							ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(int(3*auditInterval))))
						}
						ctx = context.WithValue(ctx, cancelPlanKey{}, plan)
						ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
							WroteHeaders:         func() { plan.fire(stageWriting) },
							WroteRequest:         func(httptrace.WroteRequestInfo) { plan.fire(stageHeaders) },
							GotFirstResponseByte: func() { plan.fire(stageBody) },
						})
						_, err := c.Get(ctx, urls[rng.IntN(len(urls))])
						cancel()
						plan.cancel()
						counts[plan.at].Add(1)
						if err == nil {
							ok.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			close(stop)
			bg.Wait()
			c.base.CloseIdleConnections()
			// A dial net/http went on with for a cancelled Get is cut short
			// by CloseIdleConnections, and closes its connection on its own
			// goroutine: wait for those closes (2 s at most) before asking
			// whether any connection was left open.
			for end := time.Now().Add(2 * time.Second); conns.open() > 0 && time.Now().Before(end); {
				time.Sleep(10 * time.Millisecond)
			}

			var line string
			for s := range stages {
				line += fmt.Sprintf(" %s=%d", s, counts[s].Load())
			}
			if overlaps := conns.overlaps(); len(overlaps) > 0 {
				t.Errorf("two connections open to one host at once, by the client's own clock: %v", overlaps)
			}
			ap := auditPolicy(p)
			if loaded {
				// The referee can time a connection's close only by what
				// it reads (the TLS goodbye) or when its goroutine gets
				// round to it; busy cores make the second late by tens to
				// hundreds of milliseconds. The client's own log above
				// holds the rule exactly; the idle run asks the referee.
				ap.MaxConnsPerHost = 1 << 20
			}
			rep := web.Audit(ap)
			t.Logf("%d Gets read in full; cancelled at:%s; %d connections dialled, %d requests audited", ok.Load(), line, dials.Load(), rep.Requests)
			if !rep.OK() {
				for _, v := range rep.Violations {
					for _, cn := range web.Connections() {
						if cn.Host == v.Host {
							t.Logf("%s conn %d: opened %v closed %v, %d requests", cn.Host, cn.ID, cn.Opened.Format("05.000000"), cn.Closed.Format("05.000000"), cn.Requests)
						}
					}
				}
				t.Fatal(rep)
			}
			if rep.Requests < hosts {
				t.Fatalf("only %d requests reached the web", rep.Requests)
			}
		})
	}
}
