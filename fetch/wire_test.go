package fetch

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawServer is a TLS listener on loopback that records every request's bytes as
// received and answers from a table: the proof of what we put on the wire (V9).
type rawServer struct {
	ln    net.Listener
	roots *x509.CertPool
	mu    sync.Mutex
	reqs  []rawRequest
	// answer returns the response bytes for a request line and host.
	answer func(host, target string) string
	wg     sync.WaitGroup
}

type rawRequest struct {
	Host    string   // from the Host header
	Line    string   // the request line
	Headers []string // every header line but Host, as sent, in order
}

func newRawServer(t *testing.T, answer func(host, target string) string) *rawServer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "raw test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		DNSNames:              []string{"*.example", "*.test"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		NextProtos:   []string{"http/1.1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, roots: roots, answer: answer}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *rawServer) serve() {
	defer s.wg.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(c)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				r := rawRequest{Line: strings.TrimRight(line, "\r\n")}
				for {
					h, err := br.ReadString('\n')
					if err != nil {
						return
					}
					h = strings.TrimRight(h, "\r\n")
					if h == "" {
						break
					}
					if name, v, _ := strings.Cut(h, ":"); strings.EqualFold(name, "Host") {
						r.Host = strings.TrimSpace(v)
						continue
					}
					r.Headers = append(r.Headers, h)
				}
				s.mu.Lock()
				s.reqs = append(s.reqs, r)
				s.mu.Unlock()
				target := strings.Fields(r.Line)[1]
				a := s.answer(r.Host, target)
				if ans, ok := strings.CutSuffix(a, rawCut); ok {
					c.Write([]byte(ans))
					c.(*tls.Conn).NetConn().Close() // a FIN, no close_notify
					return
				}
				if ans, ok := strings.CutSuffix(a, rawClose); ok {
					c.Write([]byte(ans))
					c.Close() // close_notify, then the FIN
					return
				}
				if ans, ok := strings.CutSuffix(a, rawHang); ok {
					c.Write([]byte(ans))
					br.ReadByte() // until the client hangs up
					return
				}
				if _, err := c.Write([]byte(a)); err != nil {
					return
				}
			}
		}()
	}
}

func (s *rawServer) requests() []rawRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// dial sends every address to the listener.
func (s *rawServer) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, s.ln.Addr().String())
}

// LookupNetIP resolves every name to loopback.
func (s *rawServer) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// Suffixes of a rawServer answer: after writing the answer, the server
// closes the TCP connection without a TLS close_notify (rawCut), says
// close_notify and closes (rawClose), or waits for the client to hang up
// (rawHang).
const (
	rawCut   = "\x00cut"
	rawClose = "\x00close"
	rawHang  = "\x00hang"
)

func rawOK(body string) string {
	return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + itoa(len(body)) + "\r\nSet-Cookie: s=1\r\n\r\n" + body
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestWire_V9_ExactlyFourHeaders proves on the wire that the vault policy sends
// exactly User-Agent, Accept, Accept-Encoding: identity and the credential — the
// credential only to its admitted host (V9b), never after a redirect to another
// host, no Referer added by Go on the redirect, no cookie sent back, no
// Connection: close.
func TestWire_V9_ExactlyFourHeaders(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(host, target string) string {
		switch {
		case target == "/robots.txt":
			return rawOK("User-agent: *\nAllow: /\n")
		case host == "cms.example" && target == "/moved":
			return "HTTP/1.1 302 Found\r\nLocation: https://cdn.example/final\r\nContent-Length: 0\r\nSet-Cookie: a=b\r\n\r\n"
		}
		return rawOK("article")
	})
	p := withIdentity(Vault())
	p.Interval = 5 * time.Millisecond
	p.Admitted = []string{"cms.example", "cdn.example"}
	p.Credential = Credential{Header: "X-Api-Key", Value: NewSecret("s3cret"), Hosts: []string{"cms.example"}}
	c, err := New(p, WithNetwork(Network{Resolver: srv, Dial: srv.dial, RootCAs: srv.roots, Allow: []netip.Prefix{loopback}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for _, u := range []string{"https://cms.example/a", "https://cms.example/b", "https://cms.example/moved"} {
		res, err := c.Get(ctx, u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if !res.Complete() {
			t.Fatalf("%s: not complete: %v", u, res.Depositable())
		}
	}
	ua := "User-Agent: " + p.UserAgent()
	accept := "Accept: " + DefaultAccept
	withCred := []string{ua, accept, "Accept-Encoding: identity", "X-Api-Key: s3cret"}
	robotsHdr := []string{ua, "Accept: text/plain, */*;q=0.5", "Accept-Encoding: identity"}
	want := []struct {
		host, line string
		headers    []string
	}{
		{"cms.example", "GET /robots.txt HTTP/1.1", robotsHdr}, // the credential is for the source's documents only
		{"cms.example", "GET /a HTTP/1.1", withCred},
		{"cms.example", "GET /b HTTP/1.1", withCred},
		{"cms.example", "GET /moved HTTP/1.1", withCred},
		{"cdn.example", "GET /robots.txt HTTP/1.1", robotsHdr},
		{"cdn.example", "GET /final HTTP/1.1", []string{ua, accept, "Accept-Encoding: identity"}},
	}
	got := srv.requests()
	if len(got) != len(want) {
		t.Fatalf("got %d requests, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Host != w.host || g.Line != w.line || !slices.Equal(g.Headers, w.headers) {
			t.Errorf("request %d:\n got  %s %q %q\n want %s %q %q", i, g.Host, g.Line, g.Headers, w.host, w.line, w.headers)
		}
	}
}

// TestWire_S7_ImageReferer proves that an image Get carries the article page as
// Referer on every hop, the image Accept, and nothing else (S7).
func TestWire_S7_ImageReferer(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(host, target string) string {
		if target == "/robots.txt" {
			return rawOK("")
		}
		return "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 3\r\n\r\nPNG"
	})
	p := testPolicy(StrictNews(), 5*time.Millisecond)
	c, err := New(p, WithNetwork(Network{Resolver: srv, Dial: srv.dial, RootCAs: srv.roots, Allow: []netip.Prefix{loopback}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Get(context.Background(), "https://img.example/1.png", GetOptions{Kind: KindImage, Referer: "https://news.example/story"})
	if err != nil || !res.Complete() {
		t.Fatalf("Get: %v %v", err, res)
	}
	got := srv.requests()
	want := []string{"User-Agent: " + p.UserAgent(), "Accept: " + ImageAccept, "Accept-Encoding: identity", "Referer: https://news.example/story"}
	if len(got) != 2 || !slices.Equal(got[1].Headers, want) {
		t.Fatalf("image request headers %q, want %q", got, want)
	}
	if slices.ContainsFunc(got[0].Headers, func(h string) bool { return strings.HasPrefix(h, "Referer") }) {
		t.Fatalf("robots.txt request carries a Referer: %q", got[0].Headers)
	}
}
