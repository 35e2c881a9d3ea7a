package hostkey

import (
	"errors"
	"net/url"
	"testing"
)

// P1: politeness is per host, so every spelling of one host must give one key.
func TestNormalizeP1OneHostOneKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"example.com", "example.com"},
		{"Example.COM:443", "example.com"},
		{"example.com.", "example.com"},
		{"EXAMPLE.com.:443", "example.com"},
		{"example.com:", "example.com"},
		{"example.com:0443", "example.com"},
		{"example.com:8443", "example.com:8443"},
		{"example.com:80", "example.com:80"}, // https assumed: 80 is not its default
		{"www.example.com", "www.example.com"},
		{"bücher.example", "xn--bcher-kva.example"},
		{"BÜCHER.example", "xn--bcher-kva.example"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"ｅｘａｍｐｌｅ。com", "example.com"}, // full-width letters and ideographic full stop
		{"münchen.de:443", "xn--mnchen-3ya.de"},
		{"my_host.example.com", "my_host.example.com"},
		{"r3---sn-abc.googlevideo.com", "r3---sn-abc.googlevideo.com"},
		{"192.0.2.1", "192.0.2.1"},
		{"192.0.2.1:443", "192.0.2.1"},
		{"192.0.2.1:8080", "192.0.2.1:8080"},
		{"192.0.2.1.", "192.0.2.1"},
		{"１９２.０.２.１", "192.0.2.1"}, // full-width digits
		{"[2001:DB8::1]", "[2001:db8::1]"},
		{"[2001:db8:0:0::1]:443", "[2001:db8::1]"},
		{"[2001:db8::1]:8443", "[2001:db8::1]:8443"},
		{"2001:db8::1", "[2001:db8::1]"},
		{"[fe80::1%25eth0]", "[fe80::1]"},
		{"[::ffff:192.0.2.1]", "[::ffff:192.0.2.1]"},
	}
	for _, tt := range tests {
		got, err := Normalize(tt.in)
		if err != nil {
			t.Errorf("Normalize(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
		again, err := Normalize(got)
		if err != nil || again != got {
			t.Errorf("Normalize(%q) = %q, %v; a key must be its own key", got, again, err)
		}
	}
}

func TestNormalizeSchemeDefaultPorts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scheme, in, want string
	}{
		{"https", "example.com:443", "example.com"},
		{"HTTPS", "example.com:443", "example.com"},
		{"https", "example.com:80", "example.com:80"},
		{"http", "example.com:80", "example.com"},
		{"http", "example.com:443", "example.com:443"},
		{"wss", "example.com:443", "example.com"},
		{"ws", "example.com:80", "example.com"},
		{"ftp", "example.com:21", "example.com:21"},
	}
	for _, tt := range tests {
		got, err := NormalizeScheme(tt.scheme, tt.in)
		if err != nil || got != tt.want {
			t.Errorf("NormalizeScheme(%q, %q) = %q, %v; want %q", tt.scheme, tt.in, got, err, tt.want)
		}
	}
}

func TestNormalizeRefusesInvalid(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"",
		".",
		"example..com",
		"example.com..",
		".example.com",
		"-example.com",
		"example-.com",
		"exa mple.com",
		"user@example.com",
		"example.com/path",
		"example.com:https",
		"example.com:65536",
		"example.com:0",
		"example.com:-1",
		"[2001:db8::1",
		"[2001:db8::1]x",
		"[192.0.2.1]",
		"[not-an-ip]",
		"1.2.3.04",
		"0x7f.1",
		"example.123",
		"a\x00b.com",
		"exa*mple.com",
		string(make([]byte, 300)), // NULs
	} {
		got, err := Normalize(in)
		if err == nil {
			t.Errorf("Normalize(%q) = %q, want an error", in, got)
			continue
		}
		var he *HostError
		if !errors.Is(err, ErrInvalidHost) || !errors.As(err, &he) || he.Host != in {
			t.Errorf("Normalize(%q) error %v is not a *HostError matching ErrInvalidHost", in, err)
		}
	}
	long := ""
	for range 26 {
		long += "abcdefghi."
	}
	if _, err := Normalize(long + "com"); err == nil {
		t.Error("a 263-octet name was accepted")
	}
	if _, err := Normalize("a234567890123456789012345678901234567890123456789012345678901234.com"); err == nil {
		t.Error("a 64-octet label was accepted")
	}
	if _, err := Normalize("a\u200db.example"); err == nil { // ZWJ outside a joiner context
		t.Error("an invalid IDN was accepted")
	}
}

func TestFromURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw, want string
	}{
		{"https://Example.COM:443/a?b", "example.com"},
		{"https://example.com./", "example.com"},
		{"http://example.com:80/", "example.com"},
		{"http://example.com:443/", "example.com:443"},
		{"https://user:pw@example.com/", "example.com"},
		{"https://[2001:db8::1]:443/", "[2001:db8::1]"},
		{"https://b%C3%BCcher.example/", "xn--bcher-kva.example"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := FromURL(u)
		if err != nil || got != tt.want {
			t.Errorf("FromURL(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
		}
	}
	if _, err := FromURL(nil); !errors.Is(err, ErrInvalidHost) {
		t.Errorf("FromURL(nil) error = %v", err)
	}
	if _, err := FromURL(&url.URL{Scheme: "https", Path: "/x"}); !errors.Is(err, ErrInvalidHost) {
		t.Errorf("FromURL without host: error = %v", err)
	}
}

// P1 per site: hosts of one registrable domain share a site key.
func TestSiteP1RegistrableDomain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"example.com", "example.com"},
		{"www.example.com", "example.com"},
		{"a.b.Example.COM.:443", "example.com"},
		{"news.example.co.uk", "example.co.uk"},
		{"a.b.example.co.uk:8443", "example.co.uk"},
		{"foo.blogspot.com", "foo.blogspot.com"}, // private suffix: each blog is a site
		{"bücher.example.de", "example.de"},
		{"co.uk", "co.uk"}, // a public suffix is its own site
		{"localhost", "localhost"},
		{"192.0.2.1:443", "192.0.2.1"},
		{"[2001:db8::1]:8443", "[2001:db8::1]"},
		{"Bad..Host", "bad..host"},
	}
	for _, tt := range tests {
		if got := Site(tt.in); got != tt.want {
			t.Errorf("Site(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
