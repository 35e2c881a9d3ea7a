package digest

import (
	"context"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/sharecheck"
)

// A story links to its share image only where the deposit records that the
// image passed its check, at the check's final URL with its credit (S7);
// an image that failed, or was never checked, gives no image.
func TestStories_S7_ImageOnlyWhenUsable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var deps crawl.MemoryDeposits
	put := func(key string, full bool, img *sharecheck.Result) {
		d := &crawl.Deposit{Source: "news", Key: key, URL: "https://news.example/" + key, ReadAt: now, Image: img}
		if full {
			d.Envelope, d.Article = []byte("<html>"+key), article("Story "+key, "One sentence of the article, long enough to count.")
		} else {
			d.Excerpt = &feed.Excerpt{Label: feed.ExcerptLabel, Headline: "Story " + key, Link: d.URL, Image: "https://news.example/" + key + ".png"}
		}
		d.Digest = d.Sum()
		if _, err := deps.Put(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	put("usable", true, &sharecheck.Result{URL: "https://news.example/a.jpg", FinalURL: "https://cdn.news.example/a.jpg",
		MediaType: "image/jpeg", Width: 16, Height: 9, Credit: "Photo: A. Lens"})
	put("fake", true, &sharecheck.Result{URL: "https://news.example/fake.jpg", FinalURL: "https://news.example/fake.jpg", Reason: sharecheck.NotImage})
	put("unchecked", true, nil)
	put("excerpt", false, &sharecheck.Result{URL: "https://news.example/excerpt.png", FinalURL: "https://news.example/excerpt.png", MediaType: "image/png"})

	ss, err := Stories(ctx, &deps, []Publisher{{Source: "news", Name: "News"}}, now.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 4 {
		t.Fatalf("%d stories, want 4", len(ss))
	}
	want := []*Image{
		{URL: "https://cdn.news.example/a.jpg", Credit: "Photo: A. Lens"},
		nil,
		nil,
		{URL: "https://news.example/excerpt.png"},
	}
	for i, s := range ss {
		switch got := s.Image; {
		case (got == nil) != (want[i] == nil):
			t.Errorf("%s: image %+v, want %+v", s.Headline, got, want[i])
		case got != nil && *got != *want[i]:
			t.Errorf("%s: image %+v, want %+v", s.Headline, *got, *want[i])
		}
	}
}
