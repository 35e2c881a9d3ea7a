package provenance_test

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/provenance"
)

// TestVerify_V6_LiveTLS captures proofs over real TLS on loopback, with chains
// built in the test and fixed read instants, and checks that each verifies or
// fails with its own reason (V6: https, chain to a recognised CA, leaf covers
// the host name, valid at the instant; V5: the envelope's digest).
func TestVerify_V6_LiveTLS(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	testRoots := provenance.VerifyOptions{Roots: b.pki.Pool, RootsLabel: "test-root", AllowPrefixes: b.loopbacks}

	cases := []struct {
		name      string
		url       string
		at        time.Time
		verifyTLS bool                                   // the client checks the chain during the handshake too
		mutate    func(p *provenance.Proof, env *[]byte) // nil: leave as captured
		opts      func(o *provenance.VerifyOptions)      // nil: test roots, loopback allowed
		want      error                                  // nil: verifies
		wantHop   int                                    // hop of the failure, -1 for the proof
	}{
		{name: "valid", url: b.url("news.example", "/article"), at: readAt, verifyTLS: true},
		{name: "valid after two redirects", url: b.url("news.example", "/r1"), at: readAt, verifyTLS: true},
		{name: "valid IDN host checked as its A-label", url: b.url("bücher.example", "/article"), at: readAt, verifyTLS: true},
		{name: "expired at the instant", url: b.url("news.example", "/article"), at: afterExpiry,
			want: provenance.ErrExpired, wantHop: 0},
		{name: "not yet valid at the instant", url: b.url("news.example", "/article"), at: beforeValidity,
			want: provenance.ErrNotYetValid, wantHop: 0},
		{name: "wrong name", url: b.url("wrong.example", "/article"), at: readAt,
			want: provenance.ErrNameMismatch, wantHop: 0},
		{name: "untrusted root (the pinned bundle does not hold the test root)", url: b.url("news.example", "/article"), at: readAt,
			opts: func(o *provenance.VerifyOptions) { o.Roots = nil },
			want: provenance.ErrChainUntrusted, wantHop: 0},
		{name: "missing intermediate", url: b.url("lonely.example", "/article"), at: readAt,
			want: provenance.ErrMissingIntermediate, wantHop: 0},
		{name: "leaf for client auth only", url: b.url("client.example", "/article"), at: readAt,
			want: provenance.ErrKeyUsage, wantHop: 0},
		{name: "tampered envelope", url: b.url("news.example", "/article"), at: readAt,
			mutate: func(p *provenance.Proof, env *[]byte) { (*env)[10] ^= 0x20 },
			want:   provenance.ErrDigestMismatch, wantHop: -1},
		{name: "wrong length (truncated envelope)", url: b.url("news.example", "/article"), at: readAt,
			mutate: func(p *provenance.Proof, env *[]byte) { *env = (*env)[:len(*env)-1] },
			want:   provenance.ErrLengthMismatch, wantHop: -1},
		{name: "reordered hops", url: b.url("news.example", "/r1"), at: readAt,
			mutate: func(p *provenance.Proof, env *[]byte) {
				p.Hops[0], p.Hops[1] = p.Hops[1], p.Hops[0]
				p.RequestedURL = p.Hops[0].URL
			},
			want: provenance.ErrHopsBroken, wantHop: 0},
		{name: "forged Location", url: b.url("news.example", "/r1"), at: readAt,
			mutate: func(p *provenance.Proof, env *[]byte) { p.Hops[1].Location = "https://news.example/elsewhere" },
			want:   provenance.ErrHopsBroken, wantHop: 1},
		{name: "forged hop dropped from the middle", url: b.url("news.example", "/r1"), at: readAt,
			mutate: func(p *provenance.Proof, env *[]byte) { p.Hops = slices.Delete(p.Hops, 1, 2) },
			want:   provenance.ErrHopsBroken, wantHop: 0},
		{name: "final URL is not the last hop", url: b.url("news.example", "/r1"), at: readAt,
			mutate: func(p *provenance.Proof, env *[]byte) { p.FinalURL = b.url("news.example", "/other") },
			want:   provenance.ErrHopsBroken, wantHop: 2},
		{name: "too many hops", url: b.url("news.example", "/r1"), at: readAt,
			opts: func(o *provenance.VerifyOptions) { o.MaxHops = 2 },
			want: provenance.ErrTooManyHops, wantHop: -1},
		{name: "an http hop", url: b.url("news.example", "/to-http"), at: readAt,
			want: provenance.ErrNotHTTPS, wantHop: 1},
		{name: "an IP-literal URL", url: b.url("127.0.0.1", "/article"), at: readAt,
			want: provenance.ErrIPLiteral, wantHop: -1},
		{name: "userinfo in URL", url: "https://reader:secret@" + "news.example:" + b.tlsPort + "/article", at: readAt,
			want: provenance.ErrUserinfo, wantHop: -1},
		{name: "a private connected IP", url: b.url("news.example", "/article"), at: readAt,
			opts: func(o *provenance.VerifyOptions) { o.AllowPrefixes = nil },
			want: provenance.ErrPrivateIP, wantHop: 0},
		{name: "bad schema", url: b.url("news.example", "/article"), at: readAt,
			mutate: func(p *provenance.Proof, env *[]byte) { p.Schema = "provenance/v0" },
			want:   provenance.ErrSchema, wantHop: -1},
		{name: "SNI not the host", url: b.url("news.example", "/article"), at: readAt,
			mutate: func(p *provenance.Proof, env *[]byte) { p.Hops[0].SNI = "lonely.example" },
			want:   provenance.ErrNameMismatch, wantHop: 0},
		{name: "chain removed", url: b.url("news.example", "/article"), at: readAt,
			mutate: func(p *provenance.Proof, env *[]byte) { p.Hops[0].Chain = nil },
			want:   provenance.ErrNoChain, wantHop: 0},
		{name: "recorded anchor is not the root reached", url: b.url("news.example", "/article"), at: readAt,
			mutate: func(p *provenance.Proof, env *[]byte) {
				p.Anchor = &provenance.Anchor{Bundle: "test-root", RootSHA256: strings.Repeat("ab", 32)}
			},
			want: provenance.ErrAnchorMismatch, wantHop: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, env := b.capture(t, tc.url, tc.at, tc.verifyTLS)
			if tc.mutate != nil {
				tc.mutate(p, &env)
			}
			opts := testRoots
			if tc.opts != nil {
				tc.opts(&opts)
			}
			v, err := provenance.Verify(p, env, opts)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if got, want := v.FinalURL, p.FinalURL; got != want {
					t.Errorf("FinalURL = %q, want %q", got, want)
				}
				if got, want := v.Anchor.Subject, b.pki.Root.Subject.String(); got != want {
					t.Errorf("anchor subject = %q, want %q", got, want)
				}
				if got, want := v.Anchor.Bundle, "test-root"; got != want {
					t.Errorf("anchor bundle = %q, want %q", got, want)
				}
				if got, want := v.ReadAt, tc.at; !got.Equal(want) {
					t.Errorf("ReadAt = %v, want %v", got, want)
				}
				if !strings.HasSuffix(v.Statement, provenance.Scope) {
					t.Errorf("Statement %q does not end with the scope", v.Statement)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify error = %v, want %v", err, tc.want)
			}
			if v != nil {
				t.Errorf("verdict %+v returned with an error", v)
			}
			var ce *provenance.CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *CheckError", err)
			}
			if got, want := ce.Hop, tc.wantHop; got != want {
				t.Errorf("failed hop = %d, want %d (%v)", got, want, err)
			}
			// Each case fails for its own reason only.
			for _, other := range allSentinels {
				if other != tc.want && errors.Is(err, other) {
					t.Errorf("error %v also matches %v", err, other)
				}
			}
		})
	}
}

var allSentinels = []error{
	provenance.ErrSchema, provenance.ErrNotHTTPS, provenance.ErrUserinfo, provenance.ErrIPLiteral,
	provenance.ErrHopsBroken, provenance.ErrTooManyHops, provenance.ErrNoChain, provenance.ErrChainUntrusted,
	provenance.ErrMissingIntermediate, provenance.ErrExpired, provenance.ErrNotYetValid, provenance.ErrNameMismatch,
	provenance.ErrKeyUsage, provenance.ErrAnchorMismatch, provenance.ErrPrivateIP, provenance.ErrDigestMismatch,
	provenance.ErrLengthMismatch,
}

// TestSeal records the anchor reached, and a sealed proof still verifies.
func TestSeal(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	p, env := b.capture(t, b.url("news.example", "/article"), readAt, true)
	opts := provenance.VerifyOptions{Roots: b.pki.Pool, RootsLabel: "test-root", AllowPrefixes: b.loopbacks}
	if _, err := provenance.Seal(p, env, opts); err != nil {
		t.Fatalf("Seal: %v", err)
	}
	if p.Anchor == nil {
		t.Fatal("Seal left Anchor nil")
	}
	if got, want := p.Anchor.RootSHA256, sha256Hex(b.pki.Root.Raw); got != want {
		t.Errorf("anchor root = %s, want %s", got, want)
	}
	if _, err := provenance.Verify(p, env, opts); err != nil {
		t.Errorf("Verify after Seal: %v", err)
	}
}

func TestIPChecks(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	base, env := b.capture(t, b.url("news.example", "/article"), readAt, true)
	cases := []struct {
		ip    string
		allow []netip.Prefix
		want  error
	}{
		{"93.184.215.14", nil, nil},
		{"2a00:1450:4007:80e::200e", nil, nil},
		{"127.0.0.1", nil, provenance.ErrPrivateIP},
		{"10.1.2.3", nil, provenance.ErrPrivateIP},
		{"192.168.1.1", nil, provenance.ErrPrivateIP},
		{"169.254.169.254", nil, provenance.ErrPrivateIP},
		{"100.64.0.1", nil, provenance.ErrPrivateIP},
		{"::1", nil, provenance.ErrPrivateIP},
		{"fd00::1", nil, provenance.ErrPrivateIP},
		{"::ffff:10.0.0.1", nil, provenance.ErrPrivateIP},
		{"10.1.2.3", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, nil},
		{"::ffff:127.0.0.1", b.loopbacks, nil},
		{"", nil, provenance.ErrSchema},
		{"127.0.0.1:443", nil, provenance.ErrSchema},
	}
	for _, tc := range cases {
		t.Run(tc.ip, func(t *testing.T) {
			p := *base
			p.Hops = slices.Clone(base.Hops)
			p.Hops[0].ConnectedIP = tc.ip
			_, err := provenance.Verify(&p, env, provenance.VerifyOptions{Roots: b.pki.Pool, AllowPrefixes: tc.allow})
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("Verify with ip %q: %v, want %v", tc.ip, err, tc.want)
			}
		})
	}
}

func TestURLChecks(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	base, env := b.capture(t, b.url("news.example", "/article"), readAt, true)
	cases := []struct {
		url  string
		want error
	}{
		{"http://news.example/article", provenance.ErrNotHTTPS},
		{"ftp://news.example/article", provenance.ErrNotHTTPS},
		{"https://u@news.example/article", provenance.ErrUserinfo},
		{"https://[::1]/article", provenance.ErrIPLiteral},
		{"https://127.1/article", provenance.ErrIPLiteral},
		{"https://2130706433/article", provenance.ErrIPLiteral},
		{"https://0x7f.0.0.1/article", provenance.ErrIPLiteral},
		{"https:///article", provenance.ErrSchema},
		{"https://news.example:99999999999/%zz", provenance.ErrSchema},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			p := *base
			p.FinalURL = tc.url
			_, err := provenance.Verify(&p, env, provenance.VerifyOptions{Roots: b.pki.Pool, AllowPrefixes: b.loopbacks})
			if !errors.Is(err, tc.want) {
				t.Errorf("Verify with final URL %q: %v, want %v", tc.url, err, tc.want)
			}
		})
	}
}

func TestPinnedRoots(t *testing.T) {
	t.Parallel()
	pool, info := provenance.PinnedRoots()
	if pool == nil {
		t.Fatal("nil pool")
	}
	if info.Roots < 100 {
		t.Errorf("bundle has %d roots, want at least 100", info.Roots)
	}
	if got, want := info.Module, provenance.BundleModule; got != want {
		t.Errorf("Module = %q, want %q", got, want)
	}
	if !strings.HasPrefix(info.Version, "v") {
		t.Errorf("Version = %q, want a module version", info.Version)
	}
	// A fresh pool each call: changing one does not change the next.
	pool.AddCert(newPKI().Root)
	again, _ := provenance.PinnedRoots()
	if pool.Equal(again) {
		t.Error("PinnedRoots returned a pool shared with an earlier caller")
	}
}

func TestDigest(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, tc := range cases {
		if got := provenance.DigestOf([]byte(tc.in)); got != tc.want {
			t.Errorf("DigestOf(%q) = %s, want %s", tc.in, got, tc.want)
		}
		d := provenance.NewDigest()
		for _, c := range []byte(tc.in) {
			d.Write([]byte{c})
		}
		if got := d.Sum(); got != tc.want {
			t.Errorf("Digest.Sum over %q = %s, want %s", tc.in, got, tc.want)
		}
		if got, want := d.Len(), int64(len(tc.in)); got != want {
			t.Errorf("Digest.Len = %d, want %d", got, want)
		}
	}
}

// TestBundleVersion_MatchesGoMod keeps BundleVersion (the fallback used when
// the binary carries no build information) equal to the version go.mod pins.
func TestBundleVersion_MatchesGoMod(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var pinned string
	for _, line := range strings.Split(string(mod), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == provenance.BundleModule {
			pinned = f[1]
		}
	}
	if got, want := provenance.BundleVersion, pinned; got != want {
		t.Errorf("BundleVersion = %q, go.mod pins %q: update the constant", got, want)
	}
	if _, info := provenance.PinnedRoots(); info.Version != pinned {
		t.Errorf("PinnedRoots reports version %q, go.mod pins %q", info.Version, pinned)
	}
}
