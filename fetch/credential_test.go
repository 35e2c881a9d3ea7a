package fetch

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestSecret_V9b_RedactedInEveryRendering: the credential's value appears in
// no rendering of a Secret, a Credential, a Source, a Policy, a pointer to
// one, or a struct holding a Policy in an unexported field (where fmt and
// slog walk by reflection and no method of the field can be called): fmt with
// every verb, encoding/json, encoding/xml, encoding/gob, YAML's Marshaler,
// MarshalText, and slog's text and JSON handlers.
func TestSecret_V9b_RedactedInEveryRendering(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-token-value"
	cred := Credential{Header: "Authorization", Value: NewSecret("Bearer " + secret), Hosts: []string{"cms.example"}}
	if cred.Value.Reveal() != "Bearer "+secret {
		t.Fatalf("Reveal = %q", cred.Value.Reveal())
	}
	pol := withIdentity(Vault())
	pol.Credential = cred
	src := Source{Credential: cred}
	type holder struct {
		name string
		p    Policy // unexported: printed by reflection, no method called
		s    Source
		c    *Credential
	}
	type exported struct {
		P Policy
		S Source
	}
	values := map[string]any{
		"Secret": cred.Value, "*Secret": &cred.Value, "Credential": cred, "*Credential": &cred,
		"Source": src, "Policy": pol, "*Policy": &pol,
		"unexported": holder{"h", pol, src, &cred}, "*unexported": &holder{"h", pol, src, &cred},
		"exported": exported{pol, src}, "slice": []Credential{cred}, "map": map[string]Secret{"k": cred.Value},
	}
	verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%t", "%x", "%X", "%o", "%b", "%e", "%g", "%c", "%U", "%p", "%10.3s", "%-20v", "% x", "%#x", "%+q"}
	renderings := map[string]func(v any) (string, error){
		"Sprint":   func(v any) (string, error) { return fmt.Sprint(v), nil },
		"Sprintln": func(v any) (string, error) { return fmt.Sprintln(v), nil },
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
		"xml": func(v any) (string, error) {
			b, err := xml.Marshal(v)
			return string(b), err
		},
		"gob": func(v any) (string, error) {
			var b bytes.Buffer
			err := gob.NewEncoder(&b).Encode(v)
			return b.String(), err
		},
		"slog text": func(v any) (string, error) {
			var b bytes.Buffer
			slog.New(slog.NewTextHandler(&b, nil)).Info("m", "v", v)
			return b.String(), nil
		},
		"slog json": func(v any) (string, error) {
			var b bytes.Buffer
			slog.New(slog.NewJSONHandler(&b, nil)).Info("m", "v", v)
			return b.String(), nil
		},
	}
	for _, verb := range verbs {
		renderings[verb] = func(v any) (string, error) { return fmt.Sprintf(verb, v), nil }
	}
	encoded := 0
	for vn, v := range values {
		for rn, render := range renderings {
			out, err := render(v)
			if strings.Contains(out, secret) {
				t.Errorf("%s of %s shows the secret: %s", rn, vn, out)
			}
			if err == nil && out != "" {
				encoded++
			}
		}
	}
	if encoded < len(values)*len(verbs) {
		t.Fatalf("only %d renderings produced anything", encoded)
	}
	// The Secret's own encoders, YAML's included (the Marshaler shape).
	s := cred.Value
	y, _ := s.MarshalYAML()
	txt, _ := s.MarshalText()
	g, _ := s.GobEncode()
	js, _ := s.MarshalJSON()
	for name, out := range map[string]string{"MarshalYAML": fmt.Sprint(y), "MarshalText": string(txt), "GobEncode": string(g),
		"MarshalJSON": string(js), "LogValue": s.LogValue().String(), "String": s.String(), "GoString": s.GoString()} {
		if strings.Contains(out, secret) || !strings.Contains(out, redacted) {
			t.Errorf("%s = %q, want %q", name, out, redacted)
		}
	}
	// The gob of a Policy decodes with the value redacted, not lost in transit.
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(pol); err != nil {
		t.Fatalf("gob of a Policy: %v", err)
	}
	var x bytes.Buffer
	if err := xml.NewEncoder(&x).Encode(pol); err != nil || !strings.Contains(x.String(), redacted) {
		t.Fatalf("xml of a Policy: %v %s", err, x.String())
	}
}

// TestCredential_V9_V9b_InvalidRefused: New (and CheckCredential, which
// configurations use) refuses, with an *CredentialError naming the field, a
// header name that is not a token, one the chain owns, and a value net/http
// would not send; a Source's credential of the same kind fails its Get before
// anything is sent.
func TestCredential_V9_V9b_InvalidRefused(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"Authorization", "X-Api-Key", "api-key"} {
		p := withIdentity(Vault())
		p.Credential = Credential{Header: ok, Value: NewSecret("k"), Hosts: []string{"cms.example"}}
		c, err := New(p)
		if err != nil {
			t.Errorf("%s: %v", ok, err)
			continue
		}
		c.Close()
	}
	for _, tc := range []struct {
		header, value, field string
	}{
		{"Author ization", "k", "Header"},
		{"X-Key:", "k", "Header"},
		{"X-Kéy", "k", "Header"},
		{"", "k", "Header"},
		{"User-Agent", "k", "Header"}, {"user-agent", "k", "Header"}, {"Accept", "k", "Header"},
		{"Accept-Encoding", "k", "Header"}, {"Host", "k", "Header"}, {"Cookie", "k", "Header"},
		{"Referer", "k", "Header"}, {"If-None-Match", "k", "Header"}, {"If-Modified-Since", "k", "Header"},
		{"Connection", "k", "Header"}, {"Content-Length", "k", "Header"}, {"Content-Type", "k", "Header"},
		{"Transfer-Encoding", "k", "Header"}, {"Range", "k", "Header"},
		{"X-Api-Key", "a\x00b", "Value"}, {"X-Api-Key", "a\x7fb", "Value"}, {"X-Api-Key", "a\r\nX-Other: b", "Value"},
		{"X-Api-Key", "a\nb", "Value"}, {"X-Api-Key", "a\rb", "Value"},
	} {
		cred := Credential{Header: tc.header, Value: NewSecret(tc.value), Hosts: []string{"cms.example"}}
		p := withIdentity(Vault())
		p.Credential = cred
		_, err := New(p)
		var ce *CredentialError
		if !errors.As(err, &ce) || ce.Field != tc.field || !errors.Is(err, ErrInvalidCredential) {
			t.Errorf("%q: %q: New: %v, want a CredentialError for %s", tc.header, tc.value, err, tc.field)
		}
		if err != nil && strings.Contains(err.Error(), tc.value) && len(tc.value) > 1 {
			t.Errorf("%q: the error shows the value: %v", tc.header, err)
		}
		if err := p.CheckCredential(cred); !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("%q: CheckCredential: %v", tc.header, err)
		}
	}

	web := politetest.NewWeb(t)
	s := web.Site("cms.example")
	c := newClient(t, web, testPolicy(Vault(), 5*time.Millisecond))
	bad := Source{Credential: Credential{Header: "User-Agent", Value: NewSecret("Mozilla/5.0"), Hosts: []string{"cms.example"}}}
	_, err := c.Get(context.Background(), s.URL("/a"), GetOptions{Source: &bad})
	if !errors.Is(err, ErrInvalidCredential) {
		t.Fatalf("Get with a Source's User-Agent credential: %v", err)
	}
	if requested(web, "cms.example", "/a") {
		t.Fatal("the request with an invalid credential was sent")
	}
}

// TestCredential_V9b_HTTPSOnly: a credential travels over https only, whatever
// the policy: with AllowHTTP, a plain-http Get of its own host carries none,
// nor the http hop after the host's own https→http redirect, while the https
// requests carry it.
func TestCredential_V9b_HTTPSOnly(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("api.test")
	s.Handle("/moved", http.RedirectHandler("http://api.test/final", http.StatusFound))
	p := testPolicy(Vault(), 5*time.Millisecond)
	p.AllowHTTP = true
	p.Credential = Credential{Header: "X-Api-Key", Value: NewSecret("s3cret"), Hosts: []string{"api.test"}}
	c := newClient(t, web, p)
	ctx := context.Background()
	for _, u := range []string{"http://api.test/plain", "https://api.test/secure", "https://api.test/moved"} {
		if _, err := c.Get(ctx, u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	seen := map[string]bool{}
	for _, r := range web.Requests() {
		if r.Path == "/robots.txt" {
			continue
		}
		seen[r.Path] = true
		has := r.Header.Get("X-Api-Key") != ""
		if want := r.TLS; has != want {
			t.Errorf("%s (TLS %v): credential sent %v, want %v", r.Path, r.TLS, has, want)
		}
	}
	for _, path := range []string{"/plain", "/secure", "/moved", "/final"} {
		if !seen[path] {
			t.Errorf("%s was not requested", path)
		}
	}
}

// TestCredential_S1_StrictNewsSendsNone: the strict news document sends no
// credential: New refuses a strict-news Policy carrying one,
// CheckCredential refuses any, and a Get whose Source carries one fails
// before the document is requested.
func TestCredential_S1_StrictNewsSendsNone(t *testing.T) {
	t.Parallel()
	cred := Credential{Header: "X-Api-Key", Value: NewSecret("k"), Hosts: []string{"news.example"}}
	p := withIdentity(StrictNews())
	p.Credential = cred
	var ce *CredentialError
	if _, err := New(p); !errors.As(err, &ce) || ce.Field != "Header" {
		t.Fatalf("New(strict news with a credential): %v", err)
	}
	if err := p.CheckCredential(cred); !errors.Is(err, ErrInvalidCredential) {
		t.Fatalf("CheckCredential: %v", err)
	}
	if err := p.CheckCredential(Credential{}); err != nil {
		t.Fatalf("no credential: %v", err)
	}
	web := politetest.NewWeb(t)
	s := web.Site("news.example")
	c := newClient(t, web, testPolicy(StrictNews(), 5*time.Millisecond))
	if _, err := c.Get(context.Background(), s.URL("/a"), GetOptions{Source: &Source{Credential: cred}}); !errors.Is(err, ErrInvalidCredential) {
		t.Fatalf("Get with a Source credential under strict news: %v", err)
	}
	if requested(web, "news.example", "/a") {
		t.Fatal("the document was requested")
	}
}

// TestResult_SentIsTheWireHeader: Result.Sent is the final hop's request
// header as the server received it (Host included), over a redirect, a
// credential and a conditional request, except the credential's value,
// which is "[redacted]": the secret appears nowhere in Sent.
func TestResult_SentIsTheWireHeader(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-token"
	web := politetest.NewWeb(t)
	s := web.Site("api.test")
	s.Handle("/moved", http.RedirectHandler("/final", http.StatusFound))
	s.Handle("/final", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write([]byte("final"))
	}))
	p := testPolicy(Vault(), 5*time.Millisecond)
	p.NoConditional = false
	p.Credential = Credential{Header: "X-Api-Key", Value: NewSecret(secret), Hosts: []string{"api.test"}}
	c := newClient(t, web, p)
	ctx := context.Background()
	for i, want := range []int{http.StatusOK, http.StatusNotModified} {
		res, err := c.Get(ctx, "https://api.test/moved")
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != want {
			t.Fatalf("Get %d: status %d, want %d", i, res.Status, want)
		}
		var got politetest.Request
		for _, r := range web.Requests() {
			if r.Path == "/final" {
				got = r // the last one
			}
		}
		if got.Header.Get("X-Api-Key") != secret {
			t.Fatalf("Get %d: the server did not receive the credential: %v", i, got.Header)
		}
		wire := got.Header.Clone()
		wire.Set("Host", got.Host)
		wire.Set("X-Api-Key", "[redacted]")
		if !reflect.DeepEqual(res.Sent, wire) {
			t.Errorf("Get %d: Result.Sent\n %v\nthe server received (credential redacted)\n %v", i, res.Sent, wire)
		}
		if want == http.StatusNotModified && res.Sent.Get("If-None-Match") != `"v1"` {
			t.Errorf("Get %d: Sent has no If-None-Match: %v", i, res.Sent)
		}
		if fmt.Sprint(res.Sent) == "" || strings.Contains(fmt.Sprint(res.Sent), secret) {
			t.Errorf("Get %d: Sent shows the secret: %v", i, res.Sent)
		}
	}
}

// TestResult_SentWithTheCallersOwnTrace: a caller's own ClientTrace in the
// Get's context is still called (composed with the hop's, whose hooks the
// pacing needs), a robots.txt fetch within the Get included, and Result.Sent
// is the same.
func TestResult_SentWithTheCallersOwnTrace(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("traced.example")
	a := s.AddArticle(politetest.Article{})
	c := newClient(t, web, testPolicy(Vault(), 5*time.Millisecond))
	var mu sync.Mutex
	conns := 0
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
		mu.Lock()
		conns++
		mu.Unlock()
	}})
	for i := range 2 {
		res, err := c.Get(ctx, s.URL(a.Path))
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent.Get("Host") != "traced.example" || res.Sent.Get("User-Agent") == "" {
			t.Errorf("Get %d: Sent %v", i, res.Sent)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if conns != 3 { // robots.txt, then the article twice
		t.Errorf("the caller's GotConn was called %d times, want 3", conns)
	}
	if rep := web.Audit(auditPolicy(testPolicy(Vault(), 5*time.Millisecond))); !rep.OK() {
		t.Error(rep)
	}
}
