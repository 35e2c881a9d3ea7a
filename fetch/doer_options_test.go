package fetch

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestDoer_V10_SourceOptions: a Doer given a GetOptions.Source reads as that source on
// every Do: a feed redirected to a host the source does not admit is refused
// with HostNotAdmitted and the other host is never asked, a host outside the
// source is refused unsent, and a Doer without options still follows the
// policy's (empty: any host) admission. Many Dos share the option at once.
func TestDoer_V10_SourceOptions(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("news.example")
	s.AddArticle(politetest.Article{})
	other := web.Site("elsewhere.example")
	other.AddArticle(politetest.Article{})
	s.Misbehave("/feed.xml", politetest.Behaviour{Kind: politetest.RedirectToHost, Host: "elsewhere.example"})
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond))
	d := c.Doer(KindFeed, GetOptions{Source: &Source{Admitted: []string{"NEWS.example"}}})

	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := mustRequest(t, s.URL("/feed.xml"))
			if resp, err := d.Do(req); err == nil {
				resp.Body.Close()
				t.Errorf("a redirect to an unadmitted host was followed: status %d", resp.StatusCode)
			} else if re := (*RefusedError)(nil); !errors.As(err, &re) || re.Reason != HostNotAdmitted {
				t.Errorf("err = %v, want a refusal with HostNotAdmitted", err)
			}
		}()
	}
	wg.Wait()
	if _, err := d.Do(mustRequest(t, other.URL("/atom.xml"))); err == nil {
		t.Fatal("a host outside the source was read")
	} else {
		refusal(t, err, HostNotAdmitted)
	}
	for _, r := range web.Requests() {
		if r.Host == "elsewhere.example" {
			t.Fatalf("the unadmitted host was asked for %s", r.Path)
		}
	}
	// Without the source, the policy admits any host: the redirect is followed.
	status, _, _ := read(t, c.Doer(KindFeed), s.URL("/feed.xml"))
	if status != http.StatusOK {
		t.Fatalf("the policy's Doer: status %d, want the redirect followed to a 200", status)
	}
}
