package fetch

import (
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/politefetch/politefetch/politetest"
)

// TestIdentity_V9_AloneUnderHTTPClient: the Identity layer alone, under a plain
// http.Client, sends exactly the identity headers whatever the caller set, and
// the credential only to its hosts.
func TestIdentity_V9_AloneUnderHTTPClient(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	cms := web.Site("cms.example")
	other := web.Site("other.example")
	id := &identityLayer{
		UserAgent:  "AloneBot/1 (+https://alone.example)",
		Credential: Credential{Header: "X-Api-Key", Value: NewSecret("k3y"), Hosts: []string{"cms.example"}},
		Next:       web.Transport(),
	}
	hc := &http.Client{Transport: id}
	for _, s := range []*politetest.Site{cms, other} {
		req, _ := http.NewRequest(http.MethodGet, s.URL("/feed.xml"), nil)
		req.Header.Set("Cookie", "a=b")
		req.Header.Set("X-Request-Id", "1")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if req.Header.Get("Cookie") != "a=b" {
			t.Fatal("the caller's request was modified")
		}
	}
	reqs := web.Requests()
	want := map[string][]string{
		"cms.example":   {"Accept", "Accept-Encoding", "User-Agent", "X-Api-Key"},
		"other.example": {"Accept", "Accept-Encoding", "User-Agent"},
	}
	for _, r := range reqs {
		var got []string
		for k := range r.Header {
			got = append(got, k)
		}
		slices.Sort(got)
		if !slices.Equal(got, want[r.Host]) || r.Header.Get("User-Agent") != id.UserAgent || r.Header.Get("Accept-Encoding") != "identity" {
			t.Errorf("%s got headers %v (%v), want %v", r.Host, got, r.Header, want[r.Host])
		}
	}
}

// TestConditional_D4_AloneUnderHTTPClient: the conditional layer alone, under a
// plain http.Client, makes the second GET of a feed read in full conditional,
// and the server's 304 comes back as a response.
func TestConditional_D4_AloneUnderHTTPClient(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("feeds.example")
	s.AddArticle(politetest.Article{})
	hc := &http.Client{Transport: &conditional{Next: web.Transport()}}
	for i, want := range []int{200, 304} {
		resp, err := hc.Get(s.URL("/feed.xml"))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("read %d: status %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	reqs := web.Requests()
	if last := reqs[len(reqs)-1]; last.Header.Get("If-None-Match") == "" && last.Header.Get("If-Modified-Since") == "" {
		t.Fatalf("second read not conditional: %v", last.Header)
	}
}
