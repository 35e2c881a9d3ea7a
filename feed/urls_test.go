package feed

import (
	"net/url"
	"testing"
)

// TestLinks_V10 proves the links feed reads are cleaned by the module's one
// cleaner: made absolute, tracking parameters stripped but those the source
// keeps (names or "prefix*" patterns), fragments and ";jsessionid" path
// parameters gone, anything but an absolute http(s) URL dropped.
func TestLinks_V10(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://example.test/news/feed.xml")
	tests := []struct {
		in   string
		keep []string
		want string
	}{
		{"https://example.test/a?utm_source=x&utm_medium=y", nil, "https://example.test/a"},
		{"https://example.test/a?id=3&fbclid=z&b=%20c", nil, "https://example.test/a?id=3&b=%20c"},
		{"https://example.test/a?UTM_Campaign=x&gclid=1&mc_cid=2&mc_eid=3&msclkid=4", nil, "https://example.test/a"},
		{"https://example.test/a?PHPSESSID=1&p=2", nil, "https://example.test/a?p=2"},
		{"https://example.test/a?sid=1&p=2", nil, "https://example.test/a?sid=1&p=2"}, // ambiguous: some sites number content with it
		{"https://example.test/a?phpsessid=1&p=2", []string{"PHPSESSID"}, "https://example.test/a?phpsessid=1&p=2"},
		{"https://example.test/a?utm_source=x&utm_medium=y&gclid=1", []string{"utm_*"}, "https://example.test/a?utm_source=x&utm_medium=y"},
		{"https://example.test/a;jsessionid=ABC?x=1", nil, "https://example.test/a?x=1"},
		{"https://example.test/a;JSESSIONID=ABC", nil, "https://example.test/a"},
		{"https://example.test/a;jsessionid=ABC", []string{"jsessionid"}, "https://example.test/a;jsessionid=ABC"},
		{"../b?utm_term=q#frag", nil, "https://example.test/b"},
		{"//cdn.example.test/i.jpg", nil, "https://cdn.example.test/i.jpg"},
		{"javascript:alert(1)", nil, ""},
		{"mailto:a@example.test", nil, ""},
		{"", nil, ""},
		{"http://[::1", nil, ""},
		{"//::", nil, ""},
		{"//:80/a", nil, ""},
		{"https://bad_host!/a", nil, ""},
		{"https://Example.TEST:443/a", nil, "https://Example.TEST:443/a"}, // the chain keys hosts; links keep theirs
	}
	for _, tt := range tests {
		if got := newLinkCleaner(tt.keep).link(base, tt.in); got != tt.want {
			t.Errorf("link(%q, keep %v) = %q, want %q", tt.in, tt.keep, got, tt.want)
		}
	}
}

// TestCMSID_V3 reads the CMS identifier where a CMS writes it, and never
// derives one from an ordinary address.
func TestCMSID_V3(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://example.test/?p=123", "123"},
		{"http://example.test/blog/?p=7", "7"},
		{"https://example.test/index.php?p=42", "42"},
		{"https://example.test/wp-json/wp/v2/posts/123", "123"},
		{"https://example.test/wp-json/wp/v2/posts/123/", "123"},
		{"https://example.test/wp-json/wp/v2/posts/abc", ""},
		{"https://example.test/2026/11/30/story/", ""},
		{"https://example.test/story?p=123", ""},
		{"https://example.test/?p=12a", ""},
		{"https://example.test/?p=1&p=2", ""},
		{"tag:example.test,2026:post-41", ""},
		{"123", ""},
	}
	for _, tt := range tests {
		if got := CMSID(tt.in); got != tt.want {
			t.Errorf("CMSID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
