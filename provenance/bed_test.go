package provenance_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/politefetch/politefetch/provenance"
)

// envelope is what the test publisher serves at /article.

// bed is a loopback publisher: one TLS server that picks its certificate by
// SNI (see pki.certificate) and one plain-http server, both reachable under
// any host name through the bed's dialer.
type bed struct {
	pki       *pki
	tlsPort   string
	httpPort  string
	tlsAddr   string
	httpAddr  string
	loopbacks []netip.Prefix
}

func newBed(t *testing.T) *bed {
	t.Helper()
	b := &bed{pki: newPKI(), loopbacks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("ETag", `"v1"`)
		w.Write(envelope)
	})
	mux.HandleFunc("/r1", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/r2", http.StatusFound) // relative Location
	})
	mux.HandleFunc("/r2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://"+r.Host+"/article", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/to-http", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+hostOnly(r.Host)+":"+b.httpPort+"/bounce", http.StatusFound)
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = &tls.Config{
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			return b.pki.Certificate(hello.ServerName), nil
		},
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://"+hostOnly(r.Host)+":"+b.tlsPort+"/article", http.StatusFound)
	}))
	t.Cleanup(plain.Close)
	b.tlsAddr = srv.Listener.Addr().String()
	b.httpAddr = plain.Listener.Addr().String()
	_, b.tlsPort, _ = net.SplitHostPort(b.tlsAddr)
	_, b.httpPort, _ = net.SplitHostPort(b.httpAddr)
	return b
}

func hostOnly(hostport string) string {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport
	}
	return h
}

// url returns https://host:port/path on the bed's TLS server.
func (b *bed) url(host, path string) string {
	return "https://" + net.JoinHostPort(host, b.tlsPort) + path
}

// capture fetches raw over real TLS on loopback, following redirects by hand
// the way the fetch chain does, and returns the proof it records and the
// envelope. Instants are fixed: the read at at, handshakes just before. With
// verifyTLS the client also checks the chain during the handshake (roots: the
// test root, time: at); otherwise it records whatever the server presents,
// which is how the broken cases are captured.
func (b *bed) capture(t *testing.T, raw string, at time.Time, verifyTLS bool) (*provenance.Proof, []byte) {
	t.Helper()
	tr := &http.Transport{
		Proxy:              nil,
		DisableCompression: true,
		DisableKeepAlives:  true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, _ := net.SplitHostPort(addr)
			target := b.tlsAddr
			if port == b.httpPort {
				target = b.httpAddr
			}
			var d net.Dialer
			return d.DialContext(ctx, network, target)
		},
		TLSClientConfig: &tls.Config{
			RootCAs:            b.pki.Pool,
			Time:               func() time.Time { return at },
			InsecureSkipVerify: !verifyTLS, // recording only; provenance.Verify judges the chain
		},
	}
	defer tr.CloseIdleConnections()
	p := &provenance.Proof{Schema: provenance.Schema, RequestedURL: raw, ReadAt: at, SDKVersion: provenance.SDKVersion}
	next := raw
	for i := 0; ; i++ {
		if i > 10 {
			t.Fatalf("capture %s: too many redirects", raw)
		}
		u, err := url.Parse(next)
		if err != nil {
			t.Fatal(err)
		}
		var remote netip.Addr
		trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
			if ap, err := netip.ParseAddrPort(ci.Conn.RemoteAddr().String()); err == nil {
				remote = ap.Addr()
			}
		}}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, next, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("capture %s: %v", next, err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		loc := resp.Header.Get("Location")
		// Handshakes are stamped a few milliseconds before the read, in order.
		hs := at.Add(-time.Duration(10-i) * time.Millisecond)
		p.Hops = append(p.Hops, provenance.HopFromTLS(u, resp.StatusCode, loc, remote, resp.TLS, hs))
		if resp.StatusCode/100 == 3 && loc != "" {
			lu, err := u.Parse(loc)
			if err != nil {
				t.Fatal(err)
			}
			next = lu.String()
			continue
		}
		p.FinalURL = next
		p.Digest = provenance.DigestOf(body)
		p.Length = int64(len(body))
		p.CodingsRemoved = []string{}
		return p, body
	}
}
