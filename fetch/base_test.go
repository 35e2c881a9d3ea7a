package fetch

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
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
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond), WithNetwork(Network{Resolver: res}))
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

// TestTransport_LinesLongerThanItsBuffers: the base transport's buffers
// are small (a request's bytes, a page's first reads), and a request line
// or a response header longer than them still goes whole: a 6 KiB query
// arrives as sent, and a 16 KiB header (under the 64 KiB bound) comes back
// whole with its page.
func TestTransport_LinesLongerThanItsBuffers(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("long.example")
	long := strings.Repeat("b", 16<<10)
	var gotQuery atomic.Value
	s.Handle("/page", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotQuery.Store(r.URL.RawQuery)
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-Long", long)
		w.Write([]byte("<p>ok</p>"))
	}))
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond))
	q := "q=" + strings.Repeat("a", 6<<10)
	res, err := c.Get(context.Background(), s.URL("/page?"+q))
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Body) != "<p>ok</p>" {
		t.Fatalf("body %q", res.Body)
	}
	if got := res.Header.Get("X-Long"); got != long {
		t.Fatalf("the 16 KiB header came back as %d bytes", len(got))
	}
	if got, _ := gotQuery.Load().(string); got != q {
		t.Fatalf("the server saw a query of %d bytes, want %d", len(got), len(q))
	}
}
