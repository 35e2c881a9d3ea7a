package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"
)

// DefaultDialTimeout bounds one connection attempt when Dialer.Timeout is 0.
const DefaultDialTimeout = 30 * time.Second

// Dialer connects only to addresses its Guard admits. Its DialContext
// fits [net/http.Transport.DialContext].
//
// For a name, DialContext resolves it through Resolver and checks every
// address: blocked addresses are skipped, the admitted ones are tried one
// after another in the order resolved (no Happy Eyeballs racing) until one
// connects, and if none is admitted the [*BlockedError] of the first is
// returned. It dials the chosen IP and port,
// never the name, so no second lookup can rebind it; and it checks the
// address again at connect time: through [net.Dialer.Control] when Dial is
// nil, and on the connection's RemoteAddr (closing it if blocked) when Dial
// is set. Every refusal happens before any packet is sent to a blocked
// address, except with a custom Dial that itself connects somewhere other
// than the address it was given; that connection is closed unused.
//
// A refusal is returned as a *net.OpError wrapping the *BlockedError, so
// errors.As finds the latter and errors.Is(err, ErrBlockedAddr) holds.
//
// The zero value admits public addresses only and resolves through its own
// [DNSCache] over net.DefaultResolver. Fields must not be changed once the
// Dialer is in use; it is then safe for concurrent use. A Dialer must not be
// copied after first use.
type Dialer struct {
	Guard    *Guard   // nil: public addresses only
	Resolver Resolver // nil: a DNSCache over net.DefaultResolver, made on first use
	// Dial connects to an "ip:port" address. nil: a net.Dialer with Timeout
	// and a Control hook that re-checks the address at connect time. Tests
	// set it to route every address to a loopback server.
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	Timeout time.Duration // per connection attempt; 0: DefaultDialTimeout

	once  sync.Once
	cache *DNSCache
}

// DialContext connects to addr ("host:port") on network ("tcp", "tcp4",
// "tcp6", "udp", "udp4" or "udp6"), as described on [Dialer].
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	opErr := func(err error) error {
		return &net.OpError{Op: "dial", Net: network, Err: err}
	}
	lookupNet := "ip"
	switch network {
	case "tcp", "udp":
	case "tcp4", "udp4":
		lookupNet = "ip4"
	case "tcp6", "udp6":
		lookupNet = "ip6"
	default:
		return nil, opErr(net.UnknownNetworkError(network))
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, opErr(err)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
		host = ""
	} else {
		addrs, err = d.resolver().LookupNetIP(ctx, lookupNet, host)
		if err != nil {
			return nil, opErr(err)
		}
		if len(addrs) == 0 {
			return nil, opErr(&net.DNSError{Err: "no such host", Name: host, IsNotFound: true})
		}
	}
	var firstBlocked, lastErr error
	for _, a := range addrs {
		if err := d.Guard.Check(a); err != nil {
			if firstBlocked == nil {
				err.(*BlockedError).Host = host
				firstBlocked = err
			}
			continue
		}
		conn, err := d.dialOne(ctx, network, a.Unmap().String(), port)
		if err == nil {
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil || errors.Is(err, ErrBlockedAddr) {
			break
		}
	}
	if lastErr != nil {
		return nil, lastErr
	}
	return nil, opErr(firstBlocked)
}

func (d *Dialer) dialOne(ctx context.Context, network, ip, port string) (net.Conn, error) {
	target := net.JoinHostPort(ip, port)
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	if d.Dial == nil {
		return d.netDialer(timeout).DialContext(ctx, network, target)
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := d.Dial(dctx, network, target)
	if err != nil {
		return nil, err
	}
	remote, err := remoteAddr(conn)
	if err == nil {
		err = d.Guard.Check(remote)
	}
	if err != nil {
		conn.Close()
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	return conn, nil
}

// netDialer returns the default base dialer: its Control hook runs after
// the socket is made and before it connects, and refuses a blocked address.
func (d *Dialer) netDialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout: timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &BlockedError{Range: fmt.Sprintf("unparseable address %q", address)}
			}
			return d.Guard.Check(ap.Addr())
		},
	}
}

// remoteAddr returns conn's remote IP, or a *BlockedError if it has none.
func remoteAddr(conn net.Conn) (netip.Addr, error) {
	ra := conn.RemoteAddr()
	if ra == nil {
		return netip.Addr{}, &BlockedError{Range: "connection without remote address"}
	}
	switch ra := ra.(type) {
	case *net.TCPAddr:
		return ra.AddrPort().Addr(), nil
	case *net.UDPAddr:
		return ra.AddrPort().Addr(), nil
	}
	ap, err := netip.ParseAddrPort(ra.String())
	if err != nil {
		return netip.Addr{}, &BlockedError{Range: fmt.Sprintf("unparseable remote address %q", ra.String())}
	}
	return ap.Addr(), nil
}

func (d *Dialer) resolver() Resolver {
	if d.Resolver != nil {
		return d.Resolver
	}
	d.once.Do(func() { d.cache = &DNSCache{} })
	return d.cache
}
