package digesttest

import (
	"fmt"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/politetest"
)

// Publisher is one demo publisher: its crawl source and the logo a
// digest's configuration would name for it.
type Publisher struct {
	Source crawl.Source
	Logo   string // "": none
	// Refuses reports that the site's robots.txt disallows its articles:
	// its stories reach a digest as the feed's excerpts.
	Refuses bool
}

// demoSites are the demo's publishers and the stories each publishes.
var demoSites = []struct {
	host, name, category string
	fullText, refuses    bool
	stories              []string
}{
	{"bytes-daily.example", "Bytes Daily", "Tech", true, false, []string{"en-chip", "en-phone", "en-app"}},
	{"harbour-herald.example", "The Harbour Herald", "World", true, false, []string{"en-tram", "en-flood", "en-water"}},
	{"ledger-line.example", "Ledger & Line", "Finance", true, false, []string{"en-rates", "en-merger", "en-jobs"}},
	{"field-notes.example", "Field Notes", "Science", true, false, []string{"en-comet", "en-bees", "en-fossil"}},
	{"matchday.example", "Matchday", "Sports", true, false, []string{"en-marathon", "en-cup"}},
	{"gazette-tech.example", "La Gazette Tech", "Tech", true, false, []string{"fr-batterie", "fr-ia"}},
	{"wissen-heute.example", "Wissen Heute", "Science", true, false, []string{"de-klima", "de-wald"}},
	{"sportblatt.example", "Sportblatt", "Sports", true, false, []string{"de-handball", "de-fussball"}},
	// No full-text licence: excerpts only.
	{"quotidien-du-port.example", "Le Quotidien du Port", "World", false, false, []string{"fr-velo", "fr-greve"}},
	// Full text allowed, but robots.txt refuses the articles: excerpts.
	{"rundschau-nord.example", "Rundschau Nord", "Finance", true, true, []string{"de-dax", "de-miete"}},
}

// Demo publishes 24 of the news set's stories on web as ten publishers
// with their RSS feeds, each of one category (Tech, World, Finance,
// Science, Sports), in English, French and German; one has no full-text
// licence and one's robots.txt disallows its articles, so their stories
// reach a digest as the feeds' excerpts. It returns the publishers. The stories are dated between 5
// minutes and 20 hours before now, the newest first in the set's order, so
// a digest built at now shows them all with their ages. Each site's
// articles live under /news/.
func Demo(web *politetest.Web, now time.Time) ([]Publisher, error) {
	news, err := News()
	if err != nil {
		return nil, err
	}
	byID := map[string]Story{}
	for _, s := range news {
		byID[s.ID] = s
	}
	ages := []time.Duration{5 * time.Minute, 15 * time.Minute, 40 * time.Minute, 2 * time.Hour, 5 * time.Hour, 9 * time.Hour, 20 * time.Hour}
	var out []Publisher
	n := 0
	for _, d := range demoSites {
		site := web.Site(d.host)
		robots := "User-agent: *\nAllow: /\n"
		if d.refuses {
			robots = "User-agent: *\nDisallow: /news/\n"
		}
		site.SetRobots(politetest.Robots{Body: robots})
		for i, id := range d.stories {
			st, ok := byID[id]
			if !ok {
				return nil, fmt.Errorf("digesttest: no story %s", id)
			}
			n++
			site.AddArticle(politetest.Article{
				ID:        i + 1,
				Slug:      id,
				Path:      "/news/" + id + "/",
				Title:     st.Title,
				Summary:   st.Standfirst,
				Body:      st.Body(),
				Author:    "Staff",
				Section:   st.Section,
				Lang:      st.Lang,
				Published: now.Add(-ages[(n*3+i)%len(ages)]),
			})
		}
		out = append(out, Publisher{
			Source: crawl.Source{
				ID:       d.host,
				Name:     d.name,
				Brand:    d.name,
				Category: d.category,
				Trigger:  crawl.Trigger{Feeds: []string{"https://" + d.host + "/feed.xml"}},
				Admitted: []string{d.host},
				FullText: d.fullText,
				Policy:   crawl.PolicySpec{Preset: crawl.Digest},
				Active:   true,
			},
			Refuses: d.refuses,
		})
	}
	return out, nil
}
