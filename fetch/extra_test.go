package fetch

import (
	"context"
	"io"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// countingResolver counts lookups per name.
type countingResolver struct {
	web   *politetest.Web
	calls atomic.Int32
}

func (r *countingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.calls.Add(1)
	return r.web.LookupNetIP(ctx, network, host)
}

// TestDNS_D8_CachedOneLookupInFlight: many concurrent first Gets to a host, and
// later ones, cost one DNS lookup (D8).
func TestDNS_D8_CachedOneLookupInFlight(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("dns.example")
	var paths []string
	for range 8 {
		paths = append(paths, s.AddArticle(politetest.Article{}).Path)
	}
	res := &countingResolver{web: web}
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond), WithResolver(res))
	var wg sync.WaitGroup
	for _, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Get(context.Background(), s.URL(p)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	c.base.CloseIdleConnections() // the next Get dials again, and resolves from the cache
	if _, err := c.Get(context.Background(), s.URL(paths[0])); err != nil {
		t.Fatal(err)
	}
	if n := res.calls.Load(); n != 1 {
		t.Fatalf("%d DNS lookups, want 1", n)
	}
}

// TestTransport_D10_NoProxyFromEnvironment: a proxy named in the environment is
// never used (D10: no proxy or address rotation; V10: we connect ourselves).
func TestTransport_D10_NoProxyFromEnvironment(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:9")
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:9")
	web := politetest.NewWeb(t)
	s := web.Site("noproxy.example")
	a := s.AddArticle(politetest.Article{})
	c := newClient(t, web, testPolicy(Vault(), time.Millisecond))
	if res, err := c.Get(context.Background(), s.URL(a.Path)); err != nil || !res.Complete() {
		t.Fatalf("Get with a proxy in the environment: %v", err)
	}
}

// TestHTTPClient_V10_ServiceAdoption: a service keeps its own http.Client code on
// HTTPClient(): robots, pacing and the redirect policy still apply.
func TestHTTPClient_V10_ServiceAdoption(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("service.example")
	a := s.AddArticle(politetest.Article{})
	s.Misbehave("/away", politetest.Behaviour{Kind: politetest.RedirectToHTTP})
	p := testPolicy(Vault(), auditInterval)
	c := newClient(t, web, p)
	hc := c.HTTPClient()
	if hc.Jar != nil || hc.Timeout != DefaultTimeout {
		t.Fatalf("jar %v, timeout %v", hc.Jar, hc.Timeout)
	}
	resp, err := hc.Get(s.URL(a.Path))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(body) == 0 || resp.TLS == nil {
		t.Fatalf("status %d, %d bytes, TLS %v", resp.StatusCode, len(body), resp.TLS != nil)
	}
	if _, err := hc.Get(s.URL("/away")); err == nil {
		t.Fatal("a redirect to http was followed")
	} else {
		refusal(t, err, NotHTTPS)
	}
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Fatal(rep)
	}
}

// TestSchedule_P1_TwoClientsOneBudget: two Clients (two processes) sharing one
// Schedule keep one host's interval between all their requests (P1). Each keeps
// its own connection, so the auditor's one-connection rule is not asked.
func TestSchedule_P1_TwoClientsOneBudget(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("shared.example")
	var paths []string
	for range 6 {
		paths = append(paths, s.AddArticle(politetest.Article{}).Path)
	}
	shared := &MemorySchedule{}
	p := testPolicy(Vault(), auditInterval)
	a := newClient(t, web, p, WithSchedule(shared))
	b := newClient(t, web, p, WithSchedule(shared))
	var wg sync.WaitGroup
	for i, path := range paths {
		c := a
		if i%2 == 1 {
			c = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Get(context.Background(), s.URL(path)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	ap := auditPolicy(p)
	ap.MaxInFlight, ap.MaxConnsPerHost = 2, 2
	if rep := web.Audit(ap); !rep.OK() {
		t.Fatal(rep)
	}
}
