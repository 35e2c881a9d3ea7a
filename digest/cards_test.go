package digest

import (
	"bytes"
	"context"
	"encoding/json"
	htmlpkg "html"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/extract"
	"github.com/politefetch/politefetch/feed"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func full(pub Publisher, url, headline string, ago time.Duration, section string) Story {
	a := article(headline,
		"The first sentence of "+headline+" says what happened today in the city.",
		"The second sentence adds the background that readers need.",
		"A third sentence quotes the people involved and what happens next.")
	a.Section = extract.Field{Value: section}
	return Story{Publisher: pub, URL: url, Headline: headline, Published: now.Add(-ago), Article: a}
}

func TestAge(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Minute, "just now"}, {30 * time.Second, "just now"}, {time.Minute, "1 min ago"}, {15 * time.Minute, "15 mins ago"},
		{59*time.Minute + 59*time.Second, "59 mins ago"}, {time.Hour, "1 hour ago"}, {5*time.Hour + 59*time.Minute, "5 hours ago"},
		{24 * time.Hour, "1 day ago"}, {72 * time.Hour, "3 days ago"},
	} {
		if got := Age(now, now.Add(-tt.d)); got != tt.want {
			t.Errorf("Age(-%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestBuild_D11_CardsByCategory(t *testing.T) {
	t.Parallel()
	tech := Publisher{Source: "bytes", Name: "Bytes Daily", Logo: "https://bytes.example/logo.png", Category: "Technology"}
	world := Publisher{Source: "globe", Name: "The Globe"}
	free := Publisher{Source: "wire", Name: "Wire", Category: "World"}
	stories := []Story{
		full(tech, "https://bytes.example/a/", "Chip news", 15*time.Minute, ""),
		full(tech, "https://bytes.example/b", "Phone news", 2*time.Hour, ""),
		full(tech, "https://bytes.example/old", "Old news", 30*time.Hour, ""), // out of the day
		full(world, "https://globe.example/x", "Flood news", 5*time.Minute, "world"),
		full(world, "https://globe.example/y", "Rates news", time.Hour, "Business"),
		full(world, "https://globe.example/z", "Local news", time.Hour, "Local"),
		// An excerpt of the same story as a full read: the full read wins.
		{Publisher: tech, URL: "https://BYTES.example/a#top", Headline: "Chip news", Published: now.Add(-10 * time.Minute), Excerpt: true, Description: "Feed text."},
		{Publisher: free, URL: "https://wire.example/1", Headline: "Strike news", Published: now.Add(-3 * time.Hour), Excerpt: true,
			Description: "Trains stop on Thursday. Unions protest. A third sentence never shows."},
	}
	var b Builder
	d, err := b.Build(context.Background(), now, stories, Preferences{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range d.Sections {
		for _, c := range s.Cards {
			got = append(got, s.Category+":"+c.Headline)
		}
	}
	want := "Tech:Chip news Tech:Phone news World:Flood news World:Strike news Finance:Rates news Local:Local news"
	if strings.Join(got, " ") != want {
		t.Fatalf("cards\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	chip := d.Sections[0].Cards[0]
	if chip.Age != "15 mins ago" || chip.Brand != "Bytes Daily" || chip.Logo != tech.Logo || chip.URL != "https://bytes.example/a/" ||
		chip.Excerpt || chip.ReadingTime() != "1 min read" || chip.ReadMore() != "Read full story on Bytes Daily\u00a0→" {
		t.Errorf("chip card = %+v", chip)
	}
	if len(chip.Summary) != 2 {
		t.Errorf("chip summary = %q, want two sentences", chip.Summary)
	}
	strike := d.Sections[1].Cards[1]
	if !strike.Excerpt || strike.ReadingTime() != "" || strike.SummaryText() != "Trains stop on Thursday. Unions protest." {
		t.Errorf("excerpt card = %+v", strike)
	}

	// Preferences: two categories in the reader's order, one source out,
	// one card per category.
	d, err = b.Build(context.Background(), now, stories, Preferences{
		Categories: []string{"world", "Tech", "Sports"}, ExcludeSources: []string{"Wire"}, MaxPerCategory: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, s := range d.Sections {
		got = append(got, s.Category)
		for _, c := range s.Cards {
			got = append(got, c.Headline)
		}
	}
	if strings.Join(got, "|") != "World|Flood news|Tech|Chip news|Sports" {
		t.Errorf("with preferences: %q", got)
	}
	d, err = b.Build(context.Background(), now, stories, Preferences{Sources: []string{"wire"}})
	if err != nil || d.Cards() != 1 {
		t.Errorf("only wire: %d cards, %v", d.Cards(), err)
	}
}

func TestBuild_D6_NeverMoreThanTwoSentences(t *testing.T) {
	t.Parallel()
	// A summarizer that says too much is cut to two sentences and the bound.
	b := Builder{Summarizer: talker{}, MaxChars: 100}
	s := full(Publisher{Source: "s"}, "https://s.example/1", "Headline", time.Minute, "Tech")
	d, err := b.Build(context.Background(), now, []Story{s}, Preferences{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Sections[0].Cards[0]
	if len(c.Summary) > 2 || len([]rune(c.SummaryText())) > 100 {
		t.Errorf("summary %q", c.Summary)
	}
}

type talker struct{}

func (talker) Summarize(context.Context, *extract.Article) (Summary, error) {
	return Summary{Sentences: []string{"One sentence here.", "Two sentences here.", "Three.", "Four."}}, nil
}

func TestPage(t *testing.T) {
	t.Parallel()
	pub := Publisher{Source: "bytes", Name: "Bytes <Daily>", Logo: "javascript:alert(1)", Category: "Tech"}
	st := full(pub, "https://bytes.example/a", "Chip <b>news</b>", 15*time.Minute, "")
	st.Image = &Image{URL: "https://bytes.example/i.jpg", Alt: "A chip on a board"}
	st.Article.Language = extract.Field{Value: "fr"}
	ex := Story{Publisher: pub, URL: "https://bytes.example/e", Headline: "Excerpted", Published: now.Add(-time.Hour), Excerpt: true, Description: "From the feed."}
	d, err := (&Builder{}).Build(context.Background(), now, []Story{st, ex}, Preferences{})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := d.WriteHTML(&page, PageOptions{FeedURL: "/feed.json"}); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{
		`<section class="category" id="cat-tech"`, `<h2 id="cat-tech-h">Tech</h2>`, `<article class="card"`, `<article class="card excerpt"`,
		`Chip &lt;b&gt;news&lt;/b&gt;`, `Bytes &lt;Daily&gt;`, "href=\"https://bytes.example/a\">Read full story on Bytes &lt;Daily&gt;\u00a0→</a>",
		`<img src="https://bytes.example/i.jpg" alt="A chip on a board"`, `Image: Bytes &lt;Daily&gt;`, htmlpkg.EscapeString(ExcerptLabel),
		`type="application/feed+json"`, `data-source="bytes" lang="fr">`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	for _, bad := range []string{"<script", "javascript:"} {
		if strings.Contains(html, bad) {
			t.Errorf("page has %s", bad)
		}
	}
	var buf bytes.Buffer
	if err := d.WriteJSONFeed(&buf, "https://digest.example/", "https://digest.example/feed.json"); err != nil {
		t.Fatal(err)
	}
	var f jsonFeed
	if err := json.Unmarshal(buf.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	if f.Version != "https://jsonfeed.org/version/1.1" || len(f.Items) != 2 || f.Items[0].URL != "https://bytes.example/a" ||
		f.Items[1].Tags[1] != feed.ExcerptLabel || f.Items[0].Authors[0].Name != "Bytes <Daily>" {
		t.Errorf("feed = %+v", f)
	}
}

func TestStories_S5_FromDeposits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var deps crawl.MemoryDeposits
	a := article("Read in full", "One sentence of the article, long enough to count.", "Another sentence of the body.")
	a.Canonical = extract.Field{Value: "https://www.news.example/story"}
	a.Published = extract.Instant{Time: now.Add(-time.Hour)}
	put := func(d *crawl.Deposit) {
		d.Digest = d.Sum()
		if _, err := deps.Put(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	put(&crawl.Deposit{Source: "news", URL: "https://news.example/story?utm=x", ReadAt: now, Envelope: []byte("<html>1"), Article: a})
	evil := article("Elsewhere", "One sentence of the article, long enough to count.")
	evil.Canonical = extract.Field{Value: "https://other.example/phish"}
	put(&crawl.Deposit{Source: "news", URL: "https://news.example/two", ReadAt: now, Envelope: []byte("<html>2"), Article: evil})
	gated := article("Gated", "Text.")
	gated.Access = extract.Gated
	put(&crawl.Deposit{Source: "news", URL: "https://news.example/g", ReadAt: now, Envelope: []byte("<html>3"), Article: gated})
	put(&crawl.Deposit{Source: "news", URL: "https://news.example/x", ReadAt: now, Excerpt: &feed.Excerpt{
		Label: feed.ExcerptLabel, Headline: "Refused", Description: "As the feed says.", Link: "https://news.example/x", Published: now.Add(-2 * time.Hour)}})

	ss, err := Stories(ctx, &deps, []Publisher{PublisherOf(crawl.Source{ID: "news", Name: "News", Brand: "The News", Category: "World"})}, now.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 3 {
		t.Fatalf("%d stories, want 3 (the gated one left out): %+v", len(ss), ss)
	}
	if ss[0].URL != "https://www.news.example/story" || !ss[0].Published.Equal(now.Add(-time.Hour)) || ss[0].Publisher.Name != "The News" {
		t.Errorf("full story = %+v", ss[0])
	}
	if ss[1].URL != "https://news.example/two" {
		t.Errorf("a canonical on another host must not be linked: %q", ss[1].URL)
	}
	if !ss[2].Excerpt || ss[2].Description != "As the feed says." || ss[2].Article != nil {
		t.Errorf("excerpt story = %+v", ss[2])
	}
}
