package provenance_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/provenance/warc"
)

// fetchProof reads raw through rt the way the fetch chain does (redirects
// followed by hand, the TLS state of every hop recorded, Accept-Encoding:
// identity) with real instants, and returns the proof and the envelope.
// A fresh transport per read, so that every handshake of a read is seen
// (a connection reused within the read keeps its handshake instant).
func fetchProof(t *testing.T, w *politetest.Web, raw string) (*provenance.Proof, []byte) {
	t.Helper()
	rt := w.Transport()
	rt.DisableCompression = true
	defer rt.CloseIdleConnections()
	p := &provenance.Proof{Schema: provenance.Schema, RequestedURL: raw, SDKVersion: provenance.SDKVersion, CodingsRemoved: []string{}}
	handshakes := map[string]time.Time{} // local address of a connection → its handshake instant
	next := raw
	for hop := 0; hop <= 10; hop++ {
		u, err := url.Parse(next)
		if err != nil {
			t.Fatal(err)
		}
		var (
			remote  netip.Addr
			local   string
			shakeAt time.Time
		)
		trace := &httptrace.ClientTrace{
			TLSHandshakeDone: func(tls.ConnectionState, error) { shakeAt = time.Now() },
			GotConn: func(ci httptrace.GotConnInfo) {
				local = ci.Conn.LocalAddr().String()
				if ap, err := netip.ParseAddrPort(ci.Conn.RemoteAddr().String()); err == nil {
					remote = ap.Addr()
				}
			},
		}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, next, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", "provenance-test/1")
		req.Header.Set("Accept", "text/html")
		req.Header.Set("Accept-Encoding", "identity") // V9
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatalf("fetch %s: %v", next, err)
		}
		body := io.LimitReader(resp.Body, 4<<20)
		if c := resp.Header.Get("Content-Encoding"); c != "" && c != "identity" {
			t.Fatalf("asked for identity, got Content-Encoding %q", c)
		}
		d := provenance.NewDigest()
		env, err := io.ReadAll(io.TeeReader(body, d))
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		readAt := time.Now().UTC()
		if !shakeAt.IsZero() {
			handshakes[local] = shakeAt
		}
		loc := resp.Header.Get("Location")
		p.Hops = append(p.Hops, provenance.HopFromTLS(u, resp.StatusCode, loc, remote, resp.TLS, handshakes[local]))
		if resp.StatusCode/100 == 3 && loc != "" {
			lu, err := u.Parse(loc)
			if err != nil {
				t.Fatal(err)
			}
			next = lu.String()
			continue
		}
		p.FinalURL, p.ReadAt, p.Digest, p.Length = next, readAt, d.Sum(), d.Len()
		return p, env
	}
	t.Fatalf("fetch %s: too many redirects", raw)
	return nil, nil
}

// TestVerify_V6_Politetest: a proof captured from a real TLS fetch over
// politetest verifies offline at its instant, against the web's CA, and
// fails with the right reason for each broken case.
func TestVerify_V6_Politetest(t *testing.T) {
	t.Parallel()
	w := politetest.NewWeb(t)
	site := w.Site("daily.example")
	a := site.AddArticle(politetest.Article{Title: "Harbour reopens"})
	chained := site.AddArticle(politetest.Article{Title: "Ferry timetable"})
	site.Misbehave(chained.Path, politetest.Behaviour{Kind: politetest.RedirectChain, Hops: 3})
	site.Misbehave("/insecure", politetest.Behaviour{Kind: politetest.RedirectToHTTP})
	site.Misbehave("/moved", politetest.Behaviour{Kind: politetest.RedirectToHost, Host: "www.daily.example"})
	w.Site("www.daily.example").Handle("/moved", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		io.WriteString(rw, "moved here\n")
	}))
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

	opts := provenance.VerifyOptions{Roots: w.RootCAs(), RootsLabel: "politetest", AllowPrefixes: loopback}
	cases := []struct {
		name    string
		path    string
		breakIt func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions)
		want    error
		hops    int // hops recorded, for the valid cases
	}{
		{name: "article", path: a.Path, hops: 1},
		{name: "after a chain of three redirects", path: chained.Path, hops: 4},
		{name: "after a redirect to another host", path: "/moved", hops: 2},
		{name: "expired at the instant (2100)", path: a.Path, want: provenance.ErrExpired,
			breakIt: func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) {
				p.ReadAt = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
			}},
		{name: "not yet valid at the instant (1999)", path: a.Path, want: provenance.ErrNotYetValid,
			breakIt: func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) {
				p.ReadAt = time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC)
				p.Hops[0].HandshakeAt = p.ReadAt
			}},
		{name: "untrusted root (pinned bundle)", path: a.Path, want: provenance.ErrChainUntrusted,
			breakIt: func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { o.Roots = nil }},
		{name: "missing intermediate (leaf alone, CA not a root)", path: a.Path, want: provenance.ErrMissingIntermediate,
			breakIt: func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) {
				p.Hops[0].Chain = p.Hops[0].Chain[:1]
				o.Roots = newPKI().Pool
			}},
		{name: "wrong name (another site's chain)", path: "/moved", want: provenance.ErrNameMismatch,
			breakIt: func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { p.Hops[1].Chain = p.Hops[0].Chain }},
		{name: "tampered envelope", path: a.Path, want: provenance.ErrDigestMismatch,
			breakIt: func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { (*env)[len(*env)/2] ^= 1 }},
		{name: "wrong length", path: a.Path, want: provenance.ErrLengthMismatch,
			breakIt: func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { *env = append(*env, '\n') }},
		{name: "reordered hops", path: chained.Path, want: provenance.ErrHopsBroken,
			breakIt: func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) {
				p.Hops[1], p.Hops[2] = p.Hops[2], p.Hops[1]
			}},
		{name: "too many hops", path: chained.Path, want: provenance.ErrTooManyHops,
			breakIt: func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { o.MaxHops = 3 }},
		{name: "redirect to http", path: "/insecure", want: provenance.ErrNotHTTPS},
		{name: "a private connected IP (loopback not allowed)", path: a.Path, want: provenance.ErrPrivateIP,
			breakIt: func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { o.AllowPrefixes = nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, env := fetchProof(t, w, w.URL("daily.example", tc.path))
			o := opts
			if tc.breakIt != nil {
				tc.breakIt(p, &env, &o)
			}
			v, err := provenance.Verify(p, env, o)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("Verify = %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if got, want := len(p.Hops), tc.hops; got != want {
				t.Errorf("%d hops recorded, want %d", got, want)
			}
			if got, want := v.Anchor.RootSHA256, sha256Hex(w.CACert().Raw); got != want {
				t.Errorf("anchor = %s, want the politetest CA %s", got, want)
			}
			if got, want := v.Anchor.Bundle, "politetest"; got != want {
				t.Errorf("anchor bundle = %q, want %q", got, want)
			}
			// The deposit goes to WARC and comes back verifiable (V5, V6).
			var archive bytes.Buffer
			if err := warc.Write(&archive, warc.Deposit{Proof: p, Envelope: env, Status: p.Hops[len(p.Hops)-1].Status,
				ResponseHeader: http.Header{"Content-Type": {"text/html"}}}); err != nil {
				t.Fatal(err)
			}
			n := 0
			for d, err := range warc.Read(&archive) {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := provenance.Verify(d.Proof, d.Envelope, o); err != nil {
					t.Errorf("deposit read back from WARC: %v", err)
				}
				n++
			}
			if n != 1 {
				t.Errorf("read %d deposits back, want 1", n)
			}
			for i, h := range p.Hops {
				if h.TLSVersion == "" || h.CipherSuite == "" || h.SNI == "" || len(h.Chain) == 0 || h.HandshakeAt.IsZero() {
					t.Errorf("hop %d not fully recorded: %+v", i, h)
				}
			}
		})
	}
}
