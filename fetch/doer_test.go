package fetch

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/politetest"
)

// read sends a GET for u through d and returns the status and the body.
func read(t *testing.T, d Doer, u string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := d.Do(req)
	if err != nil {
		t.Fatalf("Do(%s): %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

// TestDoer_S4_SuspendedHostFeedStillRead: a Doer bound to KindFeed reads the
// feed of a host whose articles are suspended, and the ledger counts it as a
// feed; a Doer bound to KindArticle is refused with Suspended (S4).
func TestDoer_S4_SuspendedHostFeedStillRead(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("suspended.example")
	a := s.AddArticle(politetest.Article{})
	p := testPolicy(StrictNews(), auditInterval)
	c := newClient(t, web, p)
	ctx := context.Background()
	now := time.Now()
	for i := range 5 { // five refusals, long enough ago for the cool-downs to have ended
		at := now.Add(-20*time.Hour + time.Duration(i)*3*time.Hour)
		if _, err := c.ledger.Observe(ctx, "suspended.example", backoff.Outcome{Kind: backoff.Article, Status: 403}, at); err != nil {
			t.Fatal(err)
		}
	}
	if status, _, body := read(t, c.Doer(KindFeed), s.URL("/feed.xml")); status != 200 || len(body) == 0 {
		t.Fatalf("feed of a suspended host: status %d, %d bytes", status, len(body))
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL(a.Path), nil)
	if _, err := c.Doer(KindArticle).Do(req); err == nil {
		t.Fatal("an article of a suspended host was read")
	} else {
		refusal(t, err, Suspended)
	}
	if requested(web, "suspended.example", a.Path) {
		t.Fatal("the suspended article was requested")
	}
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Fatal(rep)
	}
}

// TestDoer_D4_ConditionalAndDecoded: a Doer's second read of an unchanged feed
// goes out conditional and comes back as a 304 with an empty body (D4); its
// bodies arrive with their content-codings removed.
func TestDoer_D4_ConditionalAndDecoded(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("feeds.example")
	s.AddArticle(politetest.Article{})
	s.Misbehave("/packed.xml", politetest.Behaviour{Kind: politetest.GzipBomb, Size: 5000})
	p := testPolicy(Digest(), auditInterval)
	c := newClient(t, web, p)
	d := c.Doer(KindFeed)
	if status, _, body := read(t, d, s.URL("/feed.xml?utm_source=x")); status != 200 || len(body) == 0 {
		t.Fatalf("first read: status %d, %d bytes", status, len(body))
	}
	status, _, body := read(t, d, s.URL("/feed.xml"))
	if status != http.StatusNotModified || len(body) != 0 {
		t.Fatalf("second read: status %d, %d bytes; want a 304 with no body", status, len(body))
	}
	reqs := web.Requests()
	if last := reqs[len(reqs)-1]; last.Header.Get("If-None-Match") == "" || last.Path != "/feed.xml" || last.Query != "" {
		t.Fatalf("second read went out as %s?%s with If-None-Match %q", last.Path, last.Query, last.Header.Get("If-None-Match"))
	}
	status, h, body := read(t, d, s.URL("/packed.xml"))
	if status != 200 || len(body) < 5000 || h.Get("Content-Encoding") != "" || h.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Fatalf("gzip body: status %d, %d bytes, Content-Encoding %q, Content-Length %q", status, len(body), h.Get("Content-Encoding"), h.Get("Content-Length"))
	}
	if rep := web.Audit(auditPolicy(p)); !rep.OK() {
		t.Fatal(rep)
	}
}
