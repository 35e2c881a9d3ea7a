package fetch

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// FuzzCredentialValidate: a credential Validate accepts goes on the wire as
// exactly one header line of its own name, which a server reads back as the
// same name and value, and replaces none of the chain's headers; one it
// refuses is a *CredentialError that never shows the value.
func FuzzCredentialValidate(f *testing.F) {
	for _, s := range [][2]string{
		{"Authorization", "Bearer abc"}, {"X-Api-Key", "k3y"}, {"User-Agent", "x"}, {"Author ization", "x"},
		{"X-Key", "a\r\nHost: evil"}, {"X-Key", "a\x00b"}, {"X-Key", "a\x7fb"}, {"content-type", "x"}, {"", "v"},
		{"X-Key", " padded\t"}, {"X-Kéy", "v"}, {"Cookie", "a=b"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, header, value string) {
		c := Credential{Header: header, Value: NewSecret(value), Hosts: []string{"a.example"}}
		err := c.Validate()
		if err != nil {
			var ce *CredentialError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidCredential) {
				t.Fatalf("untyped error %v", err)
			}
			// The text is one of the fixed reasons, with at most the
			// canonical name of a header the chain owns: neither the
			// value nor a name that is not a header shows.
			msg := err.Error()
			if h := textproto.CanonicalMIMEHeaderKey(header); h != "" && owned(h) && httpguts.ValidHeaderFieldName(header) {
				msg = strings.ReplaceAll(msg, h, "User-Agent")
			}
			known := false
			for _, k := range credentialMessages() {
				known = known || msg == k
			}
			if !known {
				t.Fatalf("error text %q is not one of the fixed ones", err)
			}
			return
		}
		if header == "" {
			return
		}
		req := &http.Request{Method: "GET", URL: &url.URL{Scheme: "https", Host: "a.example", Path: "/"}, Header: http.Header{},
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Host: "a.example"}
		req.Header.Set("User-Agent", "Bot/1")
		req.Header.Set(header, value)
		var b bytes.Buffer
		if err := req.Write(&b); err != nil {
			t.Fatal(err)
		}
		got, err := http.ReadRequest(bufio.NewReader(&b))
		if err != nil {
			t.Fatalf("a valid credential %q makes a request a server cannot read: %v", header, err)
		}
		if got.Header.Get("User-Agent") != "Bot/1" || got.Host != "a.example" {
			t.Fatalf("credential %q changed the chain's headers: %v", header, got.Header)
		}
		if vs := got.Header.Values(header); len(vs) != 1 || vs[0] != strings.Trim(value, " \t") {
			t.Fatalf("credential %q read back as %q", header, vs)
		}
		if len(got.Header) != 2 {
			t.Fatalf("credential %q made %d headers: %v", header, len(got.Header), got.Header)
		}
	})
}

// credentialMessages are the texts of Validate's errors, a header the chain
// owns written as User-Agent.
func credentialMessages() []string {
	var out []string
	for _, c := range []Credential{{Value: NewSecret("v")}, {Header: "a b"}, {Header: "User-Agent"}, {Header: "X", Value: NewSecret("\x00")}} {
		out = append(out, c.Validate().Error())
	}
	return out
}

// FuzzUnparsedRefusal: whatever the URL, unparsedRefusal never panics, and a
// refusal it makes names a host that holds no userinfo and does not parse.
func FuzzUnparsedRefusal(f *testing.F) {
	for _, s := range []string{"https://%31%32%37.0.0.1/", "https://u:p@%31%32%37.0.0.1/x", "https://ok.example/%zz", "%", "://", "https://[::1/", "http://a b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, perr := url.Parse(raw)
		if perr == nil {
			return
		}
		var re *RefusedError
		if errors.As(unparsedRefusal(raw, perr), &re) {
			if strings.Contains(re.Host, "@") || re.Reason != InvalidHost {
				t.Fatalf("%q: %+v", raw, re)
			}
			if _, err := url.Parse("https://" + re.Host); err == nil {
				t.Fatalf("%q: refused host %q parses", raw, re.Host)
			}
		}
	})
}
