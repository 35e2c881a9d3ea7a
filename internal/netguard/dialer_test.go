package netguard

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// seqResolver answers each name with the next answer in its list (the last
// one repeats), counting lookups: a scripted DNS, e.g. for rebinding.
type seqResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

func newSeqResolver(answers map[string][]string) *seqResolver {
	r := &seqResolver{answers: make(map[string][][]netip.Addr), calls: make(map[string]int)}
	for name, seq := range answers {
		for _, s := range seq {
			var addrs []netip.Addr
			if s != "" {
				for _, a := range splitComma(s) {
					addrs = append(addrs, netip.MustParseAddr(a))
				}
			}
			r.answers[name] = append(r.answers[name], addrs)
		}
	}
	return r
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func (r *seqResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := r.calls[host]
	r.calls[host]++
	if n >= len(seq) {
		n = len(seq) - 1
	}
	return append([]netip.Addr(nil), seq[n]...), nil
}

// routingDial is a base Dial that records every address it is asked for,
// fails the test if that address is not public or explicitly expected, and
// connects to the loopback target instead: no test ever connects to a
// non-loopback address.
type routingDial struct {
	t      *testing.T
	target string
	mu     sync.Mutex
	asked  []string
}

func (r *routingDial) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	r.mu.Lock()
	r.asked = append(r.asked, addr)
	r.mu.Unlock()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		r.t.Errorf("base dial got %q, not an ip:port: the name was dialled", addr)
		return nil, err
	}
	if !IsPublic(ap.Addr()) && !ap.Addr().IsLoopback() {
		r.t.Errorf("base dial asked for blocked address %s: refusal came too late", addr)
		return nil, errors.New("test: blocked address reached the base dialer")
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", r.target)
}

func (r *routingDial) Asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

// listen starts a loopback listener that accepts and counts connections.
func listen(t *testing.T) (addr string, accepted func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			n++
			mu.Unlock()
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String(), func() int { mu.Lock(); defer mu.Unlock(); return n }
}

func wantBlocked(t *testing.T, err error, addr string) {
	t.Helper()
	var be *BlockedError
	if !errors.As(err, &be) || !errors.Is(err, ErrBlockedAddr) {
		t.Fatalf("error = %v, want a *BlockedError", err)
	}
	if be.Addr != netip.MustParseAddr(addr) {
		t.Fatalf("BlockedError.Addr = %v, want %s", be.Addr, addr)
	}
}

// V10: a blocked IP literal or name is refused before the base dialer is
// asked for anything.
func TestDialerV10RefusesBeforeConnect(t *testing.T) {
	t.Parallel()
	target, accepted := listen(t)
	res := newSeqResolver(map[string][]string{
		"private.test":  {"10.0.0.1"},
		"metadata.test": {"169.254.169.254"},
		"mapped.test":   {"::ffff:192.168.1.1"},
		"nat64.test":    {"64:ff9b::a00:1"},
		"ula.test":      {"fd00::1,fe80::1"},
		"loop.test":     {"127.0.0.1"},
	})
	rd := &routingDial{t: t, target: target}
	d := &Dialer{Resolver: res, Dial: rd.Dial}
	tests := []struct{ addr, blocked string }{
		{"10.0.0.1:443", "10.0.0.1"},
		{"127.0.0.1:443", "127.0.0.1"},
		{"[::1]:443", "::1"},
		{"[::ffff:127.0.0.1]:443", "::ffff:127.0.0.1"},
		{"[64:ff9b::7f00:1]:443", "64:ff9b::7f00:1"},
		{"private.test:443", "10.0.0.1"},
		{"metadata.test:80", "169.254.169.254"},
		{"mapped.test:443", "::ffff:192.168.1.1"},
		{"nat64.test:443", "64:ff9b::a00:1"},
		{"ula.test:443", "fd00::1"},
		{"loop.test:443", "127.0.0.1"},
	}
	for _, tt := range tests {
		conn, err := d.DialContext(context.Background(), "tcp", tt.addr)
		if conn != nil {
			conn.Close()
			t.Fatalf("DialContext(%s) connected", tt.addr)
		}
		wantBlocked(t, err, tt.blocked)
	}
	if got := rd.Asked(); len(got) != 0 {
		t.Errorf("base dialer was asked for %v", got)
	}
	if n := accepted(); n != 0 {
		t.Errorf("listener accepted %d connections", n)
	}
	var oe *net.OpError
	_, err := d.DialContext(context.Background(), "tcp", "private.test:443")
	if !errors.As(err, &oe) || oe.Op != "dial" {
		t.Errorf("refusal %v is not a *net.OpError", err)
	}
	var be *BlockedError
	if errors.As(err, &be); be.Host != "private.test" {
		t.Errorf("BlockedError.Host = %q, want the name", be.Host)
	}
}

// V10, DNS rebinding: a name that first resolves to a public address and
// then to a private one is refused on the second dial, before any connect.
// The dial goes to the checked IP, never to the name.
func TestDialerV10Rebinding(t *testing.T) {
	t.Parallel()
	target, accepted := listen(t)
	res := newSeqResolver(map[string][]string{"rebind.test": {"93.184.215.14", "10.0.0.7"}})
	rd := &routingDial{t: t, target: target}
	// Loopback is allowed only because routingDial connects there in place
	// of the public address; the RemoteAddr check would refuse it otherwise.
	d := &Dialer{Guard: &Guard{Allow: loopback}, Resolver: res, Dial: rd.Dial}

	conn, err := d.DialContext(context.Background(), "tcp", "rebind.test:443")
	if err != nil {
		t.Fatalf("first dial: %v", err)
	}
	conn.Close()
	_, err = d.DialContext(context.Background(), "tcp", "rebind.test:443")
	wantBlocked(t, err, "10.0.0.7")

	asked := rd.Asked()
	if len(asked) != 1 || asked[0] != "93.184.215.14:443" {
		t.Errorf("base dialer asked for %v, want only [93.184.215.14:443]", asked)
	}
	if n := accepted(); n > 1 {
		t.Errorf("listener accepted %d connections, want at most 1", n)
	}
}

// V10: of several resolved addresses the blocked ones are skipped and the
// public ones tried in order.
func TestDialerSkipsBlockedAddresses(t *testing.T) {
	t.Parallel()
	target, _ := listen(t)
	res := newSeqResolver(map[string][]string{"mixed.test": {"10.0.0.1,::1,2606:4700::1,93.184.215.14"}})
	rd := &routingDial{t: t, target: target}
	d := &Dialer{Guard: &Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, Resolver: res, Dial: rd.Dial}
	conn, err := d.DialContext(context.Background(), "tcp", "mixed.test:8443")
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if got := rd.Asked(); len(got) != 1 || got[0] != "[2606:4700::1]:8443" {
		t.Errorf("base dialer asked for %v, want [[2606:4700::1]:8443]", got)
	}
}

// V10: a custom Dial that lands somewhere blocked (here loopback, not
// allowed) is caught on RemoteAddr and the connection closed.
func TestDialerV10ChecksRemoteAddr(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closed := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			closed <- err
			return
		}
		defer c.Close()
		_, err = c.Read(make([]byte, 1))
		closed <- err
	}()
	rd := &routingDial{t: t, target: ln.Addr().String()}
	d := &Dialer{Dial: rd.Dial}
	_, err = d.DialContext(context.Background(), "tcp", "93.184.215.14:443")
	wantBlocked(t, err, "127.0.0.1")
	if err := <-closed; err != io.EOF {
		t.Errorf("server side read %v, want io.EOF: the refused connection was not closed", err)
	}
}

// V10: the default base dialer's Control hook re-checks the address at
// connect time, after the socket is made and before it connects.
func TestDialerV10ControlHook(t *testing.T) {
	t.Parallel()
	d := &Dialer{Guard: &Guard{Allow: loopback}}
	nd := d.netDialer(DefaultDialTimeout)
	if nd.Control == nil {
		t.Fatal("no Control hook on the default dialer")
	}
	for _, tt := range []struct {
		addr string
		ok   bool
	}{
		{"10.0.0.1:443", false},
		{"[::ffff:10.0.0.1]:443", false},
		{"[fe80::1%eth0]:443", false},
		{"169.254.169.254:80", false},
		{"127.0.0.1:443", true},
		{"93.184.215.14:443", true},
		{"not-an-address", false},
	} {
		err := nd.Control("tcp", tt.addr, nil)
		if (err == nil) != tt.ok {
			t.Errorf("Control(%s) = %v, want allowed=%v", tt.addr, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrBlockedAddr) {
			t.Errorf("Control(%s) = %v, not ErrBlockedAddr", tt.addr, err)
		}
	}
}

// V10: a real loopback dial through the default base dialer (Control hook
// included) succeeds only with loopback on the allow-list.
func TestDialerLoopbackOnlyWithAllowList(t *testing.T) {
	t.Parallel()
	target, _ := listen(t)
	_, port, _ := net.SplitHostPort(target)
	res := newSeqResolver(map[string][]string{"loop.test": {"127.0.0.1"}})

	d := &Dialer{Guard: &Guard{Allow: loopback}, Resolver: res}
	for _, addr := range []string{target, net.JoinHostPort("loop.test", port)} {
		conn, err := d.DialContext(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatalf("allowed dial %s: %v", addr, err)
		}
		conn.Close()
	}

	strict := &Dialer{Resolver: res}
	_, err := strict.DialContext(context.Background(), "tcp", net.JoinHostPort("loop.test", port))
	wantBlocked(t, err, "127.0.0.1")
	_, err = strict.DialContext(context.Background(), "tcp", target)
	wantBlocked(t, err, "127.0.0.1")
}

// V10 through net/http: the Dialer in a Transport refuses a loopback server
// unless allowed, and the *BlockedError reaches the caller.
func TestDialerInHTTPTransport(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	get := func(d *Dialer) (string, error) {
		tr := &http.Transport{DialContext: d.DialContext, Proxy: nil}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get(&Dialer{Guard: &Guard{Allow: loopback}}); err != nil || body != "ok" {
		t.Fatalf("allowed GET = %q, %v", body, err)
	}
	_, err := get(&Dialer{})
	wantBlocked(t, err, "127.0.0.1")
}

func TestDialerRejectsBadInput(t *testing.T) {
	t.Parallel()
	d := &Dialer{Resolver: newSeqResolver(nil)}
	for _, tt := range []struct{ network, addr string }{
		{"unix", "sock"},
		{"tcp", "no-port"},
		{"tcp", "unknown.test:443"},
	} {
		if conn, err := d.DialContext(context.Background(), tt.network, tt.addr); err == nil {
			conn.Close()
			t.Errorf("DialContext(%s, %s) succeeded", tt.network, tt.addr)
		}
	}
}
