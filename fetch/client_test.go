package fetch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

func TestGet_V12_CompleteArticleWithProof(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("news-1.example")
	a := site.AddArticle(politetest.Article{})
	p := testPolicy(Vault(), 10*time.Millisecond)
	c := newClient(t, web, p)
	res, err := c.Get(context.Background(), site.URL(a.Path))
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Depositable(); err != nil {
		t.Fatalf("Depositable = %v, want nil", err)
	}
	if res.Status != 200 || res.MediaType != "text/html" || len(res.Body) == 0 {
		t.Fatalf("got status %d media %q body %d bytes", res.Status, res.MediaType, len(res.Body))
	}
	if res.Proof == nil || len(res.Proof.Hops) != 1 || res.Proof.Hops[0].SNI != "news-1.example" || len(res.Proof.Hops[0].Chain) == 0 {
		t.Fatalf("proof = %+v", res.Proof)
	}
	if got, want := res.Proof.Hops[0].ConnectedIP, "127.0.0.1"; got != want {
		t.Fatalf("connected IP %q, want %q", got, want)
	}
	if tm := res.Timings; tm.FirstByte <= 0 || tm.Total < tm.FirstByte || tm.Wait <= 0 {
		// Wait > 0: the article waited its interval after robots.txt, whose
		// request opened the connection (so DNS, Connect and TLS are robots.txt's).
		t.Fatalf("timings %+v", tm)
	}
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Fatal(rep)
	}
	reqs := web.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/robots.txt" || reqs[1].Path != a.Path {
		t.Fatalf("requests: %+v", reqs)
	}
	var refused *RefusedError
	_, err = c.Get(context.Background(), "http://news-1.example/")
	if !errors.As(err, &refused) || refused.Reason != NotHTTPS || !errors.Is(err, ErrNotHTTPS) {
		t.Fatalf("http URL: err = %v, want NotHTTPS refusal", err)
	}
}
