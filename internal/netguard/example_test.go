package netguard_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/politefetch/politefetch/internal/netguard"
)

func Example() {
	for _, s := range []string{"93.184.215.14", "10.1.2.3", "::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe", "2001:db8::1"} {
		fmt.Println(s, netguard.IsPublic(netip.MustParseAddr(s)))
	}

	// A Dialer refuses a blocked address before connecting; plug its
	// DialContext into an http.Transport.
	var d netguard.Dialer
	_, err := d.DialContext(context.Background(), "tcp", "169.254.169.254:80")
	var be *netguard.BlockedError
	if errors.As(err, &be) {
		fmt.Println(be.Range)
	}
	// Output:
	// 93.184.215.14 true
	// 10.1.2.3 false
	// ::ffff:127.0.0.1 false
	// 64:ff9b::a9fe:a9fe false
	// 2001:db8::1 false
	// link local (RFC 3927) 169.254.0.0/16
}
