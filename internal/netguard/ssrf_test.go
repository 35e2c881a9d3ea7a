package netguard

import (
	"net/netip"
	"testing"

	"code.dny.dev/ssrf"
)

// lastAddr returns the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := range b {
		bits := max(0, min(8, p.Bits()-8*i))
		b[i] |= byte(0xff >> bits)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// V10, differential: every range code.dny.dev/ssrf v0.3.0 denies is denied
// here too, at both ends, and so is everything outside its IPv6 global
// unicast prefix (the NAT64 prefix included).
func TestCoversSSRFPackageV10(t *testing.T) {
	t.Parallel()
	var prefixes []netip.Prefix
	prefixes = append(prefixes, ssrf.IPv4DeniedPrefixes...)
	prefixes = append(prefixes, ssrf.IPv6DeniedPrefixes...)
	prefixes = append(prefixes, ssrf.IPv6NAT64Prefix)
	for _, p := range prefixes {
		for _, a := range []netip.Addr{p.Masked().Addr(), lastAddr(p)} {
			if IsPublic(a) {
				t.Errorf("%s (in ssrf's %s) is public here", a, p)
			}
		}
	}
	if g := ssrf.IPv6GlobalUnicast; g != globalUnicast {
		t.Errorf("ssrf's global unicast prefix %s differs from ours %s", g, globalUnicast)
	}
	if got := lastAddr(netip.MustParsePrefix("10.0.0.0/8")); got != netip.MustParseAddr("10.255.255.255") {
		t.Errorf("lastAddr(10.0.0.0/8) = %s", got)
	}
}
