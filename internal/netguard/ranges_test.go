package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// V10: never connect to a non-public IP address. One row per blocked range
// (first, last and a middle address where it matters), the IPv4-mapped and
// NAT64 forms of private IPv4 addresses, and the public neighbours of range
// edges.
func TestIsPublicV10Ranges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr   string
		public bool
		rng    string // substring of the reported range, for blocked rows
	}{
		// IPv4 blocked ranges.
		{"0.0.0.0", false, "0.0.0.0/8"},
		{"0.255.255.255", false, "0.0.0.0/8"},
		{"10.0.0.0", false, "10.0.0.0/8"},
		{"10.255.255.255", false, "10.0.0.0/8"},
		{"100.64.0.0", false, "100.64.0.0/10"},
		{"100.127.255.255", false, "100.64.0.0/10"},
		{"127.0.0.1", false, "127.0.0.0/8"},
		{"127.255.255.254", false, "127.0.0.0/8"},
		{"169.254.169.254", false, "169.254.0.0/16"},
		{"172.16.0.0", false, "172.16.0.0/12"},
		{"172.31.255.255", false, "172.16.0.0/12"},
		{"192.0.0.1", false, "192.0.0.0/24"},
		{"192.0.2.1", false, "192.0.2.0/24"},
		{"192.168.0.1", false, "192.168.0.0/16"},
		{"192.168.255.255", false, "192.168.0.0/16"},
		{"198.18.0.0", false, "198.18.0.0/15"},
		{"198.19.255.255", false, "198.18.0.0/15"},
		{"198.51.100.7", false, "198.51.100.0/24"},
		{"203.0.113.9", false, "203.0.113.0/24"},
		{"224.0.0.1", false, "224.0.0.0/4"},
		{"239.255.255.255", false, "224.0.0.0/4"},
		{"240.0.0.1", false, "240.0.0.0/4"},
		{"255.255.255.255", false, "240.0.0.0/4"},
		{"192.88.99.1", false, "192.88.99.0/24"},
		// IPv4 public edges.
		{"1.1.1.1", true, ""},
		{"9.255.255.255", true, ""},
		{"11.0.0.0", true, ""},
		{"100.63.255.255", true, ""},
		{"100.128.0.0", true, ""},
		{"126.255.255.255", true, ""},
		{"128.0.0.0", true, ""},
		{"169.253.255.255", true, ""},
		{"172.15.255.255", true, ""},
		{"172.32.0.0", true, ""},
		{"192.0.1.255", true, ""},
		{"192.0.3.0", true, ""},
		{"192.167.255.255", true, ""},
		{"192.169.0.0", true, ""},
		{"198.17.255.255", true, ""},
		{"198.20.0.0", true, ""},
		{"223.255.255.255", true, ""},
		// IPv4-mapped IPv6: unmapped and judged as IPv4.
		{"::ffff:10.1.2.3", false, "10.0.0.0/8"},
		{"::ffff:127.0.0.1", false, "127.0.0.0/8"},
		{"::ffff:192.168.1.1", false, "192.168.0.0/16"},
		{"::ffff:169.254.169.254", false, "169.254.0.0/16"},
		{"::ffff:1.1.1.1", true, ""},
		// NAT64: blocked whole, naming the embedded private address.
		{"64:ff9b::10.1.2.3", false, "embedding private use (RFC 1918) 10.0.0.0/8"},
		{"64:ff9b::127.0.0.1", false, "embedding loopback (RFC 1122) 127.0.0.0/8"},
		{"64:ff9b::192.168.1.1", false, "embedding private use (RFC 1918) 192.168.0.0/16"},
		{"64:ff9b::1.1.1.1", false, "64:ff9b::/96"},
		{"64:ff9b:1::a00:1", false, "64:ff9b:1::/48"},
		// IPv6 outside 2000::/3.
		{"::", false, "::/128"},
		{"::1", false, "::1/128"},
		{"::2", false, "outside 2000::/3"},
		{"::10.0.0.1", false, "outside 2000::/3"}, // deprecated IPv4-compatible
		{"100::1", false, "100::/64"},
		{"fc00::1", false, "fc00::/7"},
		{"fd12:3456::1", false, "fc00::/7"},
		{"fe80::1", false, "fe80::/10"},
		{"fe80::1%eth0", false, "fe80::/10"},
		{"febf::1", false, "fe80::/10"},
		{"fec0::1", false, "outside 2000::/3"}, // deprecated site-local
		{"ff02::1", false, "ff00::/8"},
		{"1fff:ffff::1", false, "outside 2000::/3"},
		{"4000::1", false, "outside 2000::/3"},
		// IPv6 blocked inside 2000::/3.
		{"2001::1", false, "2001::/23"},          // Teredo
		{"2001:1ff:ffff::1", false, "2001::/23"}, // last of /23
		{"2001:db8::1", false, "2001:db8::/32"},  // documentation
		{"2002:a00:1::1", false, "2002::/16"},    // 6to4 of 10.0.0.1
		{"2002:c0a8:101::1", false, "2002::/16"}, // 6to4 of 192.168.1.1
		{"3fff::1", false, "3fff::/20"},
		// IPv6 public.
		{"2000::1", true, ""},
		{"2001:200::1", true, ""}, // first after 2001::/23
		{"2001:4860:4860::8888", true, ""},
		{"2606:4700::1111", true, ""},
		{"2003::1", true, ""},
		{"3ffe::1", true, ""},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		if got := IsPublic(a); got != tt.public {
			t.Errorf("IsPublic(%s) = %v, want %v", tt.addr, got, tt.public)
			continue
		}
		err := (*Guard)(nil).Check(a)
		if tt.public {
			if err != nil {
				t.Errorf("Check(%s) = %v, want nil", tt.addr, err)
			}
			continue
		}
		var be *BlockedError
		if !errors.As(err, &be) || !errors.Is(err, ErrBlockedAddr) {
			t.Errorf("Check(%s) = %v, want a *BlockedError matching ErrBlockedAddr", tt.addr, err)
			continue
		}
		if be.Addr != a {
			t.Errorf("Check(%s): Addr = %v", tt.addr, be.Addr)
		}
		if !strings.Contains(be.Range, tt.rng) {
			t.Errorf("Check(%s): Range = %q, want it to name %q", tt.addr, be.Range, tt.rng)
		}
	}
	if IsPublic(netip.Addr{}) {
		t.Error("the zero Addr is public")
	}
}

// Every range the issue lists is in the table, by its own prefix (V10).
func TestRangesCoverSpecV10(t *testing.T) {
	t.Parallel()
	have := make(map[netip.Prefix]bool)
	for _, r := range Ranges() {
		if r.Name == "" {
			t.Errorf("range %v has no name", r.Prefix)
		}
		have[r.Prefix] = true
	}
	for _, p := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "64:ff9b::/96", "64:ff9b:1::/48", "fc00::/7", "fe80::/10",
		"ff00::/8", "2001::/23", "2001:db8::/32", "2002::/16",
	} {
		if !have[netip.MustParsePrefix(p)] {
			t.Errorf("range %s missing from Ranges()", p)
		}
	}
	// Ranges hands out a copy.
	Ranges()[0].Name = "changed"
	if Ranges()[0].Name == "changed" {
		t.Error("Ranges() exposes the package's table")
	}
}

func TestGuardAllowList(t *testing.T) {
	t.Parallel()
	g := &Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("fd00:1::/32")}}
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1", true},
		{"127.9.9.9", true},
		{"::ffff:127.0.0.1", true},
		{"fd00:1::5", true},
		{"fd00:2::5", false},
		{"10.0.0.1", false},
		{"::1", false},
		{"1.1.1.1", true},
	}
	for _, tt := range tests {
		err := g.Check(netip.MustParseAddr(tt.addr))
		if (err == nil) != tt.ok {
			t.Errorf("Check(%s) = %v, want allowed=%v", tt.addr, err, tt.ok)
		}
	}
	var zero Guard
	if err := zero.Check(netip.MustParseAddr("127.0.0.1")); !errors.Is(err, ErrBlockedAddr) {
		t.Errorf("zero Guard admitted loopback: %v", err)
	}
	if err := g.Check(netip.Addr{}); !errors.Is(err, ErrBlockedAddr) {
		t.Errorf("invalid address admitted: %v", err)
	}
}
