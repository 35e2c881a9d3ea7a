package netguard

import (
	"context"
	"net/netip"
	"testing"
)

// go test -run XXX -bench . -benchmem ./internal/netguard
func BenchmarkIsPublic(b *testing.B) {
	addrs := []netip.Addr{
		netip.MustParseAddr("93.184.215.14"),
		netip.MustParseAddr("10.1.2.3"),
		netip.MustParseAddr("2606:4700::1111"),
		netip.MustParseAddr("64:ff9b::a00:1"),
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		IsPublic(addrs[i%len(addrs)])
	}
}

// BenchmarkDNSCacheHit measures a cached answer (D8).
func BenchmarkDNSCacheHit(b *testing.B) {
	c := &DNSCache{Resolver: &countingResolver{}}
	ctx := context.Background()
	if _, err := c.LookupNetIP(ctx, "ip", "a.test"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.LookupNetIP(ctx, "ip", "a.test"); err != nil {
			b.Fatal(err)
		}
	}
}
