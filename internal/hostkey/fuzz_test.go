package hostkey

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// FuzzHostKey checks that Normalize never panics, that a key is its own key
// (P1: one host, one key), that keys are lower-case ASCII, and that Site
// never panics and is a suffix of the key's host, and that the fast path
// (isKeyName) takes only names the full path returns unchanged, as does the
// IPv4 path (an IPv4 literal netip.ParseAddr accepts is canonical).
func FuzzHostKey(f *testing.F) {
	for _, s := range []string{"Example.COM:443", "example.com.", "[2001:db8::1]:8443", "bücher.example", "192.0.2.1", "a..b", "[::ffff:10.0.0.1]", "xn--bcher-kva.example:0443"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if isKeyName(in) {
			if name, err := slowName(in, in); err != nil || name != in {
				t.Fatalf("isKeyName(%q) but the full path gives %q, %v", in, name, err)
			}
		}
		if a, err := netip.ParseAddr(in); err == nil && a.Is4() && a.String() != in {
			t.Fatalf("netip.ParseAddr(%q) = %v: an IPv4 literal it accepts is not canonical", in, a)
		}
		site := Site(in)
		key, err := Normalize(in)
		if err != nil {
			if !errors.Is(err, ErrInvalidHost) {
				t.Fatalf("Normalize(%q) error %v does not match ErrInvalidHost", in, err)
			}
			return
		}
		again, err := Normalize(key)
		if err != nil || again != key {
			t.Fatalf("Normalize(%q) = %q, but Normalize(%q) = %q, %v", in, key, key, again, err)
		}
		for i := 0; i < len(key); i++ {
			if c := key[i]; c >= 0x80 || 'A' <= c && c <= 'Z' {
				t.Fatalf("Normalize(%q) = %q: not lower-case ASCII", in, key)
			}
		}
		host := key
		if !strings.HasPrefix(host, "[") {
			host, _, _ = strings.Cut(host, ":")
		} else if i := strings.LastIndexByte(host, ']'); i >= 0 {
			host = host[:i+1]
		}
		if !strings.HasSuffix(host, site) {
			t.Fatalf("Site(%q) = %q is not a suffix of %q", in, site, host)
		}
	})
}
