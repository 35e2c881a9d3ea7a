package crawl

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// The CMS API read method sends the credential, read from the file its
// reference names, to the article API only: never with the trigger, never
// with robots.txt (V2, V9, V9b).
func TestCrawler_V2_CMSAPIWithACredentialByReference(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("cms.example")
	var arts []politetest.Article
	for range 3 {
		arts = append(arts, s.AddArticle(politetest.Article{}))
	}
	s.Handle("/cms/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id := strings.TrimPrefix(r.URL.Path, "/cms/")
		for _, a := range arts {
			if fmt.Sprint(a.ID) == id {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":%d,"link":%q,"date_gmt":"2026-01-01T00:00:00","title":{"rendered":%q},"content":{"rendered":"<p>%s</p>"}}`,
					a.ID, s.URL(a.Path), a.Title, "The body of the story, as the CMS holds it.")
				return
			}
		}
		http.NotFound(w, r)
	}))
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := siteSource(s.Name(), Vault, false)
	src.Read = Read{Method: ReadCMSAPI, URL: "https://cms.example/cms/{id}", Credential: &CredentialRef{Header: "X-Api-Key", Value: "file:" + key}}
	p := testPolicy(t, Vault, testInterval)
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{src}}
	rep := mustPass(t, c, src.ID)
	if rep.Deposited != 3 || rep.Mismatched != 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range web.Requests() {
		has := r.Header.Get("X-Api-Key") != ""
		if strings.HasPrefix(r.Path, "/cms/") != has {
			t.Errorf("%s: credential sent %v", r.Target, has)
		}
	}
	ap := auditPolicy(p)
	ap.AllowedHeaders = append(ap.AllowedHeaders, "X-Api-Key")
	if rep := web.Audit(ap); !rep.OK() {
		t.Fatalf("auditor: %v", rep)
	}
	deps, _ := c.Deposited().List(context.Background(), src.ID, time.Time{})
	for _, d := range deps {
		if d.Article == nil || !d.Article.Headline.Present() {
			t.Fatalf("%s: no article extracted from the CMS document", d.URL)
		}
	}
}

// A deposit carries the header its final request was written with, for a
// WARC request record: the crawler's four headers and Host, the CMS
// credential redacted, never the secret (V9, V9b).
func TestDeposit_V9_V9b_CarriesTheHeaderSentRedacted(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("sent.example")
	a := s.AddArticle(politetest.Article{})
	s.Handle("/cms/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%d,"link":%q,"title":{"rendered":"T"},"content":{"rendered":"<p>The body.</p>"}}`, a.ID, s.URL(a.Path))
	}))
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := siteSource(s.Name(), Vault, false)
	src.Read = Read{Method: ReadCMSAPI, URL: "https://sent.example/cms/{id}", Credential: &CredentialRef{Header: "X-Api-Key", Value: "file:" + key}}
	p := testPolicy(t, Vault, testInterval)
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{src}}
	if rep := mustPass(t, c, src.ID); rep.Deposited != 1 {
		t.Fatalf("report %+v", rep)
	}
	deps, _ := c.Deposited().List(context.Background(), src.ID, time.Time{})
	if len(deps) != 1 {
		t.Fatalf("%d deposits", len(deps))
	}
	h := deps[0].Sent
	for k, want := range map[string]string{"Host": "sent.example", "User-Agent": p.UserAgent(), "Accept-Encoding": "identity", "X-Api-Key": "[redacted]"} {
		if got := h.Get(k); got != want {
			t.Errorf("Sent %s = %q, want %q (all: %v)", k, got, want, h)
		}
	}
	if h.Get("Accept") == "" {
		t.Errorf("Sent has no Accept: %v", h)
	}
	if strings.Contains(fmt.Sprint(h), "s3cret") {
		t.Fatalf("the secret is in the deposit: %v", h)
	}
}
