package warc_test

import (
	"bytes"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/provenance/internal/testpki"
	"github.com/politefetch/politefetch/provenance/warc"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var envelope = testpki.Envelope

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update to refresh)", name)
	}
}

func fixtureDeposits(k *testpki.PKI) ([]warc.Deposit, provenance.VerifyOptions) {
	p, env, opts := testpki.Fixture(k)
	res, _, _ := testpki.Fixture(k)
	res.FinalURL, res.RequestedURL = "https://news.example/article", "https://news.example/article"
	res.Hops = res.Hops[2:]
	res.Anchor = nil
	if _, err := provenance.Seal(res, env, opts); err != nil {
		panic(err)
	}
	return []warc.Deposit{
		{
			Proof:    p,
			Envelope: env,
			RequestHeader: http.Header{
				"User-Agent":      {"politefetch-test/1 (+https://politefetch.example/bot)"},
				"Accept":          {"text/html"},
				"accept-encoding": {"identity"}, // not canonical: written canonical
			},
			ResponseHeader: http.Header{
				"Content-Type":     {"text/html; charset=utf-8"},
				"Content-Encoding": {"gzip"}, // dropped: the envelope is decoded
				"Content-Length":   {"61"},   // replaced by the envelope's length
				"Etag":             {`"v1"`},
			},
			Status: 200,
		},
		{Proof: res, Envelope: env, ResponseHeader: http.Header{"Content-Type": {"text/html"}}}, // a resource record
	}, opts
}

// TestWARC_V5_RoundTrip writes deposits, reads them back, verifies each
// proof against its envelope, and writes them again: the same bytes.
func TestWARC_V5_RoundTrip(t *testing.T) {
	t.Parallel()
	k := testpki.New()
	deps, opts := fixtureDeposits(k)
	for _, gz := range []bool{false, true} {
		name := "plain"
		if gz {
			name = "gzip"
		}
		t.Run(name, func(t *testing.T) {
			var first bytes.Buffer
			w := &warc.Writer{W: &first, Gzip: gz}
			for _, d := range deps {
				if err := w.Write(d); err != nil {
					t.Fatal(err)
				}
			}
			if gz {
				golden(t, "fixture.warc.gz", first.Bytes())
			} else {
				golden(t, "fixture.warc", first.Bytes())
			}
			var back []warc.Deposit
			for d, err := range warc.Read(bytes.NewReader(first.Bytes())) {
				if err != nil {
					t.Fatal(err)
				}
				back = append(back, d)
			}
			if got, want := len(back), len(deps); got != want {
				t.Fatalf("read %d deposits, want %d", got, want)
			}
			for i, d := range back {
				if _, err := provenance.Verify(d.Proof, d.Envelope, opts); err != nil {
					t.Errorf("deposit %d read back does not verify: %v", i, err)
				}
				if !reflect.DeepEqual(d.Proof, deps[i].Proof) {
					t.Errorf("deposit %d proof differs after the round trip", i)
				}
				if !bytes.Equal(d.Envelope, deps[i].Envelope) {
					t.Errorf("deposit %d envelope differs after the round trip", i)
				}
				if got, want := d.Status, deps[i].Status; got != want {
					t.Errorf("deposit %d status = %d, want %d", i, got, want)
				}
			}
			if got, want := back[0].RequestHeader.Get("Accept-Encoding"), "identity"; got != want {
				t.Errorf("request Accept-Encoding = %q, want %q", got, want)
			}
			if got := back[0].ResponseHeader.Get("Content-Encoding"); got != "" {
				t.Errorf("archived response still says Content-Encoding %q", got)
			}
			var second bytes.Buffer
			w2 := &warc.Writer{W: &second, Gzip: gz}
			for _, d := range back {
				if err := w2.Write(d); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(first.Bytes(), second.Bytes()) {
				t.Errorf("write → read → write changed the bytes (%d vs %d)", first.Len(), second.Len())
			}
		})
	}
}

// TestWARC_Records checks the fields standard tools look for.
func TestWARC_Records(t *testing.T) {
	t.Parallel()
	deps, _ := fixtureDeposits(testpki.New())
	var buf bytes.Buffer
	if err := warc.Write(&buf, deps...); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	cases := []struct {
		what string
		want int
	}{
		{"WARC/1.1\r\n", 6},
		{"WARC-Type: warcinfo\r\n", 1},
		{"WARC-Type: request\r\n", 1},
		{"WARC-Type: response\r\n", 1},
		{"WARC-Type: resource\r\n", 1},
		{"WARC-Type: metadata\r\n", 2},
		{"WARC-Record-ID: <urn:uuid:", 6},
		{"WARC-Date: 2026-02-14T10:30:00.123456789Z\r\n", 6},
		{"WARC-Protocol: tls/1.3\r\n", 3},
		{"WARC-Protocol: http/1.1\r\n", 2},
		{"WARC-Cipher-Suite: TLS_AES_128_GCM_SHA256\r\n", 3},
		{"WARC-Payload-Digest: " + provenance.DigestOf(envelope) + "\r\n", 2},
		{"Content-Type: application/json\r\n", 2},
		{"WARC-Refers-To: <urn:uuid:", 2},
		{"\r\n\r\nWARC/1.1\r\n", 5},
		{"HTTP/1.1 200 OK\r\n", 1},
		{"Content-Encoding", 0},
	}
	for _, tc := range cases {
		if got := strings.Count(s, tc.what); got != tc.want {
			t.Errorf("%q occurs %d times, want %d", tc.what, got, tc.want)
		}
	}
	if !strings.HasSuffix(s, "\r\n\r\n") {
		t.Error("file does not end with the record separator")
	}
}

// TestWARC_Tampered: a changed envelope byte in the file is caught on read
// (gowarc checks our sha256 block and payload digests).
func TestWARC_Tampered(t *testing.T) {
	t.Parallel()
	deps, _ := fixtureDeposits(testpki.New())
	var buf bytes.Buffer
	if err := warc.Write(&buf, deps[0]); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	i := bytes.Index(b, []byte("The council"))
	b[i] = 't'
	var err error
	for _, e := range warc.Read(bytes.NewReader(b)) {
		if e != nil {
			err = e
		}
	}
	if !errors.Is(err, warc.ErrInvalid) {
		t.Fatalf("reading a tampered WARC: %v, want ErrInvalid", err)
	}
}

// The request record carries the header as it was sent (fetch.Result.Sent,
// through the deposit's RequestHeader): every field after the request line
// and one Host, the final URL's; a credential's value as the chain redacted
// it.
func TestWARC_RequestRecordCarriesTheHeaderSent(t *testing.T) {
	t.Parallel()
	deps, _ := fixtureDeposits(testpki.New())
	d := deps[0]
	d.RequestHeader = http.Header{
		"Host": {"news.example"}, "User-Agent": {"politefetch-test/1 (+https://politefetch.example/bot)"},
		"Accept": {"text/html"}, "Accept-Encoding": {"identity"}, "X-Api-Key": {"[redacted]"},
	}
	var buf bytes.Buffer
	if err := warc.Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	i := strings.Index(s, "GET /article HTTP/1.1\r\n")
	if i < 0 {
		t.Fatalf("no request line in:\n%s", s)
	}
	block := s[i:]
	block = block[:strings.Index(block, "\r\n\r\n")+2]
	for _, line := range []string{"Host: news.example\r\n", "User-Agent: politefetch-test/1 (+https://politefetch.example/bot)\r\n",
		"Accept: text/html\r\n", "Accept-Encoding: identity\r\n", "X-Api-Key: [redacted]\r\n"} {
		if strings.Count(block, line) != 1 {
			t.Errorf("request record %q: want %q once", block, line)
		}
	}
	if n := strings.Count(block, "\r\n"); n != 6 {
		t.Errorf("request record %q: %d lines, want the request line and five fields", block, n)
	}
}
