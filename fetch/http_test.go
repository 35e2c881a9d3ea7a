package fetch

import (
	"context"
	"testing"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// TestHTTP_AllowHTTPEndToEnd: a policy that allows plain http reads a
// plain-http site through the whole chain, robots.txt first and over http
// too (RFC 9309 §2.3: the file applies to the scheme it was read from),
// with the site's rules obeyed and the auditor finding nothing; the default
// policy, https only, refuses the same URLs without sending anything (V10).
func TestHTTP_AllowHTTPEndToEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		allowHTTP bool
	}{{"AllowHTTP", true}, {"DefaultHTTPSOnly", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web := politetest.NewWeb(t)
			s := web.Site("plain.example")
			s.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /private/\n"})
			a := s.AddArticle(politetest.Article{Title: "Over plain http"})
			p := testPolicy(Digest(), auditInterval)
			p.AllowHTTP = tc.allowHTTP
			c := newClient(t, web, p)
			ctx := context.Background()
			base := "http://plain.example"
			if !tc.allowHTTP {
				for _, path := range []string{"/feed.xml", a.Path} {
					_, err := c.Get(ctx, base+path)
					refusal(t, err, NotHTTPS)
				}
				if n := len(web.Requests()); n != 0 {
					t.Fatalf("%d requests reached the web under an https-only policy", n)
				}
				return
			}
			for _, tg := range []struct {
				path string
				opts []GetOptions
			}{{"/feed.xml", []GetOptions{{Kind: KindFeed}}}, {a.Path, nil}} {
				res, err := c.Get(ctx, base+tg.path, tg.opts...)
				if err != nil {
					t.Fatalf("Get(%s): %v", tg.path, err)
				}
				if res.Status != 200 || !res.Complete() || len(res.Body) == 0 {
					t.Fatalf("Get(%s) = status %d, complete %v, %d bytes", tg.path, res.Status, res.Complete(), len(res.Body))
				}
			}
			_, err := c.Get(ctx, base+"/private/x")
			refusal(t, err, Robots)
			reqs := web.Requests()
			if len(reqs) != 3 || reqs[0].Path != "/robots.txt" {
				t.Fatalf("requests = %d, first %q; want robots.txt, the feed and the article", len(reqs), reqs[0].Path)
			}
			for _, r := range reqs {
				if r.TLS || r.Path == "/private/x" {
					t.Errorf("request %s (TLS %v): want plain http only, nothing disallowed", r.Path, r.TLS)
				}
			}
			if rep := web.Audit(auditPolicy(p)); !rep.OK() {
				t.Fatal(rep)
			}
		})
	}
}

// TestRobotsPolicy_ReachesTheCache: what a Policy says of robots.txt (its
// status rules, TTL, retry interval, what a failure after a good copy does,
// and whether plain http is read) is what the client's robots cache does.
func TestRobotsPolicy_ReachesTheCache(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	for _, tc := range []struct {
		name      string
		onFailure robots.FailureMode
		allowHTTP bool
	}{{"Defaults", robots.FailDisallowAll, false}, {"UseLastGoodOverHTTP", robots.UseLastGood, true}} {
		p := testPolicy(Vault(), auditInterval)
		p.Robots.OnFailure, p.AllowHTTP = tc.onFailure, tc.allowHTTP
		c := newClient(t, web, p)
		got := c.robots.Policy
		want := robots.Policy{Status: p.Robots.Status, TTL: p.Robots.TTL, RetryInterval: p.Robots.RetryInterval, OnFailure: tc.onFailure}
		if got != want || c.robots.AllowHTTP != tc.allowHTTP {
			t.Errorf("%s: robots cache policy %+v, AllowHTTP %v; want %+v, %v", tc.name, got, c.robots.AllowHTTP, want, tc.allowHTTP)
		}
	}
}
