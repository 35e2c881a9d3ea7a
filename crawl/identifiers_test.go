package crawl

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/politefetch/politefetch/politetest"
)

// The backlog list names an article by one id and the feed by another: the
// record holds both, the article's own id makes the third, and nothing is
// deposited (V3).
func TestCrawler_V3_FeedAndListDisagree(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("twoids.example")
	a := s.AddArticle(politetest.Article{ID: 7})
	s.Handle("/feed.xml", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>%s</link><description>d</description>
<item><title>A</title><link>%s</link><guid isPermaLink="false">https://twoids.example/?p=999</guid></item>
</channel></rss>`, s.URL("/"), s.URL(a.Path))
	}))
	var ev events
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), OnEvent: ev.on,
		Sources: []Source{siteSource(s.Name(), StrictNews, true)}}
	rep := mustPass(t, c, s.Name())
	if rep.Mismatched != 1 || rep.Deposited != 0 {
		t.Fatalf("report %+v", rep)
	}
	if m := ev.of(EventMismatch); len(m) != 1 || m[0].IDs != [3]string{"999", "7", "7"} {
		t.Fatalf("mismatch %+v, want feed 999, list 7, article 7", m)
	}
}
