package tracking

import (
	"fmt"
	"net/url"
	"testing"
)

// TestIsDefault_V10 pins the table's matching: names and prefixes without
// regard to case, nothing else, and no allocation.
func TestIsDefault_V10(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"utm_source", true}, {"UTM_Campaign", true}, {"fbclid", true}, {"gclid", true},
		{"mc_cid", true}, {"PHPSESSID", true}, {"aspsessionidQWERTY", true},
		{"utm", false}, {"id", false}, {"page", false}, {"sid", false}, {"", false},
	} {
		if got := IsDefault(tc.name); got != tc.want {
			t.Errorf("IsDefault(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { IsDefault("utm_medium") }); n != 0 {
		t.Errorf("IsDefault allocates %v times", n)
	}
}

func TestDefaultIsACopy(t *testing.T) {
	d := Default()
	d[0] = "changed"
	if Default()[0] == "changed" {
		t.Fatal("Default returned the table itself")
	}
}

func ExampleIn() {
	keep := []string{"utm_campaign"}
	fmt.Println(In("UTM_CAMPAIGN", keep))
	fmt.Println(In("utm_source", keep))
	// Output:
	// true
	// false
}

// TestStrip_V10: tracking parameters are stripped, kept ones kept, the rest
// untouched in order and encoding; ";jsessionid" goes whatever its case.
func TestStrip_V10(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		keep     []string
	}{
		{"https://a.example/p?utm_source=x&id=7&UTM_Medium=y", "https://a.example/p?id=7", nil},
		{"https://a.example/p?fbclid=1&gclid=2&mc_cid=3&mc_eid=4&_ga=5", "https://a.example/p", nil},
		{"https://a.example/p?q=a%20b&x=%2F#frag", "https://a.example/p?q=a%20b&x=%2F", nil},
		{"https://a.example/p?utm_campaign=keep&b=1", "https://a.example/p?utm_campaign=keep&b=1", []string{"utm_campaign"}},
		{"https://a.example/p?utm_campaign=keep&b=1", "https://a.example/p?utm_campaign=keep&b=1", []string{"utm_*"}},
		{"https://a.example/p;jsessionid=ABC?x=1&PHPSESSID=9", "https://a.example/p?x=1", nil},
		{"https://a.example/p;JSESSIONID=ABC", "https://a.example/p", nil},
		{"https://a.example/p;jsessionid=ABC", "https://a.example/p;jsessionid=ABC", []string{"jsessionid"}},
		{"https://a.example/p?ASPSESSIONIDQWER=1&b=2", "https://a.example/p?b=2", nil},
		{"https://a.example/p?sid=5&page=2", "https://a.example/p?sid=5&page=2", nil},
		{"https://a.example/p?", "https://a.example/p", nil},
	} {
		u, err := url.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		Strip(u, Default(), tc.keep)
		if got := u.String(); got != tc.want {
			t.Errorf("Strip(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
