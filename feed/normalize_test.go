package feed

import "testing"

// TestDeclaresUTF8 reads an XML declaration's encoding: stray bytes are
// repaired only in a document that says (or defaults to) UTF-8.
func TestDeclaresUTF8(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{`<rss>`, true},
		{`<?xml version="1.0"?><rss>`, true},
		{`<?xml version="1.0" encoding="UTF-8"?><rss>`, true},
		{`  <?xml version='1.0' encoding='utf8' ?><rss>`, true},
		{`<?xml version="1.0" encoding="ISO-8859-1"?><rss>`, false},
		{`<?xml version="1.0" encoding = "windows-1252"?><rss>`, false},
		{`{"version": "https://jsonfeed.org/version/1.1"}`, true},
	}
	for _, tt := range tests {
		if got := declaresUTF8([]byte(tt.in)); got != tt.want {
			t.Errorf("declaresUTF8(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
