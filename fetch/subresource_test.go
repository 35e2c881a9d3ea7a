package fetch

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestGet_D9_NoSubresources reads an article page that names its share image
// (politetest's pages carry it in og:image and an <img>) and checks on the
// web's log that the chain asked for robots.txt and the page and nothing else:
// a page's sub-resources are never loaded (D9).
func TestGet_D9_NoSubresources(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("page.example")
	a := site.AddArticle(politetest.Article{ID: 7})
	c := newClient(t, web, testPolicy(StrictNews(), 10*time.Millisecond))

	res, err := c.Get(context.Background(), site.URL(a.Path))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete() {
		t.Fatalf("article not complete: status %d", res.Status)
	}
	if !bytes.Contains(res.Body, []byte(a.Image)) {
		t.Fatalf("the page does not name its image %s, so this test proves nothing", a.Image)
	}
	var got []string
	for _, r := range web.Requests() {
		got = append(got, r.Path)
	}
	if want := []string{"/robots.txt", a.Path}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("requests %q, want exactly %q", got, want)
	}
}
