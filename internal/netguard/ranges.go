package netguard

import "net/netip"

// Range is one blocked address range and the name errors report for it.
type Range struct {
	Prefix netip.Prefix // the blocked addresses
	Name   string       // what the range is for, with its RFC
}

// blocked4 and blocked6 are never modified; Ranges hands out copies.
var blocked4 = []Range{
	{netip.MustParsePrefix("0.0.0.0/8"), "this network (RFC 791)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private use (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (RFC 6598)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback (RFC 1122)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link local (RFC 3927)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private use (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (RFC 6890)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation TEST-NET-1 (RFC 5737)"},
	{netip.MustParsePrefix("192.31.196.0/24"), "AS112-v4 (RFC 7535)"},
	{netip.MustParsePrefix("192.52.193.0/24"), "AMT (RFC 7450)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast (RFC 7526)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private use (RFC 1918)"},
	{netip.MustParsePrefix("192.175.48.0/24"), "AS112 direct delegation (RFC 7534)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (RFC 2544)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation TEST-NET-2 (RFC 5737)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation TEST-NET-3 (RFC 5737)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast (RFC 5771)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved and limited broadcast (RFC 1112, RFC 919)"},
}

var blocked6 = []Range{
	// Outside 2000::/3, named where a name helps; everything else outside
	// 2000::/3 is reported as globalUnicast's complement.
	{netip.MustParsePrefix("::/128"), "unspecified (RFC 4291)"},
	{netip.MustParsePrefix("::1/128"), "loopback (RFC 4291)"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 well-known prefix (RFC 6052)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "NAT64 local-use prefix (RFC 8215)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (RFC 6666)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (RFC 4193)"},
	{netip.MustParsePrefix("fe80::/10"), "link local (RFC 4291)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast (RFC 4291)"},
	// Inside 2000::/3.
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments, Teredo (RFC 2928)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (RFC 3849)"},
	{netip.MustParsePrefix("2002::/16"), "6to4 (RFC 3056)"},
	{netip.MustParsePrefix("2620:4f:8000::/48"), "AS112 direct delegation (RFC 7534)"},
	{netip.MustParsePrefix("3fff::/20"), "documentation (RFC 9637)"},
}

var (
	globalUnicast = netip.MustParsePrefix("2000::/3")
	nat64         = netip.MustParsePrefix("64:ff9b::/96")
)

// notGlobal is the name reported for IPv6 addresses outside 2000::/3 that no
// narrower range names.
const notGlobal = "not IPv6 global unicast (outside 2000::/3)"

// Ranges returns a copy of the table [IsPublic] judges by: every blocked
// IPv4 range, then every named IPv6 range. Besides these, every IPv6
// address outside 2000::/3 is blocked.
func Ranges() []Range {
	out := make([]Range, 0, len(blocked4)+len(blocked6)+1)
	out = append(out, blocked4...)
	out = append(out, blocked6...)
	return out
}

// IsPublic reports whether a is a public unicast address: valid, and in no
// blocked range. An IPv4-mapped IPv6 address (::ffff:0:0/96) is unmapped
// and judged as IPv4; any zone is ignored. IsPublic is safe for concurrent
// use and does not allocate.
func IsPublic(a netip.Addr) bool {
	_, blocked := findRange(a)
	return !blocked
}

// findRange returns the range that blocks a, if any. For an address
// outside 2000::/3 that no narrower range names, the range is 2000::/3
// itself, named notGlobal.
func findRange(a netip.Addr) (Range, bool) {
	if !a.IsValid() {
		return Range{Name: "invalid address"}, true
	}
	a = a.WithZone("").Unmap()
	if a.Is4() {
		for _, r := range blocked4 {
			if r.Prefix.Contains(a) {
				return r, true
			}
		}
		return Range{}, false
	}
	for _, r := range blocked6 {
		if r.Prefix.Contains(a) {
			return r, true
		}
	}
	if !globalUnicast.Contains(a) {
		return Range{Prefix: globalUnicast, Name: notGlobal}, true
	}
	return Range{}, false
}

// blockedRange describes the range that blocks a, or returns "" if a is
// public: the range's name and prefix and, for NAT64, the blocked IPv4
// range the address stands for.
func blockedRange(a netip.Addr) string {
	r, blocked := findRange(a)
	switch {
	case !blocked:
		return ""
	case r.Name == notGlobal, !r.Prefix.IsValid():
		return r.Name
	}
	name := r.Name + " " + r.Prefix.String()
	if r.Prefix == nat64 {
		b := a.As16()
		if inner := blockedRange(netip.AddrFrom4([4]byte(b[12:]))); inner != "" {
			name += " embedding " + inner
		}
	}
	return name
}
