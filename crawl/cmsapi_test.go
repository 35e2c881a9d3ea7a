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
