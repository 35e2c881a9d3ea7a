package netguard_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"

	"github.com/politefetch/politefetch/internal/netguard"
)

func Example() {
	for _, s := range []string{"93.184.215.14", "10.1.2.3", "::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe", "2001:db8::1"} {
		fmt.Println(s, netguard.IsPublic(netip.MustParseAddr(s)))
	}

	// A Guard names the range it refuses; its allow-list admits more.
	var public netguard.Guard
	err := public.Check(netip.MustParseAddr("169.254.169.254"))
	var be *netguard.BlockedError
	if errors.As(err, &be) {
		fmt.Println(be.Range)
	}
	tests := netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	fmt.Println(tests.Check(netip.MustParseAddr("127.0.0.1")))

	// A Dialer applies a Guard to every connection, by resolved IP and
	// again at connect time; a DNSCache shares its answers (D8).
	d := &netguard.Dialer{Resolver: &netguard.DNSCache{}}
	_ = &http.Transport{Proxy: nil, DialContext: d.DialContext}
	// Output:
	// 93.184.215.14 true
	// 10.1.2.3 false
	// ::ffff:127.0.0.1 false
	// 64:ff9b::a9fe:a9fe false
	// 2001:db8::1 false
	// link local (RFC 3927) 169.254.0.0/16
	// <nil>
}
