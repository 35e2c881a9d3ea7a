package extract

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/politefetch/politefetch/politetest"
)

// TestBody_PolitetestArticles reads politetest's article pages over its
// loopback TLS and finds each body's paragraphs, in order, and nothing of
// the page's header, byline, image or footer.
func TestBody_PolitetestArticles(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	site := web.Site("harbour-news.example")
	bodies := []string{
		"",
		"One paragraph only, but long enough to read as prose: the ferry will run hourly from May, the council said.",
		"First, the news: the pier reopens.\n\nSecond, the background, with a comma, and another.\n\nThird, a quote: \"We are ready,\" said the harbourmaster.\n\nFourth, what happens next, which is a survey in June.",
	}
	client := web.Client()
	for _, body := range bodies {
		a := site.AddArticle(politetest.Article{Body: body})
		page := fetchPage(t, client, site.URL(a.Path))
		u, _ := url.Parse(site.URL(a.Path))
		got, err := HTML(page, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Split(a.Body, "\n\n")
		var paras []string
		for _, b := range got.Blocks {
			if b.Kind != Paragraph {
				t.Errorf("article %d: a %v block %q", a.ID, b.Kind, b.Text)
			}
			paras = append(paras, b.Text)
		}
		// The standfirst is a paragraph of the article too; it may lead.
		if len(paras) > len(want) && paras[0] == a.Summary {
			paras = paras[1:]
		}
		if strings.Join(paras, "|") != strings.Join(want, "|") {
			t.Errorf("article %d: body\n%q\nwant\n%q", a.ID, paras, want)
		}
		for _, bad := range []string{a.Title, a.Author, "Published by", a.Image} {
			if strings.Contains(got.Text(), bad) {
				t.Errorf("article %d: body holds %q", a.ID, bad)
			}
		}
	}
}

func fetchPage(t *testing.T, c *http.Client, u string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "politefetch-test/1.0 (+https://politefetch.example/bot)")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", u, res.Status)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, DefaultMaxBytes))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
