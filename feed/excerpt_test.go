package feed

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestExcerpt_S5_RefusedArticleKeptAsTheFeedDescribesIt reads a feed over
// politetest, is refused the article itself (403), and keeps the story as
// the feed describes it: headline, description and share image copied exactly,
// labelled as an excerpt, with a link to the original (S5).
func TestExcerpt_S5_RefusedArticleKeptAsTheFeedDescribesIt(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("excerpt.example")
	a := site.AddArticle(politetest.Article{
		ID:        42,
		Title:     "Harbour reopens after storm",
		Summary:   "The harbour reopened on Monday. Ferries run again.",
		Published: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC),
	})
	site.Misbehave(a.Path, politetest.Behaviour{Kind: politetest.Forbidden})
	doer := newPoliteDoer(web, 100*time.Millisecond)
	ctx := context.Background()

	res, err := (&Reader{Client: doer}).Read(ctx, site.URL("/feed.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Feed.Items) != 1 {
		t.Fatalf("feed has %d items, want 1", len(res.Feed.Items))
	}
	it := res.Feed.Items[0]

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, it.Link, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := doer.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("article answered %d, want the 403 the site was told to give", resp.StatusCode)
	}

	got := it.Excerpt()
	want := Excerpt{
		Label:       ExcerptLabel,
		Headline:    "Harbour reopens after storm",
		Description: "The harbour reopened on Monday. Ferries run again.",
		Image:       site.URL(a.Image),
		Link:        site.URL(a.Path),
		ID:          "42",
		Published:   time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC),
	}
	if got != want {
		t.Errorf("excerpt:\n got %+v\nwant %+v", got, want)
	}
	if rep := web.Audit(politetest.Policy{Interval: 100 * time.Millisecond, Slack: auditSlack(100 * time.Millisecond)}); !rep.OK() {
		t.Error(rep)
	}
}
