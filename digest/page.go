package digest

import (
	"encoding/json"
	"html/template"
	"io"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/politefetch/politefetch/feed"
)

// ExcerptLabel is the label a card shows over a story kept only as its
// feed describes it.
const ExcerptLabel = "Excerpt from the publisher's feed"

// PageOptions are what a page says beyond its digest. The zero value is a
// page with no feed link.
type PageOptions struct {
	// FeedURL is the digest's JSON Feed address, linked from the page.
	// "": no link.
	FeedURL string
}

// WriteHTML writes the digest as one HTML page: a heading per category and
// an article element per card, with no script, styled for a phone and a
// desktop alike. Everything from a publisher is escaped (html/template);
// a link or image address that is not https or http is left out.
func (d *Digest) WriteHTML(w io.Writer, o PageOptions) error {
	return pageTemplate.Execute(w, struct {
		*Digest
		PageOptions
	}{d, o})
}

// safeURL returns raw if it is an absolute https or http URL, else "".
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	return u.String()
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return "cat-" + b.String()
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"safeURL": safeURL,
	"slug":    slug,
	"iso":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"label":   func() string { return ExcerptLabel },
	"initial": func(s string) string {
		for _, r := range strings.TrimPrefix(strings.TrimPrefix(s, "The "), "Le ") {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return string(unicode.ToUpper(r))
			}
		}
		return "·"
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
{{with .FeedURL}}<link rel="alternate" type="application/feed+json" title="JSON Feed" href="{{.}}">
{{end}}<style>
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1b1f; background: #f4f4f6; }
header.top, main, footer { max-width: 78rem; margin: 0 auto; padding: 0 1rem; }
header.top { padding-top: 1.25rem; }
header.top h1 { margin: 0; font-size: 1.75rem; }
header.top p { margin: .25rem 0 0; color: #55556a; }
nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .5rem; margin: .75rem 0 0; padding: 0; }
nav a { display: inline-block; padding: .2rem .7rem; border-radius: 1rem; background: #e3e3ea; color: inherit; text-decoration: none; }
section.category { margin-top: 2rem; }
section.category > h2 { font-size: 1.35rem; margin: 0 0 .75rem; padding-bottom: .25rem; border-bottom: 2px solid #1b1b1f; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 20rem), 1fr)); gap: 1rem; }
article.card { display: flex; flex-direction: column; min-width: 0; background: #fff; border-radius: .6rem; padding: 1rem; box-shadow: 0 1px 3px rgba(0,0,0,.12); overflow-wrap: anywhere; }
.publisher { display: flex; align-items: center; gap: .5rem; font-size: .85rem; color: #55556a; }
.publisher img { width: 1.5rem; height: 1.5rem; object-fit: contain; border-radius: .2rem; }
.publisher .mono { display: inline-grid; place-items: center; width: 1.5rem; height: 1.5rem; border-radius: .3rem; background: #1b1b1f; color: #fff; font-weight: 700; font-size: .8rem; }
.publisher .brand { font-weight: 600; color: #1b1b1f; }
article.card h3 { font-size: 1.1rem; line-height: 1.3; margin: .5rem 0; }
figure { margin: 0 0 .5rem; }
figure img { display: block; width: 100%; height: auto; max-height: 14rem; object-fit: cover; border-radius: .4rem; }
figcaption { font-size: .75rem; color: #55556a; }
.label { display: inline-block; align-self: flex-start; font-size: .75rem; font-weight: 600; text-transform: uppercase; letter-spacing: .03em; color: #7a4b00; background: #fff1d6; border-radius: .3rem; padding: .1rem .45rem; }
.summary { margin: .25rem 0 .75rem; }
.meta { font-size: .8rem; color: #55556a; margin: auto 0 .5rem; }
a.more { font-weight: 600; color: #0b57d0; text-decoration: none; }
a.more:hover, a.more:focus { text-decoration: underline; }
p.empty { color: #55556a; }
footer { margin: 2.5rem auto 1.5rem; font-size: .8rem; color: #55556a; }
@media (min-width: 48rem) { header.top h1 { font-size: 2.25rem; } }
</style>
</head>
<body>
<header class="top">
<h1>{{.Title}}</h1>
<p><time datetime="{{iso .Built}}">{{.Built.UTC.Format "Monday 2 January 2006, 15:04 MST"}}</time></p>
{{if .Sections}}<nav aria-label="Categories"><ul>{{range .Sections}}<li><a href="#{{slug .Category}}">{{.Category}}</a></li>{{end}}</ul></nav>{{end}}
</header>
<main>
{{range .Sections}}<section class="category" id="{{slug .Category}}" aria-labelledby="{{slug .Category}}-h">
<h2 id="{{slug .Category}}-h">{{.Category}}</h2>
{{if .Cards}}<div class="cards">
{{range .Cards}}{{$c := .}}<article class="card{{if .Excerpt}} excerpt{{end}}" data-source="{{.Source}}"{{with .Lang}} lang="{{.}}"{{end}}>
<div class="publisher">{{with safeURL .Logo}}<img src="{{.}}" alt="" width="24" height="24" loading="lazy" referrerpolicy="no-referrer">{{else}}<span class="mono" aria-hidden="true">{{initial $c.Brand}}</span>{{end}}<span class="brand">{{.Brand}}</span> · <time datetime="{{iso .Published}}">{{.Age}}</time></div>
<h3>{{.Headline}}</h3>
{{with .Image}}{{$img := .}}{{with safeURL .URL}}<figure><img src="{{.}}" alt="{{$img.Alt}}" loading="lazy" referrerpolicy="no-referrer"><figcaption>Image: {{$img.Credit}}</figcaption></figure>{{end}}{{end}}
{{if .Excerpt}}<span class="label">{{label}}</span>{{end}}
<p class="summary">{{.SummaryText}}</p>
{{with .ReadingTime}}<p class="meta">{{.}}</p>{{else}}<p class="meta"></p>{{end}}
{{with safeURL .URL}}<a class="more" href="{{.}}">{{$c.ReadMore}}</a>{{else}}<span class="more">{{$c.ReadMore}}</span>{{end}}
</article>
{{end}}</div>
{{else}}<p class="empty">No {{.Category}} stories today.</p>
{{end}}</section>
{{else}}<p class="empty">No stories today.</p>
{{end}}</main>
<footer>Summaries are at most two sentences; every story links to its publisher.{{with .FeedURL}} <a href="{{.}}">JSON Feed</a>{{end}}</footer>
</body>
</html>
`))

// jsonFeed is JSON Feed 1.1 (https://www.jsonfeed.org/version/1.1/).
type jsonFeed struct {
	Version     string     `json:"version"`
	Title       string     `json:"title"`
	HomePageURL string     `json:"home_page_url,omitempty"`
	FeedURL     string     `json:"feed_url,omitempty"`
	Items       []feedItem `json:"items"`
}

type feedItem struct {
	ID            string       `json:"id"`
	URL           string       `json:"url"`
	Title         string       `json:"title"`
	Summary       string       `json:"summary"`
	ContentText   string       `json:"content_text"`
	Image         string       `json:"image,omitempty"`
	DatePublished string       `json:"date_published"`
	Authors       []feedAuthor `json:"authors,omitempty"`
	Tags          []string     `json:"tags,omitempty"`
}

type feedAuthor struct {
	Name string `json:"name"`
}

// WriteJSONFeed writes the digest as a JSON Feed 1.1: an item per card, in
// the page's order, its summary (at most two sentences), the publisher as
// author, the category as a tag (and "excerpt" for an excerpt), and the
// canonical URL as its id and url. homeURL and feedURL are the page's and
// the feed's addresses ("" leaves them out).
func (d *Digest) WriteJSONFeed(w io.Writer, homeURL, feedURL string) error {
	f := jsonFeed{Version: "https://jsonfeed.org/version/1.1", Title: d.Title, HomePageURL: homeURL, FeedURL: feedURL, Items: []feedItem{}}
	for _, s := range d.Sections {
		for _, c := range s.Cards {
			u := safeURL(c.URL)
			if u == "" {
				continue
			}
			it := feedItem{
				ID: u, URL: u, Title: c.Headline, Summary: c.SummaryText(),
				ContentText:   c.SummaryText() + "\n\n" + c.ReadMore() + " " + u,
				DatePublished: c.Published.UTC().Format(time.RFC3339),
				Authors:       []feedAuthor{{Name: c.Brand}},
				Tags:          []string{c.Category},
			}
			if c.Excerpt {
				it.Tags = append(it.Tags, feed.ExcerptLabel)
			}
			if c.Image != nil {
				it.Image = safeURL(c.Image.URL)
			}
			f.Items = append(f.Items, it)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}
