package politetest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// wireClient is one raw HTTP/1.1 connection over TLS to a site of the web,
// for tests that must know exactly when each request's bytes were written
// (and may pipeline, which net/http's Transport never does).
type wireClient struct {
	t    *testing.T
	host string
	conn *tls.Conn
	br   *bufio.Reader
}

func dialWire(t *testing.T, w *Web, host string) *wireClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := w.DialContext(ctx, "tcp", host+":443")
	if err != nil {
		t.Fatalf("dial %s: %v", host, err)
	}
	conn := tls.Client(raw, &tls.Config{RootCAs: w.RootCAs(), ServerName: host, NextProtos: []string{"http/1.1"}})
	t.Cleanup(func() { conn.Close() })
	if err := conn.HandshakeContext(ctx); err != nil {
		t.Fatalf("handshake with %s: %v", host, err)
	}
	conn.SetDeadline(time.Now().Add(30 * time.Second)) // no test hangs on a lost answer
	return &wireClient{t: t, host: host, conn: conn, br: bufio.NewReader(conn)}
}

// send writes a polite GET for path in one write and returns the wall
// times just before and just after the write.
func (c *wireClient) send(path string) (before, after time.Time) {
	c.t.Helper()
	req := "GET " + path + " HTTP/1.1\r\nHost: " + c.host + "\r\nUser-Agent: " + botUA + "\r\nAccept: */*\r\n\r\n"
	before = time.Now()
	_, err := io.WriteString(c.conn, req)
	after = time.Now()
	if err != nil {
		c.t.Fatalf("write GET %s: %v", path, err)
	}
	return before, after
}

// read reads the next answer in full and returns it.
func (c *wireClient) read() *http.Response {
	c.t.Helper()
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.t.Fatalf("read answer: %v", err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		c.t.Fatalf("read body: %v", err)
	}
	return resp
}

// holding answers body once release is closed (or the client leaves),
// after sending on entered as it begins: a web that is late to read
// whatever the client pipelines behind it.
func holding(entered chan<- struct{}, release <-chan struct{}, body string) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(rw, body)
	})
}

func answering(body string) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { io.WriteString(rw, body) })
}

func waitEntered(t *testing.T, entered <-chan struct{}) {
	t.Helper()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the holding handler never began")
	}
}

// paceUntil is the client's own pacing: it waits until at.
func paceUntil(at time.Time) {
	if d := time.Until(at); d > 0 {
		t := time.NewTimer(d)
		<-t.C
	}
}

func findRequest(t *testing.T, reqs []Request, path string) Request {
	t.Helper()
	for _, r := range reqs {
		if r.Path == path {
			return r
		}
	}
	t.Fatalf("no request for %s in %d recorded", path, len(reqs))
	return Request{}
}

// A request pipelined behind one the web is busy with waits in the socket;
// its Start is still when the client wrote it (the kernel's receive time),
// while Arrived shows how late the web was.
func TestStartIsKernelReceiveTime(t *testing.T) {
	if !ExactStarts() {
		t.Skip("this machine does not stamp reads with the kernel's receive time (Linux only, and not every sandbox)")
	}
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("late.example")
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	s.Handle("/hold", holding(entered, release, "held"))
	s.Handle("/next", answering("next"))

	c := dialWire(t, w, "late.example")
	c.send("/hold")
	waitEntered(t, entered)
	// The web is busy with /hold until this fires; /next waits unread.
	time.AfterFunc(100*time.Millisecond, func() { close(release) })
	before, after := c.send("/next")
	if r := c.read(); r.StatusCode != 200 {
		t.Fatalf("/hold answered %d", r.StatusCode)
	}
	if r := c.read(); r.StatusCode != 200 {
		t.Fatalf("/next answered %d", r.StatusCode)
	}

	reqs := w.Requests()
	hold, next := findRequest(t, reqs, "/hold"), findRequest(t, reqs, "/next")
	if hold.Conn != next.Conn {
		t.Fatalf("/hold on connection %d, /next on %d: want one", hold.Conn, next.Conn)
	}
	if conns := w.Connections(); len(conns) != 1 || hold.Start.After(conns[0].Opened) {
		t.Errorf("/hold starts %v, want no later than its connection's accept (%+v)", hold.Start, conns)
	}
	if next.Start.Before(before.Add(-time.Millisecond)) || next.Start.After(after.Add(5*time.Millisecond)) {
		t.Errorf("/next starts %v, want the write: %v to %v (%v after it began)",
			next.Start, before, after, next.Start.Sub(before))
	}
	if late := next.Arrived.Sub(next.Start); late < 50*time.Millisecond {
		t.Errorf("/next arrived %v after it started, want the web late by at least 50ms", late)
	}
}

// A client that writes its requests a full interval apart passes the audit
// with a 2 ms slack even when the web handles one of them late (right before
// the next); one that writes them 10 ms apart is still caught.
func TestAuditIntervalWhileServerStalls(t *testing.T) {
	if !ExactStarts() {
		t.Skip("this machine does not stamp reads with the kernel's receive time (Linux only, and not every sandbox)")
	}
	t.Parallel()
	const interval = 100 * time.Millisecond
	policy := Policy{Interval: interval, Slack: 2 * time.Millisecond, UserAgent: testPolicy().UserAgent}
	for _, tc := range []struct {
		name string
		rude bool
	}{{"polite", false}, {"rude", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := NewWeb(t)
			s := w.Site("stall.example")
			entered := make(chan struct{}, 1)
			release := make(chan struct{})
			s.Handle("/robots.txt", holding(entered, release, "User-agent: *\nAllow: /\n"))
			s.Handle("/a", answering("a"))
			s.Handle("/b", answering("b"))

			// The client paces by its own send times (start to start).
			c := dialWire(t, w, "stall.example")
			robotsSent, _ := c.send("/robots.txt")
			waitEntered(t, entered)
			paceUntil(robotsSent.Add(interval))
			aBefore, aAfter := c.send("/a") // waits unread while robots.txt is held
			time.AfterFunc(interval*3/4, func() { close(release) })
			var bBefore time.Time
			if tc.rude {
				paceUntil(aAfter.Add(10 * time.Millisecond))
				bBefore, _ = c.send("/b")
				c.read()
				c.read()
			} else {
				c.read()
				c.read() // /a is handled 75 ms late: old stamps put /b right after it
				paceUntil(aAfter.Add(interval))
				bBefore, _ = c.send("/b")
			}
			c.read()

			reqs := w.Requests()
			a, b := findRequest(t, reqs, "/a"), findRequest(t, reqs, "/b")
			if late := a.Arrived.Sub(a.Start); late < 50*time.Millisecond {
				t.Errorf("/a arrived %v after it started, want the web late by at least 50ms", late)
			}
			t.Logf("client wrote /a and /b %v apart; starts %v apart; handling began %v apart",
				bBefore.Sub(aBefore), b.Start.Sub(a.Start), b.Arrived.Sub(a.Arrived))
			rep := w.Audit(policy)
			if !tc.rude {
				if !rep.OK() {
					t.Errorf("polite client, stalled web:\n%s", rep)
				}
				return
			}
			if rep.Count(RuleInterval) != 1 || len(rep.Violations) != 1 || rep.Violations[0].Request.Path != "/b" {
				t.Errorf("rude client (wrote /b %v after /a): want one interval violation by /b:\n%s", bBefore.Sub(aBefore), rep)
			}
		})
	}
}

// The connections the web accepts read like any *net.TCPConn: data, a
// zero-length read, deadlines (Timeout, not sticky), WriteTo, EOF, Close.
// On Linux they also stamp what they read, without allocating (so the test
// is not parallel: AllocsPerRun).
func TestStampedConnReadsLikeTCPConn(t *testing.T) {
	cli, srv, err := stampedPair()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	defer srv.Close()
	stamper, stamped := srv.(receiveStamper)
	if runtime.GOOS == "linux" && !stamped {
		t.Fatalf("accepted %T, want a stamped connection on Linux", srv)
	}
	buf := make([]byte, 64)
	readErr := func(what string, err error, want error) {
		t.Helper()
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "read" || oe.Net != "tcp" ||
			oe.Source.String() != srv.LocalAddr().String() || oe.Addr.String() != srv.RemoteAddr().String() || !errors.Is(err, want) {
			t.Errorf("%s: %#v (%v), want a read *net.OpError with %v", what, err, err, want)
		}
	}

	// The kernel starts timestamping a moment after the first socket on
	// the system asks for it, so write until a read comes stamped.
	var at, before time.Time
	ok := false
	for give := time.Now().Add(5 * time.Second); !ok && time.Now().Before(give); {
		before = time.Now()
		cli.Write([]byte("hello"))
		if n, err := srv.Read(buf); n != 5 || err != nil || string(buf[:n]) != "hello" {
			t.Fatalf("Read = %d %q, %v", n, buf[:n], err)
		}
		if !stamped {
			break
		}
		at, ok = stamper.markRequest()
	}
	if stamped {
		if !ok || at.Before(before.Add(-time.Millisecond)) || at.After(time.Now()) {
			t.Errorf("stamp %v, %v: want between %v and now", at, ok, before)
		}
		if again, ok := stamper.markRequest(); !ok || !again.Equal(at) {
			t.Errorf("nothing read since the mark: stamp %v, %v, want the latest read's %v", again, ok, at)
		}
	}
	if n, err := srv.Read(buf[:0]); n != 0 || err != nil {
		t.Errorf("zero-length Read = %d, %v", n, err)
	}

	srv.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err = srv.Read(buf)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("Read past the deadline: %v, want a timeout", err)
	}
	readErr("deadline", err, os.ErrDeadlineExceeded)
	srv.SetReadDeadline(time.Time{})

	if stamped {
		// Reading allocates nothing.
		one := []byte{'x'}
		allocs := testing.AllocsPerRun(50, func() {
			cli.Write(one)
			if n, err := srv.Read(buf); n != 1 || err != nil {
				t.Fatalf("Read = %d, %v", n, err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v allocations per write and read, want 0", allocs)
		}
	}

	cli.Write([]byte("tail"))
	cli.(*net.TCPConn).CloseWrite()
	var sink bytes.Buffer
	if n, err := srv.(io.WriterTo).WriteTo(&sink); n != 4 || err != nil || sink.String() != "tail" {
		t.Errorf("WriteTo = %d %q, %v", n, sink.String(), err)
	}
	if n, err := srv.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("Read after the peer's CloseWrite = %d, %v; want io.EOF", n, err)
	}
	// The write side still works, and closes on its own.
	srv.Write([]byte("bye"))
	srv.(interface{ CloseWrite() error }).CloseWrite()
	if got, err := io.ReadAll(cli); string(got) != "bye" || err != nil {
		t.Errorf("client read %q, %v", got, err)
	}

	srv.Close()
	_, err = srv.Read(buf)
	readErr("closed", err, net.ErrClosed)
}

// A reset from the peer comes back as net.Conn's would, and the web's own
// reset (SetLinger through the wrapper) still sends an RST.
func TestStampedConnReset(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the RST errno is checked on Linux only")
	}
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("reset.example")
	s.Misbehave("/gone", Behaviour{Kind: Reset})
	// Over plain HTTP, where the client reads the RST itself.
	plain, err := w.DialContext(context.Background(), "tcp", "reset.example:80")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	plain.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(plain, "GET /gone HTTP/1.1\r\nHost: reset.example\r\nUser-Agent: "+botUA+"\r\n\r\n")
	_, err = http.ReadResponse(bufio.NewReader(plain), nil)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("after the web's reset the client read %v, want ECONNRESET", err)
	}

	cli, srv, err := stampedPair()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli.(*net.TCPConn).SetLinger(0)
	cli.Close()
	_, err = srv.Read(make([]byte, 8))
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("Read after the peer's reset: %#v (%v), want a read *net.OpError with ECONNRESET", err, err)
	}
}

// fixedStamper is a connection whose data all arrived at one time.
type fixedStamper struct{ at time.Time }

func (f fixedStamper) markRequest() (time.Time, bool) { return f.at, !f.at.IsZero() }

// begin's rules for Start, with made-up receive times: the first request on
// a connection counts from its opening (the accept, or the first bytes if
// earlier), a later one from its bytes (never after it is handled), and
// without a stamp (as off Linux) from when it is handled.
func TestBeginStartRules(t *testing.T) {
	t.Parallel()
	w := &Web{connByNC: map[net.Conn]*Conn{}}
	opened := time.Now().Add(-time.Second)
	wall := func(d time.Duration) time.Time { return opened.Add(d).Round(0) } // as the kernel gives: no monotonic reading
	for _, tc := range []struct {
		name     string
		requests int       // already carried by the connection
		recv     time.Time // zero: no stamp
		want     func(arrived time.Time) time.Time
	}{
		{"first, accepted on time", 0, wall(time.Millisecond), func(time.Time) time.Time { return opened }},
		{"first, accepted late", 0, wall(-20 * time.Millisecond), func(time.Time) time.Time { return wall(-20 * time.Millisecond) }},
		{"first, no stamp", 0, time.Time{}, func(time.Time) time.Time { return opened }},
		{"later, stamped", 3, wall(500 * time.Millisecond), func(time.Time) time.Time { return wall(500 * time.Millisecond) }},
		{"later, stamp after handling", 3, wall(time.Hour), func(a time.Time) time.Time { return a }},
		{"later, no stamp", 3, time.Time{}, func(a time.Time) time.Time { return a }},
	} {
		c := &Conn{ID: 1, Opened: opened, Requests: tc.requests}
		ctx := context.WithValue(context.Background(), connKey{}, c)
		if !tc.recv.IsZero() {
			ctx = context.WithValue(ctx, stampKey{}, fixedStamper{tc.recv})
		}
		r, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://a.example/x", nil)
		rec := w.begin(r)
		if want := tc.want(rec.Arrived); !rec.Start.Equal(want) {
			t.Errorf("%s: Start %v, want %v (arrived %v)", tc.name, rec.Start, want, rec.Arrived)
		}
	}
}

func (f fixedStamper) goodbyeAt() (time.Time, bool) { return time.Time{}, false }

// TestConnClosedAtTheClientsGoodbye: a connection the client closes is
// recorded closed when its goodbye (TLS close_notify) reached the kernel, even
// if the web's goroutine gets to the close much later; so a client that closes
// one connection and then opens the next is not taken for one holding two
// (the connections rule). The web is made late by reading the goodbye only
// after the test releases the stamped connection's reader.
func TestConnClosedAtTheClientsGoodbye(t *testing.T) {
	if !ExactStarts() {
		t.Skip("this machine does not stamp reads with the kernel's receive time (Linux only, and not every sandbox)")
	}
	cli, srv, err := stampedPair()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	defer srv.Close()
	stamper := srv.(receiveStamper)
	buf := make([]byte, 64)
	// One request, read and marked (until the kernel stamps, see above).
	for give := time.Now().Add(5 * time.Second); time.Now().Before(give); {
		cli.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
		srv.Read(buf)
		if _, ok := stamper.markRequest(); ok {
			break
		}
	}
	if _, ok := stamper.goodbyeAt(); ok {
		t.Fatal("goodbye reported before the client said anything after its request")
	}
	// The client says goodbye and closes; the web reads it 100 ms later.
	before := time.Now()
	cli.Write([]byte("close_notify"))
	after := time.Now()
	cli.Close()
	late := make(chan struct{})
	time.AfterFunc(100*time.Millisecond, func() { close(late) })
	<-late
	lateRead := time.Now()
	srv.Read(buf)
	at, ok := stamper.goodbyeAt()
	if !ok || at.Before(before.Add(-time.Millisecond)) || at.After(after.Add(5*time.Millisecond)) {
		t.Fatalf("goodbye at %v, %v: want between the client's write (%v .. %v), not the late read (%v)",
			at.Sub(before), ok, 0, after.Sub(before), lateRead.Sub(before))
	}
}
