package tracking

import (
	"fmt"
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
