package procid

import "testing"

// An identity reads back as String wrote it; what String would not write
// is no identity.
func TestParse_RoundTrip(t *testing.T) {
	p := Process{Boot: "6f1c2d3e-aaaa-bbbb-cccc-0123456789ab", PIDNS: "4026531836", PID: 4242, Start: "1234567"}
	s := p.String()
	if s != "6f1c2d3e-aaaa-bbbb-cccc-0123456789ab:4026531836:4242:1234567" {
		t.Fatalf("String = %q", s)
	}
	if got, ok := Parse(s); !ok || got != p {
		t.Fatalf("Parse(%q) = %+v, %v; want %+v", s, got, ok, p)
	}
	if (Process{PID: 7}).String() != "" {
		t.Error("an identity not Known has a string")
	}
	for _, bad := range []string{"", "a:b:c", "a:b:0:1", "a:b:-1:1", "a:b:+7:1", "a:b:7:", ":b:7:1", "a:b:7:1:2", "a:b:07:1"} {
		if _, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) is an identity", bad)
		}
	}
}

// FuzzParse: whatever Parse accepts, String writes back the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"6f1c:4026531836:4242:1234567", "", "a:b:07:1", "::::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := Parse(s)
		if !ok {
			return
		}
		if got := p.String(); got != s {
			t.Fatalf("Parse(%q) = %+v, whose String is %q", s, p, got)
		}
	})
}
