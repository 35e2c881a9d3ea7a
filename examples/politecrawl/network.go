package main

// The test flags that let the CLI crawl a simulated web (politetest): every
// host mapped to one address, an extra CA trusted, private prefixes
// admitted. Each is refused unless given explicitly on the command line, and
// none is ever read from the environment.

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/provenance"
)

// netFlags are the test flags of the commands that read or verify.
type netFlags struct {
	connectTo string // "ip:port": every host is reached there
	caFile    string // PEM file of extra trusted CAs
	admit     prefixList
}

// prefixList is a repeatable flag of address prefixes.
type prefixList []netip.Prefix

func (p *prefixList) String() string {
	var s []string
	for _, x := range *p {
		s = append(s, x.String())
	}
	return strings.Join(s, ",")
}

func (p *prefixList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		pre, err := netip.ParsePrefix(strings.TrimSpace(part))
		if err != nil {
			return fmt.Errorf("%q is not an address prefix such as 127.0.0.0/8", part)
		}
		*p = append(*p, pre.Masked())
	}
	return nil
}

func (n *netFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&n.connectTo, "connect-to", "", "testing: reach every host at this ip:port (a simulated web); needs -admit-private for a private address")
	fs.StringVar(&n.caFile, "ca", "", "testing: also trust the CA certificates in this PEM file")
	fs.Var(&n.admit, "admit-private", "testing: admit connections to this non-public prefix (repeatable, or comma-separated)")
}

// check validates the flags' values.
func (n *netFlags) check() error {
	if n.connectTo != "" {
		ap, err := netip.ParseAddrPort(n.connectTo)
		if err != nil {
			return fmt.Errorf("-connect-to %q: want ip:port, such as 127.0.0.1:8443", n.connectTo)
		}
		if !ap.Addr().IsGlobalUnicast() || ap.Addr().IsPrivate() || ap.Addr().IsLoopback() {
			ok := false
			for _, p := range n.admit {
				if p.Contains(ap.Addr()) {
					ok = true
				}
			}
			if !ok {
				return fmt.Errorf("-connect-to %s is not a public address: admit it explicitly with -admit-private %s/32", ap.Addr(), ap.Addr())
			}
		}
	}
	return nil
}

// roots returns the pool to verify TLS with: base plus the -ca file's
// certificates, or base itself (nil: the caller's default) without -ca.
func (n *netFlags) roots(base *x509.CertPool) (*x509.CertPool, error) {
	if n.caFile == "" {
		return base, nil
	}
	b, err := os.ReadFile(n.caFile)
	if err != nil {
		return nil, fmt.Errorf("-ca: %w", err)
	}
	pool := base
	if pool == nil {
		if pool, err = x509.SystemCertPool(); err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
	} else {
		pool = pool.Clone()
	}
	found := 0
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("-ca %s: %w", n.caFile, err)
		}
		pool.AddCert(c)
		found++
	}
	if found == 0 {
		return nil, fmt.Errorf("-ca %s: no PEM certificate in it", n.caFile)
	}
	return pool, nil
}

// fetchOptions are the fetch client's options the flags ask for.
func (n *netFlags) fetchOptions() ([]fetch.Option, error) {
	roots, err := n.roots(nil)
	if err != nil {
		return nil, err
	}
	nw := fetch.Network{RootCAs: roots, Allow: n.admit}
	if n.connectTo != "" {
		ap := netip.MustParseAddrPort(n.connectTo)
		nw.Resolver = fixedResolver{ap.Addr()}
		nw.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			// Every host resolves to ap's address; the port is ap's too.
			var d net.Dialer
			return d.DialContext(ctx, network, ap.String())
		}
	}
	return []fetch.Option{fetch.WithNetwork(nw)}, nil
}

// verifyOptions are provenance's options the flags ask for: the pinned
// roots plus -ca, and the admitted prefixes.
func (n *netFlags) verifyOptions() (provenance.VerifyOptions, error) {
	var o provenance.VerifyOptions
	if n.caFile != "" {
		pinned, _ := provenance.PinnedRoots()
		roots, err := n.roots(pinned)
		if err != nil {
			return o, err
		}
		o.Roots, o.RootsLabel = roots, "pinned bundle + "+n.caFile
	}
	o.AllowPrefixes = n.admit
	return o, nil
}

// fixedResolver resolves every name to one address (-connect-to).
type fixedResolver struct{ addr netip.Addr }

func (r fixedResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if host == "" {
		return nil, errors.New("empty host")
	}
	return []netip.Addr{r.addr}, nil
}
