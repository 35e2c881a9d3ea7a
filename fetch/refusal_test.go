package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestRefused_V10_NonCanonicalIPv4: an IPv4 literal written any other way than
// dotted-decimal (2130706433, 0x7f.1, 0177.0.0.1, 127.1) is a *RefusedError with
// Reason InvalidHost, through Get, HTTPClient and a Doer, and when a redirect
// points at one; nothing is sent to it.
func TestRefused_V10_NonCanonicalIPv4(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	c := newClient(t, web, testPolicy(Vault(), time.Millisecond))
	ctx := context.Background()
	for _, u := range []string{"https://2130706433/", "https://0x7f.1/", "https://0177.0.0.1/", "https://127.1/", "https://0x7f000001/a"} {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			_, err := c.Get(ctx, u)
			refusal(t, err, InvalidHost)
			_, err = c.HTTPClient().Get(u)
			refusal(t, err, InvalidHost)
			_, err = c.Doer(KindFeed).Do(mustRequest(t, u))
			refusal(t, err, InvalidHost)
		})
	}
	srv := newRawServer(t, func(host, target string) string {
		if target == "/robots.txt" {
			return rawOK("User-agent: *\nAllow: /\n")
		}
		return "HTTP/1.1 302 Found\r\nLocation: https://2130706433/x\r\nContent-Length: 0\r\n\r\n"
	})
	rc, err := New(testPolicy(Vault(), time.Millisecond), WithNetwork(Network{Resolver: srv, Dial: srv.dial, RootCAs: srv.roots, Allow: []netip.Prefix{loopback}}))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	_, err = rc.Get(ctx, "https://cms.example/moved")
	if re := refusal(t, err, InvalidHost); re.Host != "2130706433" {
		t.Fatalf("refused host %q, want the redirect's", re.Host)
	}
}

// TestTransport_HeaderBoundsAreNamed: a response header later than
// Policy.FirstByte fails with ErrHeaderTimeout, one larger than the chain's
// limit with ErrHeaderTooLarge, through Get and HTTPClient alike.
func TestTransport_HeaderBoundsAreNamed(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("slow.example")
	s.Misbehave("/slow", politetest.Behaviour{Kind: politetest.SlowFirstByte, Delay: 2 * time.Second})
	p := testPolicy(Vault(), time.Millisecond)
	p.FirstByte = 100 * time.Millisecond
	c := newClient(t, web, p)
	if _, err := c.Get(context.Background(), s.URL("/slow")); !errors.Is(err, ErrHeaderTimeout) {
		t.Errorf("slow header: err = %v, want ErrHeaderTimeout", err)
	}
	srv := newRawServer(t, func(host, target string) string {
		if target == "/robots.txt" {
			return rawOK("User-agent: *\nAllow: /\n")
		}
		return "HTTP/1.1 200 OK\r\nX-Padding: " + strings.Repeat("a", 100<<10) + "\r\nContent-Length: 2\r\n\r\nok"
	})
	rc, err := New(testPolicy(Vault(), time.Millisecond), WithNetwork(Network{Resolver: srv, Dial: srv.dial, RootCAs: srv.roots, Allow: []netip.Prefix{loopback}}))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := rc.Get(context.Background(), "https://big.example/a"); !errors.Is(err, ErrHeaderTooLarge) {
		t.Errorf("large header: err = %v, want ErrHeaderTooLarge", err)
	}
	if _, err := rc.HTTPClient().Get("https://big.example/b"); !errors.Is(err, ErrHeaderTooLarge) {
		t.Errorf("large header through HTTPClient: err = %v, want ErrHeaderTooLarge", err)
	}
}

// TestCredential_V9_RedactedInEveryRendering: the credential's value appears in
// no rendering of a Credential, a Source or a whole Policy: fmt's verbs,
// encoding/json, and slog's text and JSON handlers.
func TestCredential_V9_RedactedInEveryRendering(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-token-value"
	cred := Credential{Header: "Authorization", Value: NewSecret("Bearer " + secret), Hosts: []string{"cms.example"}}
	pol := withIdentity(Vault())
	pol.Credential = cred
	src := Source{Credential: cred}
	renderings := map[string]func(v any) string{
		"%v":  func(v any) string { return fmt.Sprintf("%v", v) },
		"%+v": func(v any) string { return fmt.Sprintf("%+v", v) },
		"%#v": func(v any) string { return fmt.Sprintf("%#v", v) },
		"%s":  func(v any) string { return fmt.Sprintf("%s", v) },
		"json": func(v any) string {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		},
		"slog json": func(v any) string {
			var buf bytes.Buffer
			slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "v", v)
			return buf.String()
		},
		"slog text": func(v any) string {
			var buf bytes.Buffer
			slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "v", v)
			return buf.String()
		},
	}
	for name, render := range renderings {
		for what, v := range map[string]any{"credential": cred, "pointer": &cred, "source": src, "policy": pol, "policy pointer": &pol} {
			t.Run(name+" "+what, func(t *testing.T) {
				t.Parallel()
				out := render(v)
				if strings.Contains(out, secret) {
					t.Fatalf("%s of a %s shows the secret: %s", name, what, out)
				}
				if what == "credential" && !strings.Contains(out, "Authorization") {
					t.Fatalf("%s of a credential hides its header name too: %s", name, out)
				}
			})
		}
	}
	var back struct{ Value string }
	b, _ := json.Marshal(cred)
	if err := json.Unmarshal(b, &back); err != nil || back.Value != redacted {
		t.Fatalf("json value %q, %v", back.Value, err)
	}
}

// TestRefusedError_Texts: each refusal says once, in plain words, what was
// refused, why and until when; no package name of ours appears in it, and no
// prefix is repeated. Until carries the robots.txt refetch time.
func TestRefusedError_Texts(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	rules := web.Site("rules.example")
	rules.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /private\n"})
	down := web.Site("down.example")
	down.SetRobots(politetest.Robots{Status: 503})
	cut := web.Site("cut.example")
	cut.Misbehave("/robots.txt", politetest.Behaviour{Kind: politetest.Truncate})
	rude := web.Site("rude.example")
	rude.Misbehave("/a", politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: time.Hour})
	p := testPolicy(Digest(), time.Millisecond)
	p.Admitted = []string{"*.example"}
	c := newClient(t, web, p)
	blocked, err := New(p, WithNetwork(Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs()})) // loopback not admitted
	if err != nil {
		t.Fatal(err)
	}
	defer blocked.Close()
	ctx := context.Background()
	if res, err := c.Get(ctx, rude.URL("/a")); err != nil || res.Status != 429 {
		t.Fatalf("429: %v, %v", res, err)
	}
	for _, tc := range []struct {
		name   string
		c      *Client
		url    string
		reason Reason
		want   string
		until  bool
	}{
		{"robots rule", c, rules.URL("/private/x"), Robots,
			`fetch: refused ` + rules.URL("/private/x") + `: robots.txt rule "Disallow: /private" (line 2, group "*") disallows it, until robots.txt is read again at `, true},
		{"robots unreachable", c, down.URL("/x"), Robots,
			`fetch: refused ` + down.URL("/x") + `: robots.txt answered 503, which disallows the whole site, until robots.txt is read again at `, true},
		{"robots body cut short", c, cut.URL("/x"), Robots,
			`fetch: refused ` + cut.URL("/x") + `: robots.txt could not be read (status 200, then body truncated: 35 of 71 bytes: unexpected EOF), which disallows the whole site, until robots.txt is read again at `, true},
		{"cool-down", c, rude.URL("/b"), Cooldown,
			`fetch: refused ` + rude.URL("/b") + `: rude.example is cooling down after a refusal (status 429), until `, true},
		{"blocked address", blocked, "https://rules.example/", BlockedAddr,
			`fetch: refused https://rules.example/: rules.example resolves to 127.0.0.1, which is not a public address (`, false},
		{"ftp", c, "ftp://files.example/a", NotHTTPS, `fetch: refused ftp://files.example/a: scheme ftp not allowed`, false},
		{"http", c, "http://plain.example/a", NotHTTPS, `fetch: refused http://plain.example/a: scheme http not allowed`, false},
		{"not admitted", c, "https://elsewhere.test/a", HostNotAdmitted,
			`fetch: refused https://elsewhere.test/a: host elsewhere.test is not admitted for this source`, false},
		{"invalid host", c, "https://127.1/a", InvalidHost,
			`fetch: refused https://127.1/a: host "127.1" is not a valid host name or canonical IP address (non-canonical IPv4 literal)`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.Get(ctx, tc.url)
			re := refusal(t, err, tc.reason)
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.want) {
				t.Errorf("text\n got  %s\n want %s…", msg, tc.want)
			}
			if n := strings.Count(msg, "fetch:"); n != 1 {
				t.Errorf("%q says fetch: %d times", msg, n)
			}
			for _, internal := range []string{"robots:", "backoff:", "netguard:", "hostkey:", "decode:", "dial tcp"} {
				if strings.Contains(msg, internal) {
					t.Errorf("%q names %s", msg, internal)
				}
			}
			if got := !re.Until.IsZero(); got != tc.until {
				t.Errorf("Until = %v, want set: %v", re.Until, tc.until)
			}
			if tc.until && !strings.HasSuffix(msg, re.Until.UTC().Format(time.RFC3339)) {
				t.Errorf("%q does not end with its Until %v", msg, re.Until)
			}
		})
	}
}
