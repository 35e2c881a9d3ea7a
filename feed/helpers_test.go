package feed

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixedNow is the instant every stop-rule test measures its window from.
var fixedNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// testSite is a loopback TLS server (real TLS, real bytes on the wire) that
// serves testdata files with "https://SERVER" replaced by its own origin,
// and records every request it receives.
type testSite struct {
	t   *testing.T
	srv *httptest.Server
	mux *http.ServeMux

	mu   sync.Mutex
	reqs []*http.Request
}

func newTestSite(t *testing.T) *testSite {
	t.Helper()
	s := &testSite{t: t, mux: http.NewServeMux()}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(r.Context()))
		s.mu.Unlock()
		s.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// url returns the absolute address of path on the site.
func (s *testSite) url(path string) string { return s.srv.URL + path }

// client is a Doer that trusts the site's certificate.
func (s *testSite) client() *http.Client { return s.srv.Client() }

// requests returns the request paths (with query) received so far.
func (s *testSite) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.reqs {
		out = append(out, r.URL.RequestURI())
	}
	return out
}

// file serves testdata/name at path with the content type; when gz is set
// the bytes are gzipped on the fly (a .xml.gz sitemap).
func (s *testSite) file(path, name, ctype string, gz bool) {
	s.t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		s.t.Fatal(err)
	}
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		body := bytes.ReplaceAll(raw, []byte("https://SERVER"), []byte("https://"+r.Host))
		if gz {
			body = gzipBytes(body)
		}
		w.Header().Set("Content-Type", ctype)
		w.Write(body)
	})
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// unhost replaces the site's origin with https://SERVER, for golden files.
func (s *testSite) unhost(str string) string {
	return strings.ReplaceAll(str, s.srv.URL, "https://SERVER")
}

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
		t.Fatalf("%v (run go test -run %s -update)", err, t.Name())
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// stamp renders a time for golden files: "" when missing, RFC 3339 UTC.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// refView is a Ref as golden files show it.
type refView struct {
	ID        string `json:"id,omitempty"`
	URL       string `json:"url"`
	Published string `json:"published,omitempty"`
	Updated   string `json:"updated,omitempty"`
}

func viewRef(s *testSite, r Ref) refView {
	return refView{ID: r.ID, URL: s.unhost(r.URL), Published: stamp(r.Published), Updated: stamp(r.Updated)}
}

// walkView renders a walk's yields (refs and errors) as golden JSON.
func walkView(s *testSite, seq func(func(Ref, error) bool)) []byte {
	type step struct {
		Ref   *refView `json:"ref,omitempty"`
		Error string   `json:"error,omitempty"`
	}
	steps := []step{}
	for r, err := range seq {
		if err != nil {
			steps = append(steps, step{Error: s.unhost(err.Error())})
			continue
		}
		v := viewRef(s, r)
		steps = append(steps, step{Ref: &v})
	}
	return mustJSON(steps)
}

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(fmt.Sprint("marshal: ", err))
	}
	return append(b, '\n')
}
