package fetch

import (
	"context"
	"crypto/x509"
	"net"
	"net/netip"
	"slices"
	"time"
)

// Network is how the Client reaches hosts: name resolution, connecting, TLS
// roots and the addresses it admits. Every connection's address is checked
// before the connection is made and again on the connection Dial makes, so
// neither a resolver nor a dialer can lead the Client to an address it does
// not admit. The zero Network is the system's network with public addresses
// only.
type Network struct {
	// Resolver looks up the hosts' addresses, under the Client's DNS cache.
	// nil: the system resolver.
	Resolver Resolver
	// DNSTTL is how long DNS answers are cached. Zero: five minutes.
	DNSTTL time.Duration
	// Dial connects to an "ip:port" once the address has been checked; the
	// address is checked again on the connection it makes. nil: a
	// net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// RootCAs are the roots TLS chains are verified against. nil: the
	// system's roots.
	RootCAs *x509.CertPool
	// Allow admits addresses that are not public (tests: 127.0.0.0/8;
	// private deployments). Empty: public unicast addresses only.
	Allow []netip.Prefix
}

// WithNetwork sets how the Client reaches hosts (see [Network]). Given more
// than once, the values merge in order: each non-zero field of a later
// Network replaces the earlier one's (a later Allow replaces the earlier
// list, it does not add to it), and a zero field leaves it as it was.
func WithNetwork(n Network) Option {
	return func(o *options) { o.network = o.network.merge(n) }
}

// merge returns n with each non-zero field of later in its place.
func (n Network) merge(later Network) Network {
	if later.Resolver != nil {
		n.Resolver = later.Resolver
	}
	if later.DNSTTL != 0 {
		n.DNSTTL = later.DNSTTL
	}
	if later.Dial != nil {
		n.Dial = later.Dial
	}
	if later.RootCAs != nil {
		n.RootCAs = later.RootCAs
	}
	if len(later.Allow) > 0 {
		n.Allow = slices.Clone(later.Allow)
	}
	return n
}
