package politetest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// Web is a simulated web of publishers: one loopback HTTPS server (and a
// plain-HTTP twin for http:// URLs) answering for any number of virtual sites,
// with a throwaway certificate authority and a log of every request for the
// auditor.
//
// Make one with [NewWeb] in a test or [Start] in a program. The zero value is
// not usable. All methods are safe for concurrent use. The caller owns the Web
// and must Close it ([NewWeb] registers Close with the test's Cleanup).
type Web struct {
	ca       *authority
	tlsLn    net.Listener
	plainLn  net.Listener
	tlsSrv   *http.Server
	plainSrv *http.Server
	tlsAddr  string // "127.0.0.1:port"
	plain    string // "127.0.0.1:port"
	ip       netip.Addr

	done chan struct{} // closed by Close: every waiting handler returns

	mu         sync.Mutex
	closed     bool
	sites      map[string]*Site
	transports []*http.Transport
	active     sync.WaitGroup // running handlers; Add only while !closed, under mu

	logMu    sync.Mutex
	reqs     []*Request
	conns    []*Conn
	connSeq  int
	connByNC map[net.Conn]*Conn // raw net.Conn -> its record, while open
	open     map[string][]*Conn // host -> its connections' records, while open

	images imageSet
	bomb   bombSet
}

// NewWeb starts a Web for a test and registers its Close with tb.Cleanup.
// It fails the test if the server cannot start.
func NewWeb(tb testing.TB) *Web {
	tb.Helper()
	w, err := Start()
	if err != nil {
		tb.Fatalf("politetest: %v", err)
	}
	tb.Cleanup(w.Close)
	return w
}

// Start starts a Web for a program (such as a demo). The caller must call
// Close when done.
func Start() (*Web, error) {
	ca, err := newAuthority()
	if err != nil {
		return nil, err
	}
	w := &Web{
		ca:       ca,
		done:     make(chan struct{}),
		sites:    map[string]*Site{},
		connByNC: map[net.Conn]*Conn{},
	}
	rawTLS, err := listenLoopback()
	if err != nil {
		return nil, err
	}
	rawPlain, err := listenLoopback()
	if err != nil {
		rawTLS.Close()
		return nil, err
	}
	w.tlsAddr = rawTLS.Addr().String()
	w.plain = rawPlain.Addr().String()
	ap, err := netip.ParseAddrPort(w.tlsAddr)
	if err != nil {
		rawTLS.Close()
		rawPlain.Close()
		return nil, fmt.Errorf("politetest: listener address: %w", err)
	}
	w.ip = ap.Addr()

	tlsConf := &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"http/1.1"},
		GetCertificate: w.getCertificate,
	}
	protos := new(http.Protocols)
	protos.SetHTTP1(true)
	quiet := log.New(io.Discard, "", 0)
	w.tlsSrv = &http.Server{
		Handler:           w,
		TLSConfig:         tlsConf,
		Protocols:         protos,
		ConnContext:       w.connContext,
		ConnState:         w.connState,
		ErrorLog:          quiet,
		ReadHeaderTimeout: 30 * time.Second,
	}
	w.plainSrv = &http.Server{
		Handler:           w,
		Protocols:         protos,
		ConnContext:       w.connContext,
		ConnState:         w.connState,
		ErrorLog:          quiet,
		ReadHeaderTimeout: 30 * time.Second,
	}
	// Both servers' connections carry the kernel's receive times where
	// the system gives them (see stampListen).
	w.tlsLn = tls.NewListener(stampListen(rawTLS), tlsConf)
	w.plainLn = stampListen(rawPlain)
	go w.tlsSrv.Serve(w.tlsLn)
	go w.plainSrv.Serve(w.plainLn)
	return w, nil
}

func listenLoopback() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		if ln6, err6 := net.Listen("tcp", "[::1]:0"); err6 == nil {
			return ln6, nil
		}
		return nil, fmt.Errorf("politetest: listen on loopback: %w", err)
	}
	return ln, nil
}

// Close stops the servers, makes every waiting handler (a hanging robots.txt,
// a slow body) return, waits for the handlers, and closes the idle
// connections of every Transport the Web handed out. It is safe to call more
// than once.
func (w *Web) Close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	close(w.done)
	transports := w.transports
	w.mu.Unlock()

	w.tlsSrv.Close()
	w.plainSrv.Close()
	w.active.Wait()
	for _, t := range transports {
		t.CloseIdleConnections()
	}
}

// Site returns the virtual site answering for name (such as
// "news-17.example"), creating it on first use. Names are case-insensitive;
// a port is ignored.
func (w *Web) Site(name string) *Site {
	name = canonicalHost(name)
	w.mu.Lock()
	defer w.mu.Unlock()
	if s, ok := w.sites[name]; ok {
		return s
	}
	s := newSite(w, name)
	w.sites[name] = s
	return s
}

// Sites returns the names of every site, in no particular order.
func (w *Web) Sites() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.sites))
	for n := range w.sites {
		out = append(out, n)
	}
	return out
}

func (w *Web) lookupSite(name string) *Site {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sites[name]
}

// URL returns "https://host/path" (path gets a leading slash if it lacks one).
// It does not create the site.
func (w *Web) URL(host, path string) string {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return "https://" + canonicalHost(host) + path
}

// RootCAs returns a pool holding only the web's throwaway CA. Every site's
// certificate chains to it.
func (w *Web) RootCAs() *x509.CertPool { return w.ca.pool }

// CACert returns the web's throwaway CA certificate.
func (w *Web) CACert() *x509.Certificate { return w.ca.cert }

// Addr returns the loopback address ("127.0.0.1:port") of the HTTPS server.
func (w *Web) Addr() string { return w.tlsAddr }

// IP returns the loopback IP the virtual names resolve to.
func (w *Web) IP() netip.Addr { return w.ip }

// DialContext connects to the web. The address's host must be a site's name,
// or an IP address (any IP, including an address a site declared with
// [Site.ResolveTo]); any other name fails with a [*net.DNSError] whose
// IsNotFound is set. Port 80 reaches the plain-HTTP server, every other port
// the HTTPS server. Nothing ever leaves loopback.
func (w *Web) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err != nil {
		if w.lookupSite(canonicalHost(host)) == nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: notFound(host)}
		}
	}
	target := w.tlsAddr
	if port == "80" {
		target = w.plain
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", target)
}

// LookupNetIP resolves like [net.Resolver.LookupNetIP] inside the web: a
// site's name gives the address the site declared with [Site.ResolveTo], or
// the server's loopback IP; an IP literal gives itself; any other name fails
// with a [*net.DNSError] whose IsNotFound is set.
func (w *Web) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a}, nil
	}
	s := w.lookupSite(canonicalHost(host))
	if s == nil {
		return nil, notFound(host)
	}
	if a := s.declaredAddr(); a.IsValid() {
		return []netip.Addr{a}, nil
	}
	return []netip.Addr{w.ip}, nil
}

func notFound(host string) error {
	return &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// Transport returns a new [http.Transport] ready for the web: the CA pool as
// its roots, [Web.DialContext] as its dialer, no proxy, HTTP/1.1 only, and
// otherwise Go's defaults (so, unless the request sets Accept-Encoding, it
// adds "Accept-Encoding: gzip"; set DisableCompression to stop that). Each
// call returns a fresh Transport the caller may modify before first use;
// Close closes its idle connections.
func (w *Web) Transport() *http.Transport {
	protos := new(http.Protocols)
	protos.SetHTTP1(true)
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           w.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: w.ca.pool, NextProtos: []string{"http/1.1"}},
		Protocols:             protos,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	w.mu.Lock()
	w.transports = append(w.transports, t)
	w.mu.Unlock()
	return t
}

// Client returns a new [http.Client] over a new [Web.Transport] that does not
// follow redirects (it returns the 3xx response).
func (w *Web) Client() *http.Client {
	return &http.Client{
		Transport:     w.Transport(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func (w *Web) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := hello.ServerName
	if hello.Conn != nil {
		w.logMu.Lock()
		if c := w.connByNC[hello.Conn]; c != nil {
			c.SNI = name
			if c.Host == "" {
				w.setHost(c, canonicalHost(name))
			}
		}
		w.logMu.Unlock()
	}
	if name == "" {
		name = w.ip.String()
	}
	return w.ca.leaf(name)
}

type connKey struct{}

func rawConn(c net.Conn) net.Conn {
	if tc, ok := c.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return c
}

func (w *Web) connContext(ctx context.Context, c net.Conn) context.Context {
	_, isTLS := c.(*tls.Conn)
	w.logMu.Lock()
	w.connSeq++
	rec := &Conn{ID: w.connSeq, Opened: time.Now(), TLS: isTLS, raw: rawConn(c)}
	w.conns = append(w.conns, rec)
	w.connByNC[rawConn(c)] = rec
	w.logMu.Unlock()
	if hn, ok := rawConn(c).(hangUpNotifier); ok {
		hn.onHangUp(func(at time.Time) {
			w.logMu.Lock()
			if rec.Closed.IsZero() {
				rec.Closed = at // the client closed by then
			}
			w.logMu.Unlock()
		})
	}
	return withStamper(context.WithValue(ctx, connKey{}, rec), c)
}

func (w *Web) connState(c net.Conn, st http.ConnState) {
	if st != http.StateClosed && st != http.StateHijacked {
		return
	}
	raw := rawConn(c)
	closed := time.Now()
	if s, ok := raw.(receiveStamper); ok && st == http.StateClosed {
		if at, ok := s.goodbyeAt(); ok && at.Before(closed) {
			closed = at // the client's goodbye reached the kernel then
		}
	}
	w.logMu.Lock()
	if rec := w.connByNC[raw]; rec != nil {
		if rec.Closed.IsZero() {
			rec.Closed = closed
		}
		if st == http.StateClosed {
			delete(w.connByNC, raw)
			rec.raw = nil
		}
	}
	w.logMu.Unlock()
}

// setHost names the host of connection c, once known, and marks closed, as
// of c's opening, every other connection to that host whose client has
// closed it by now (its FIN or RST is in the kernel) though the web had not
// seen that by c's opening: a client closes one connection before it opens
// the next, and a busy web may not have looked at the old one since. w.logMu
// is held.
func (w *Web) setHost(c *Conn, host string) {
	c.Host = host
	kept := w.open[host][:0]
	for _, o := range w.open[host] {
		// A close noticed after c opened (a read that met the client's
		// hang-up late) is moved back to c's opening too.
		if o.Closed.IsZero() || o.Closed.After(c.Opened) {
			if hn, ok := o.raw.(hangUpNotifier); ok && hn.peerClosed() {
				o.Closed = c.Opened
				continue
			}
		}
		if !o.Closed.IsZero() {
			continue // closed: no longer kept
		}
		kept = append(kept, o)
	}
	if w.open == nil {
		w.open = map[string][]*Conn{}
	}
	w.open[host] = append(kept, c)
}

// connClosedNow marks a connection closed at this instant, unless it
// was already.
func (w *Web) connClosedNow(rec *Conn) {
	if rec == nil {
		return
	}
	w.logMu.Lock()
	if rec.Closed.IsZero() {
		rec.Closed = time.Now()
	}
	w.logMu.Unlock()
}

// ServeHTTP records the request, then lets the site named by the Host header
// answer it. An unknown host gets 421 Misdirected Request.
func (w *Web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	rec := w.begin(r)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		w.finish(rec, nil)
		http.Error(rw, "politetest: web closed", http.StatusServiceUnavailable)
		return
	}
	w.active.Add(1)
	w.mu.Unlock()
	defer w.active.Done()

	cw := &captureWriter{ResponseWriter: rw, robots: isRobotsPath(r.URL.Path)}
	defer func() {
		w.finish(rec, cw)
		if cw.closes() || r.Close {
			// The web ends the connection after this answer: it is
			// closed from now, however late net/http closes it.
			c, _ := r.Context().Value(connKey{}).(*Conn)
			w.connClosedNow(c)
		}
	}()

	site := w.lookupSite(rec.Host)
	if site == nil {
		http.Error(cw, "politetest: no site "+rec.Host, http.StatusMisdirectedRequest)
		return
	}
	site.serve(cw, r)
}

// begin records a request as it begins handling. Its Start is, for the
// first request on a connection, the connection's opening (the accept, or
// the kernel's receive time of its first bytes if earlier), and for a later
// one the kernel's receive time of its bytes where the connection has one
// (see receiveStamper), else now. Kernel times are wall clock only, so they
// are compared with the web's times by wall clock.
func (w *Web) begin(r *http.Request) *Request {
	// Mark first, so the stamp is of data read before now.
	recv, stamped := receivedAt(r.Context())
	now := time.Now()
	rec := &Request{
		Arrived: now,
		Host:    canonicalHost(r.Host),
		Method:  r.Method,
		Target:  r.RequestURI,
		Path:    r.URL.Path,
		Query:   r.URL.RawQuery,
		Proto:   r.Proto,
		Header:  r.Header.Clone(),
		TLS:     r.TLS != nil,
	}
	if rec.Header == nil {
		rec.Header = http.Header{}
	}
	if r.TLS != nil {
		rec.SNI = r.TLS.ServerName
	}
	c, _ := r.Context().Value(connKey{}).(*Conn)
	w.logMu.Lock()
	rec.Seq = len(w.reqs) + 1
	rec.Start = now
	if c != nil {
		rec.Conn = c.ID
		switch {
		case c.Requests == 0:
			// The connection's opening: when the web accepted it or,
			// if earlier, when its first bytes (a TLS ClientHello)
			// reached the kernel: an accept the web ran late must not
			// shorten the gap to the next request either.
			if c.Opened.Before(now) {
				rec.Start = c.Opened
			}
			if stamped && recv.Before(rec.Start) {
				rec.Start = recv
			}
		case stamped:
			rec.Start = recv
			if recv.After(now) { // only a stepped clock could do this
				rec.Start = now
			}
		}
		c.Requests++
		if c.Host == "" {
			w.setHost(c, rec.Host)
		}
	}
	w.reqs = append(w.reqs, rec)
	w.logMu.Unlock()
	return rec
}

func (w *Web) finish(rec *Request, cw *captureWriter) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	rec.Finished = time.Now()
	if cw == nil {
		rec.Status = http.StatusServiceUnavailable
		return
	}
	rec.Status = cw.status
	rec.ResponseHeader = cw.header
	rec.BytesSent = cw.n
	if cw.robots {
		rec.robotsBody = string(cw.body)
	}
}

// Requests returns a copy of every request recorded since start (or the
// last [Web.Reset]), in arrival order.
func (w *Web) Requests() []Request {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	out := make([]Request, len(w.reqs))
	for i, r := range w.reqs {
		out[i] = r.clone()
	}
	return out
}

// Connections returns a copy of every connection accepted since start (or
// the last [Web.Reset]), in the order they were accepted.
func (w *Web) Connections() []Conn {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	out := make([]Conn, len(w.conns))
	for i, c := range w.conns {
		out[i] = *c
	}
	return out
}

// Reset forgets every recorded request and connection; sites and their
// settings stay. Requests in flight and connections open at the time are
// forgotten too (a connection opened before Reset is not judged, but
// requests it carries later are recorded with its ID).
func (w *Web) Reset() {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	w.reqs = nil
	w.conns = nil
}

// closing reports the channel closed when the web shuts down.
func (w *Web) closing() <-chan struct{} { return w.done }

// canonicalHost lower-cases a host name and drops a port and a trailing dot.
func canonicalHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	return strings.TrimSuffix(h, ".")
}

func isRobotsPath(p string) bool { return p == "/robots.txt" }

// errHijackUnsupported is returned when a misbehaviour needs to take over the
// connection and the ResponseWriter cannot.
var errHijackUnsupported = errors.New("politetest: connection cannot be hijacked")
