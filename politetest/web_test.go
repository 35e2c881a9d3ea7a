package politetest

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

func get(t *testing.T, c *http.Client, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "PoliteBot/1.0 (+https://bot.example/info)")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp, body
}

func TestWebServesVirtualSitesOverTLS(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	a := w.Site("news-17.example")
	art := a.AddArticle(Article{Title: "Hello"})
	w.Site("other.example")
	c := w.Client()

	resp, body := get(t, c, w.URL("news-17.example", "/robots.txt"))
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Sitemap: https://news-17.example/sitemap_index.xml") {
		t.Fatalf("robots: %d %q", resp.StatusCode, body)
	}
	if resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 || resp.Proto != "HTTP/1.1" {
		t.Fatalf("TLS %v proto %s", resp.TLS, resp.Proto)
	}
	if got := resp.TLS.PeerCertificates[0].DNSNames; len(got) != 1 || got[0] != "news-17.example" {
		t.Fatalf("leaf names %v", got)
	}
	resp, body = get(t, c, w.URL("news-17.example", art.Path))
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<h1>Hello</h1>") {
		t.Fatalf("article: %d %q", resp.StatusCode, body)
	}
	resp, _ = get(t, c, w.URL("other.example", art.Path))
	if resp.StatusCode != 404 {
		t.Fatalf("article on the other site: %d, want 404", resp.StatusCode)
	}

	reqs := w.Requests()
	if len(reqs) != 3 {
		t.Fatalf("recorded %d requests, want 3", len(reqs))
	}
	r := reqs[1]
	if r.Host != "news-17.example" || r.SNI != "news-17.example" || r.Target != art.Path || r.Status != 200 ||
		r.Header.Get("User-Agent") != "PoliteBot/1.0 (+https://bot.example/info)" || r.Finished.Before(r.Arrived) || r.Conn == 0 {
		t.Fatalf("record %+v", r)
	}
	if reqs[0].Conn != reqs[1].Conn || reqs[2].Conn == reqs[1].Conn {
		t.Fatalf("connections %d %d %d: want the first two shared, the third new", reqs[0].Conn, reqs[1].Conn, reqs[2].Conn)
	}
	// The first request on a connection starts when the connection opened
	// (its handshake does not count): when accepted, or when its first
	// bytes reached the kernel if earlier. A later one starts when its
	// bytes reached the server (on Linux the kernel's receive time,
	// elsewhere when handled): after the answer before it, not after its
	// handling.
	conns := w.Connections()
	if len(conns) != 2 || conns[0].ID != reqs[0].Conn || conns[0].Host != "news-17.example" || conns[0].Requests != 2 || !conns[0].TLS {
		t.Fatalf("connections %+v", conns)
	}
	if reqs[0].Start.After(conns[0].Opened) || !reqs[0].Start.Before(reqs[0].Arrived) ||
		reqs[1].Start.Before(reqs[0].Finished) || reqs[1].Start.After(reqs[1].Arrived) {
		t.Fatalf("starts: first %v (opened %v, arrived %v, finished %v), second %v (arrived %v)",
			reqs[0].Start, conns[0].Opened, reqs[0].Arrived, reqs[0].Finished, reqs[1].Start, reqs[1].Arrived)
	}
}

func TestWebResolvesAndDials(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	w.Site("a.example")
	w.Site("ssrf.example").ResolveTo(netip.MustParseAddr("10.0.0.8"))
	ctx := context.Background()
	for _, tc := range []struct {
		host string
		want string
	}{
		{"a.example", w.IP().String()},
		{"ssrf.example", "10.0.0.8"},
		{"192.168.1.1", "192.168.1.1"},
	} {
		got, err := w.LookupNetIP(ctx, "ip", tc.host)
		if err != nil || len(got) != 1 || got[0].String() != tc.want {
			t.Errorf("LookupNetIP(%s) = %v, %v; want %s", tc.host, got, err, tc.want)
		}
	}
	_, err := w.LookupNetIP(ctx, "ip", "nowhere.example")
	var dns *net.DNSError
	if !errors.As(err, &dns) || !dns.IsNotFound {
		t.Errorf("LookupNetIP(nowhere) error %v, want a not-found DNSError", err)
	}
	if _, err := w.DialContext(ctx, "tcp", "nowhere.example:443"); !errors.As(err, &dns) {
		t.Errorf("DialContext(nowhere) error %v, want a DNSError", err)
	}
	conn, err := w.DialContext(ctx, "tcp", "10.0.0.8:443")
	if err != nil {
		t.Fatalf("DialContext to a declared address: %v", err)
	}
	conn.Close()
}
