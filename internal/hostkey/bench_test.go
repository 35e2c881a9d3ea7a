package hostkey

import "testing"

// The benchmarks time Normalize on the hosts a crawler sees per request:
//
//	go test -run='^$' -bench=Normalize -benchmem ./internal/hostkey/

var benchHosts = []struct{ name, in string }{
	{"normal", "www.news.example.com"},
	{"upper-port", "WWW.News.Example.COM:443"},
	{"idn", "bücher.example"},
	{"ipv4", "192.0.2.1"},
	{"ipv6", "[2001:DB8::1]:8443"},
}

// BenchmarkNormalize runs Normalize on typical inputs; the already-normal
// name must not allocate.
func BenchmarkNormalize(b *testing.B) {
	for _, h := range benchHosts {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Normalize(h.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestNormalizeKeyDoesNotAllocate pins the fast path: a host that is
// already its own key (lower-case ASCII DNS name, no port, no trailing dot)
// or a canonical IPv4 literal comes back as is, without allocating.
func TestNormalizeKeyDoesNotAllocate(t *testing.T) {
	for _, in := range []string{"example.com", "www.news.example.com", "my_host.example.com", "xn--bcher-kva.example", "localhost", "192.0.2.1"} {
		if n := testing.AllocsPerRun(100, func() {
			if got, err := Normalize(in); err != nil || got != in {
				t.Fatalf("Normalize(%q) = %q, %v", in, got, err)
			}
		}); n != 0 {
			t.Errorf("Normalize(%q) allocates %v times per run, want 0", in, n)
		}
	}
	// A non-default port on a normal name is kept and costs the key; the
	// default port and upper case are dropped without a ParseAddr error.
	if n := testing.AllocsPerRun(100, func() { _, _ = Normalize("example.com:443") }); n != 0 {
		t.Errorf(`Normalize("example.com:443") allocates %v times per run, want 0`, n)
	}
}

// TestIsKeyNameAgreesWithNormalize: the fast path takes only names the
// full path (slowName) would return unchanged. FuzzHostKey checks the same
// on every input.
func TestIsKeyNameAgreesWithNormalize(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"example.com", "a", "a-b.c_d", "1.2.3.4", "1.2.3.04", "a.0x1", "a.123", "123.a", "-a.com", "a-.com",
		"a..b", "a.", ".a", "A.com", "a:443", "xn--bcher-kva.example", "0x7f.1", "r3---sn-abc.googlevideo.com",
	} {
		if !isKeyName(in) {
			continue
		}
		name, err := slowName(in, in)
		if err != nil || name != in {
			t.Errorf("isKeyName(%q) but slowName gives %q, %v", in, name, err)
		}
	}
}
