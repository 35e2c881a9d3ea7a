package fetch

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/internal/netguard"
	"github.com/politefetch/politefetch/provenance"
)

// Resolver looks up a host's addresses; network is "ip", "ip4" or "ip6".
// *net.Resolver satisfies it (and so does a politetest web).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// dialFunc connects to an "ip:port" address. nil means a net.Dialer.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// baseConfig is what the base transport is built from.
type baseConfig struct {
	resolver  Resolver
	dial      dialFunc
	roots     *x509.CertPool
	allow     []netip.Prefix
	dnsTTL    time.Duration
	inFlight  int
	firstByte time.Duration
	allowHTTP bool
	clock     clock.Clock   // nil: real time
	idle      time.Duration // IdleConnTimeout
	maxIdle   int           // MaxIdleConns; 0: maxIdleConns
}

// newBase returns the base transport of the chain: no proxy, no compression of
// its own, at most inFlight connections per host, idle ones closed after
// c.idle, every address checked at connect time by the netguard dialer, TLS
// verified against roots (nil: the system's), HTTP/1.1.
func newBase(c baseConfig) *http.Transport {
	var res netguard.Resolver = &netguard.DNSCache{TTL: c.dnsTTL}
	if c.resolver != nil {
		res = &netguard.DNSCache{Resolver: c.resolver, TTL: c.dnsTTL}
	}
	clk := clock.Or(c.clock)
	slots := &connSlots{max: max(c.inFlight, 1)}
	d := &netguard.Dialer{
		Guard:    &netguard.Guard{Allow: c.allow},
		Resolver: timedResolver{r: res, clock: clk},
		Dial:     c.dial,
		Timeout:  15 * time.Second,
	}
	t := &http.Transport{
		Proxy:                  nil, // never from the environment
		DisableCompression:     true,
		MaxConnsPerHost:        c.inFlight,
		MaxIdleConns:           cmp.Or(c.maxIdle, maxIdleConns),
		MaxIdleConnsPerHost:    c.inFlight,
		IdleConnTimeout:        c.idle,
		ResponseHeaderTimeout:  c.firstByte,
		MaxResponseHeaderBytes: 64 << 10,
		// Each connection keeps a read and a write buffer for its life,
		// an idle one too: a request fits in 1 KiB, and longer lines pass
		// through in pieces (net/http's defaults are 4 KiB each).
		ReadBufferSize:      2 << 10,
		WriteBufferSize:     1 << 10,
		TLSHandshakeTimeout: 15 * time.Second,
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			// The dial is load on the host for the turn of the request it
			// is for, which net/http may have cancelled already: the
			// turn is held until the dial is done (see turn).
			t := turnFrom(ctx)
			if t != nil {
				if t.hasSent() {
					return nil, ErrNotResent // a resend by net/http (see turn)
				}
				t.dialBegun()
				defer t.dialEnded()
			}
			conn, err := dialTLS(ctx, clk, d, slots, c.roots, network, addr)
			return dialFor(t, conn, err)
		},
	}
	if c.allowHTTP {
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			t := turnFrom(ctx)
			if t != nil {
				if t.hasSent() {
					return nil, ErrNotResent
				}
				t.dialBegun()
				defer t.dialEnded()
			}
			conn, err := dialPlain(ctx, clk, d, slots, network, addr)
			return dialFor(t, conn, err)
		}
	} else {
		t.DialContext = func(context.Context, string, string) (net.Conn, error) {
			return nil, ErrNotHTTPS
		}
	}
	return t
}

// dialFor returns the connection dialled for t (nil: no turn), unless t's
// request went out on another connection meanwhile: then it is closed
// unused, since the next request on it would count from its opening, too
// soon after t's.
func dialFor(t *turn, c *tracedConn, err error) (net.Conn, error) {
	if err != nil {
		return nil, err
	}
	if t != nil && !t.maySendOn(c) {
		c.Close()
		return nil, ErrNotResent
	}
	return c, nil
}

// tracedConn is a connection that remembers how it was made: the address it
// reached, when its TLS handshake completed, and how long each step took.
type tracedConn struct {
	net.Conn
	tls         *tls.Conn // nil for plain http
	ip          netip.Addr
	handshakeAt time.Time
	dns, tcp    time.Duration
	handshake   time.Duration
	state       *tls.ConnectionState // after the handshake; nil for plain http
	hop         provenance.Hop       // the connection's part of every hop it carries
	slots       *connSlots           // given back at Close
	addr        string
	closed      atomic.Bool
	// pending is the pacer's turn of the request about to be written on
	// this connection: its first Write reports to the turn that the
	// request's bytes were handed to the kernel (net/http's WroteRequest
	// hook comes before the transport flushes them).
	pending atomic.Pointer[turn]
	// reading is the turn whose request is being or was just written on
	// this connection: the connection's next read of any byte is its
	// answer's first (one request at a time per connection, HTTP/1.1).
	reading atomic.Pointer[turn]
	head    headScan // the head of the answer being read (read side only)
	headOf  *turn    // the turn whose answer head is (read side only)
	raw     *eofConn // under a TLS connection; nil for plain http
}

// Read reads from the connection, and tells the turn whose answer this is
// that its first byte has come. Two answers are not what they seem, and
// fail here:
//
//   - an answer whose head carries both Content-Length and
//     Transfer-Encoding (RFC 9112 §6.3: a client ought to treat it as an
//     error; net/http would let chunked win and drop the length), refused
//     with errFraming, so nothing of it is read or deposited;
//   - a TLS stream that ends with the TCP connection closed but no
//     close_notify (crypto/tls reports both as io.EOF): the peer's data may
//     have been cut, so the end is io.ErrUnexpectedEOF. A body delimited by
//     the connection's close (neither Content-Length nor chunked) is then
//     truncated, never complete; a framed body is not read that far.
func (c *tracedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		if t := c.reading.Load(); t != nil && c.reading.CompareAndSwap(t, nil) {
			t.answered()
			c.head = headScan{on: true}
			c.headOf = t
		}
		if c.head.on && c.head.feed(p[:n]) {
			if c.headOf != nil {
				c.headOf.refuse(errFraming) // whatever net/http then makes of the read error
			}
			return 0, errFraming
		}
	}
	if err == io.EOF && c.raw != nil && c.raw.eof.Load() && c.headOf != nil && c.reading.Load() == nil {
		// An answer had begun (a connection closed before any answer
		// stays io.EOF: net/http's "no answer", see ErrNoAnswer).
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// errFraming refuses an answer that declares both a Content-Length and a
// Transfer-Encoding.
var errFraming = errors.New("fetch: answer declares both Content-Length and Transfer-Encoding (RFC 9112 §6.3), refused")

// eofConn is the TCP connection under a TLS one: it remembers whether the
// peer closed it (a read met io.EOF), which crypto/tls does not tell apart
// from a close_notify.
type eofConn struct {
	net.Conn
	eof atomic.Bool
}

func (c *eofConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err == io.EOF {
		c.eof.Store(true)
	}
	return n, err
}

// headScan watches the head of an answer as it is read (the reads of one
// connection come from one goroutine), for its framing headers. A 1xx head
// is followed by the final one, which is watched in turn.
type headScan struct {
	on      bool
	line    int      // the current line's length so far, CRs left out
	pre     [18]byte // its first bytes, lower case
	n       int      // lines of the current head so far
	info    bool     // the current head is a 1xx
	length  bool     // Content-Length seen
	chunked bool     // Transfer-Encoding seen
}

// feed scans p, and reports whether the head declares both framings.
func (h *headScan) feed(p []byte) bool {
	for _, b := range p {
		switch b {
		case '\r':
			continue
		case '\n':
			if h.endLine() {
				return true
			}
			if !h.on {
				return false
			}
			continue
		}
		if h.line < len(h.pre) {
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			h.pre[h.line] = b
		}
		h.line++
	}
	return false
}

func (h *headScan) endLine() bool {
	line := h.pre[:min(h.line, len(h.pre))]
	switch {
	case h.line == 0: // the head's end
		if h.info {
			*h = headScan{on: true}
			return false
		}
		h.on = false
		return false
	case h.n == 0: // the status line: "http/1.1 103 …"
		h.info = len(line) > 9 && line[9] == '1'
	case bytes.HasPrefix(line, []byte("content-length:")):
		h.length = true
	case bytes.HasPrefix(line, []byte("transfer-encoding:")):
		h.chunked = true
	}
	h.n++
	h.line = 0
	return h.length && h.chunked
}

// Write writes p, then tells the pending request's turn that it was written
// (see turn.beginWrite and turn.endWrite). A turn whose request already went
// out on another connection is refused: that write would be net/http
// resending the request; so is a turn already over.
func (c *tracedConn) Write(p []byte) (int, error) {
	t := c.pending.Swap(nil)
	if t == nil {
		return c.Conn.Write(p)
	}
	if err := t.beginWrite(c); err != nil {
		return 0, err
	}
	c.reading.Store(t) // before the bytes go: the answer may come before Write returns
	n, err := c.Conn.Write(p)
	if n == 0 {
		c.reading.CompareAndSwap(t, nil)
	}
	t.endWrite(c, n > 0)
	return n, err
}

type dnsTimeKey struct{}

// timedResolver adds each lookup's duration to the *time.Duration in the context.
type timedResolver struct {
	r     netguard.Resolver
	clock clock.Clock
}

func (t timedResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	start := t.clock.Now()
	a, err := t.r.LookupNetIP(ctx, network, host)
	if p, ok := ctx.Value(dnsTimeKey{}).(*time.Duration); ok {
		*p += t.clock.Now().Sub(start)
	}
	return a, err
}

func dialPlain(ctx context.Context, clk clock.Clock, d *netguard.Dialer, slots *connSlots, network, addr string) (*tracedConn, error) {
	if err := slots.acquire(ctx, addr); err != nil {
		return nil, err
	}
	var dns time.Duration
	start := clk.Now()
	raw, err := d.DialContext(context.WithValue(ctx, dnsTimeKey{}, &dns), network, addr)
	if err != nil {
		slots.release(addr)
		return nil, err
	}
	tc := &tracedConn{Conn: raw, dns: dns, tcp: clk.Now().Sub(start) - dns, slots: slots, addr: addr}
	if ap, err := netip.ParseAddrPort(raw.RemoteAddr().String()); err == nil {
		tc.ip = ap.Addr().Unmap()
	}
	return tc, nil
}

// goodbyeWait bounds how long Close waits for a write in flight to end before
// it says goodbye.
const goodbyeWait = 250 * time.Millisecond

// Close says goodbye (TLS close_notify), closes the connection, then gives its
// slot back: only once the old connection is closed may the next one to its
// host be dialled. crypto/tls skips the goodbye when a write is in flight (as
// when net/http closes the connection of a cancelled request); Close waits
// for that write instead, goodbyeWait at most, so that the server always
// learns of the close from our goodbye, not from a bare FIN it may read late.
func (c *tracedConn) Close() error {
	if c.tls != nil && !c.closed.Load() {
		_ = c.tls.SetWriteDeadline(time.Now().Add(goodbyeWait))
		_ = c.tls.CloseWrite()
	}
	err := c.Conn.Close()
	if c.slots != nil && c.closed.CompareAndSwap(false, true) {
		c.slots.release(c.addr)
	}
	return err
}

// connSlots counts, per address, the connections dialled and not yet closed, and
// makes a dial wait while max of them are (one per host, as the policy and the
// auditor's connection rule ask). Go's transport frees a host's connection slot before it
// closes the old connection, so without this the next connection could be opened
// while the old one is still open. A host's entry goes once its last connection
// is closed.
type connSlots struct {
	max int
	mu  sync.Mutex
	m   map[string]*hostConns
}

type hostConns struct {
	n     int
	freed chan struct{} // closed (and dropped) when a connection closes; nil: nobody waits
}

func (s *connSlots) acquire(ctx context.Context, addr string) error {
	for {
		s.mu.Lock()
		if s.m == nil {
			s.m = make(map[string]*hostConns)
		}
		h := s.m[addr]
		if h == nil {
			h = &hostConns{}
			s.m[addr] = h
		}
		if h.n < s.max {
			h.n++
			s.mu.Unlock()
			return nil
		}
		if h.freed == nil {
			h.freed = make(chan struct{})
		}
		freed := h.freed
		s.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *connSlots) release(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.m[addr]
	if h == nil {
		return
	}
	h.n--
	if h.freed != nil {
		close(h.freed)
		h.freed = nil
	}
	if h.n <= 0 {
		delete(s.m, addr)
		if len(s.m) == 0 {
			s.m = nil // a map keeps the room it grew to: let it go
		}
	}
}

func dialTLS(ctx context.Context, clk clock.Clock, d *netguard.Dialer, slots *connSlots, roots *x509.CertPool, network, addr string) (*tracedConn, error) {
	tc, err := dialPlain(ctx, clk, d, slots, network, addr)
	if err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		tc.Close()
		return nil, err
	}
	cfg := &tls.Config{
		ServerName: host,
		RootCAs:    roots,
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
	}
	tc.raw = &eofConn{Conn: tc.Conn}
	conn := tls.Client(tc.raw, cfg)
	hctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	start := clk.Now()
	if err := conn.HandshakeContext(hctx); err != nil {
		tc.Conn = conn
		tc.Close()
		return nil, err
	}
	end := clk.Now()
	tc.handshake = end.Sub(start)
	tc.handshakeAt = end.UTC()
	tc.Conn, tc.tls = conn, conn
	cs := conn.ConnectionState()
	tc.state = &cs
	tc.hop = provenance.HopFromTLS(nil, 0, "", tc.ip, tc.state, tc.handshakeAt)
	return tc, nil
}

// hopTrace is what one request's trace learns. Its hooks run on the
// transport's goroutines (the dial, the write loop, the read loop), which may
// still call them after RoundTrip has returned early on cancellation, so every
// field they write is read under mu.
type hopTrace struct {
	call *callInfo
	turn *turn // the pacer's turn of this hop, nil without a pacer above
	ct   httptrace.ClientTrace

	mu           sync.Mutex
	conn         *tracedConn
	reused       bool
	wrote, first time.Time
}

// hopRecorder is the bottom layer of a Client's chain: it records every request
// that reached the wire as a provenance.Hop with its timings, fills resp.TLS, and
// turns a refused address into a *RefusedError with Reason BlockedAddr.
type hopRecorder struct {
	next  http.RoundTripper
	clock clock.Clock // nil: real time
}

// RoundTrip sends req as one hop, traced (see hopTraceFor), and returns the
// answer with its hop recorded (see finish), or the error as send returns it.
func (h *hopRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	clk := clock.Or(h.clock)
	call := callFrom(ctx)
	ht := hopTraceFor(call, clk)
	resp, err := h.send(req, call, ht)
	if err != nil {
		return nil, err
	}
	ht.finish(ctx, req, resp)
	return resp, nil
}

// hopTraceFor returns the trace of the hop call is about to make (call nil:
// a request outside any Get): the call's first trace, else a new one, with
// the call's turn and the hooks it needs. Under a turn, the connection (ours)
// reports the write and the answer's first byte to the turn itself (see
// tracedConn), so GotConn, which names the connection, is the one hook set;
// without a turn, WroteRequest and GotFirstResponseByte note their times on
// clk.
func hopTraceFor(call *callInfo, clk clock.Clock) *hopTrace {
	var ht *hopTrace
	if call != nil {
		ht = call.firstTrace()
	}
	if ht == nil {
		ht = new(hopTrace)
	}
	ht.call = call
	if call != nil {
		ht.turn = call.turn // this hop's: a later hop of the Get gets its own
	}
	gotConn := func(i httptrace.GotConnInfo) {
		conn, _ := i.Conn.(*tracedConn)
		ht.mu.Lock()
		ht.conn, ht.reused = conn, i.Reused
		ht.mu.Unlock()
		if ht.turn != nil {
			ht.turn.gotConn()
			if conn != nil {
				conn.pending.Store(ht.turn) // told at the conn's next Write
			}
		}
	}
	ht.ct = httptrace.ClientTrace{GotConn: gotConn}
	if ht.turn == nil {
		ht.ct.WroteRequest = func(httptrace.WroteRequestInfo) {
			now := clk.Now()
			ht.mu.Lock()
			ht.wrote = now
			ht.mu.Unlock()
		}
		ht.ct.GotFirstResponseByte = func() {
			now := clk.Now()
			ht.mu.Lock()
			ht.first = now
			ht.mu.Unlock()
		}
	}
	return ht
}

// send passes req down the chain with ht's hooks, and returns the response,
// or the error as the caller is to see it: the turn's refusal of the answer
// in place of what net/http made of it, and a refused address as a
// *RefusedError with Reason BlockedAddr (wrapping the dialer's error).
func (h *hopRecorder) send(req *http.Request, call *callInfo, ht *hopTrace) (*http.Response, error) {
	var resp *http.Response
	var err error
	if call != nil && call.callerTrace == nil {
		// The call's context answers for the hop's trace (see traceKey):
		// no context, no request copy. A caller's own trace is composed
		// with the hop's by httptrace instead.
		call.trace.Store(&ht.ct)
		resp, err = h.next.RoundTrip(req)
	} else {
		resp, err = h.next.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), &ht.ct)))
	}
	if err != nil && ht.turn != nil {
		if r := ht.turn.refused(); r != nil {
			// The connection refused the answer (see tracedConn.Read);
			// net/http may have tried to send the request again, which
			// the turn refused (ErrNotResent): the answer's refusal is
			// the cause.
			err = r
		}
	}
	if err != nil {
		var be *netguard.BlockedError
		if errors.As(err, &be) {
			host := req.URL.Hostname()
			return nil, &RefusedError{Host: host, URL: req.URL.Redacted(), Reason: BlockedAddr, Err: err}
		}
		return nil, err
	}
	return resp, nil
}

// finish completes the hop of req once its answer resp has come: it fills
// resp.TLS from the hop's connection when the transport left it nil, and adds
// the hop, with its timings (those of the connection's making only on a new
// connection), to ctx's recorder, if there is one. It returns nothing.
func (ht *hopTrace) finish(ctx context.Context, req *http.Request, resp *http.Response) {
	ht.mu.Lock()
	conn, reused, wrote, first := ht.conn, ht.reused, ht.wrote, ht.first
	ht.mu.Unlock()
	if ht.turn != nil {
		wrote, first = ht.turn.times()
	}
	if conn != nil && resp.TLS == nil {
		resp.TLS = conn.state // shared by the responses of one connection: read only
	}
	rec := recorderFrom(ctx)
	if rec == nil {
		return
	}
	var t Timings
	var hop provenance.Hop
	if conn != nil {
		hop = conn.hop // its Chain is the connection's, shared read-only (as resp.TLS is)
		if !reused {
			t.DNS, t.Connect, t.TLS = conn.dns, conn.tcp, conn.handshake
		}
	}
	if c := ht.call; c != nil && req.URL == c.url {
		hop.URL = c.urlString
	} else {
		hop.URL = req.URL.String()
	}
	hop.Status, hop.Location = resp.StatusCode, resp.Header.Get("Location")
	if !wrote.IsZero() && !first.IsZero() {
		t.FirstByte = first.Sub(wrote)
	}
	var cred string
	if ht.call != nil {
		cred = ht.call.credHeader
	}
	rec.addHop(hop, t, req, cred)
}

// Bounds of the base transport's idle connections (see idleConnTimeout).
const (
	// minIdleConn and maxIdleConn bound how long an idle connection is kept.
	minIdleConn = 5 * time.Second
	maxIdleConn = 90 * time.Second
	// maxIdleConns is the most idle connections kept at once, across hosts
	// (a file descriptor each): past it, the one idle longest is closed, and
	// its host's next request makes a new one.
	maxIdleConns = 4096
)

// idleConnTimeout is how long the base transport keeps a connection that has
// gone idle: three of the policy's longest intervals, within [minIdleConn,
// maxIdleConn]. A host being crawled is asked again within an interval or
// two and finds its connection open (one TLS handshake per host, not per
// request); a host whose crawl is over, or that is read less often (a
// longer Crawl-delay, a feed polled every few minutes), has its connection
// closed and costs no more than its small records: an idle TLS connection
// holds tens of kilobytes and two goroutines.
func idleConnTimeout(p Policy) time.Duration {
	return min(max(3*max(p.Interval, p.IntervalMax), minIdleConn), maxIdleConn)
}
