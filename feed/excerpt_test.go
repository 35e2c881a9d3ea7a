package feed_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// TestExcerpt_S5_RefusedArticleKeptAsTheFeedDescribesIt reads a feed
// through the chain, is refused the article itself (403), and keeps the story as
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
	c := newChain(t, web, auditInterval)
	ctx := context.Background()

	res, err := (&feed.Reader{Client: c.Doer(fetch.KindFeed)}).Read(ctx, site.URL("/feed.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Feed.Items) != 1 {
		t.Fatalf("feed has %d items, want 1", len(res.Feed.Items))
	}
	it := res.Feed.Items[0]

	art, err := c.Get(ctx, it.Link)
	if err != nil {
		t.Fatal(err)
	}
	if art.Status != http.StatusForbidden {
		t.Fatalf("article answered %d, want the 403 the site was told to give", art.Status)
	}

	got := it.Excerpt()
	want := feed.Excerpt{
		Label:       feed.ExcerptLabel,
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
	if rep := web.Audit(politetest.Policy{Interval: auditInterval, Slack: politetest.Slack(auditInterval / 2)}); !rep.OK() {
		t.Error(rep)
	}
}
