package politetest

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// articleEpoch is the publication time of article 0: an article whose
// Published is zero is published articleEpoch + ID hours, so a web is the
// same on every run.
var articleEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Article is one article of a site. Every field may be left empty when
// passed to [Site.AddArticle], which fills it in deterministically from the
// ID and the site's name.
type Article struct {
	// ID is the CMS's post id (as in WordPress). It is the identifier
	// every part of the site uses: the RSS guid and Atom id
	// ("https://<site>/?p=<ID>"), the sitemap, the API's "id", the page's
	// JSON-LD "identifier" and shortlink. 0: the site's next free id.
	ID int
	// Slug is the URL slug. "": "article-<ID>".
	Slug string
	// Path is where the page lives. "": "/YYYY/MM/DD/<Slug>/" from Published.
	Path string
	// Title is the headline. "": "Article <ID> of <site>".
	Title string
	// Summary is the standfirst, used as the feed description and the
	// API's excerpt. "": two generated sentences.
	Summary string
	// Body is the text, paragraphs separated by blank lines. "": three
	// generated paragraphs.
	Body string
	// Author is the byline. "": "Staff Reporter".
	Author string
	// Section is the category. "": "News".
	Section string
	// Lang is the BCP 47 language tag. "": "en".
	Lang string
	// Published is the publication time. Zero: 2026-01-01T00:00Z + ID hours.
	Published time.Time
	// Modified is the last modification time. Zero: Published.
	Modified time.Time
	// Image is the share image's path on the site. "": "/images/<ID>.<ext>",
	// the extension cycling through jpg, png, webp and gif.
	Image string
	// ImageCredit is the share image's credit, stated in the page's JSON-LD
	// as the image's creditText. "": none stated.
	ImageCredit string
	// Furniture is how many bytes of page furniture the page carries
	// beyond its story, as a real news page does: a navigation list and
	// inline scripts, most of a page's weight, none of its text. 0: none;
	// never negative.
	Furniture int
}

var imageExts = [...]string{"jpg", "png", "webp", "gif"}

func (a Article) filled(site string) Article {
	if a.Slug == "" {
		a.Slug = "article-" + strconv.Itoa(a.ID)
	}
	if a.Published.IsZero() {
		a.Published = articleEpoch.Add(time.Duration(a.ID) * time.Hour)
	}
	a.Published = a.Published.UTC()
	if a.Modified.IsZero() {
		a.Modified = a.Published
	}
	a.Modified = a.Modified.UTC()
	if a.Path == "" {
		a.Path = fmt.Sprintf("/%04d/%02d/%02d/%s/", a.Published.Year(), a.Published.Month(), a.Published.Day(), a.Slug)
	}
	if !strings.HasPrefix(a.Path, "/") {
		a.Path = "/" + a.Path
	}
	if a.Title == "" {
		a.Title = fmt.Sprintf("Article %d of %s", a.ID, site)
	}
	if a.Summary == "" {
		a.Summary = fmt.Sprintf("This is the standfirst of article %d. It sums the story up in two sentences.", a.ID)
	}
	if a.Body == "" {
		a.Body = fmt.Sprintf("The first paragraph of article %d tells what happened, where and when.\n\n"+
			"The second paragraph gives the background that a reader needs to follow the story.\n\n"+
			"The third paragraph quotes the people involved and says what happens next.", a.ID)
	}
	if a.Author == "" {
		a.Author = "Staff Reporter"
	}
	if a.Section == "" {
		a.Section = "News"
	}
	if a.Lang == "" {
		a.Lang = "en"
	}
	if a.Image == "" {
		a.Image = fmt.Sprintf("/images/%d.%s", a.ID, imageExts[a.ID%len(imageExts)])
	}
	return a
}

// GUID returns the article's permanent identifier as the feeds and API
// carry it: "https://<site>/?p=<ID>".
func (a Article) GUID(site string) string {
	return "https://" + canonicalHost(site) + "/?p=" + strconv.Itoa(a.ID)
}

func (a Article) paragraphs() []string {
	var out []string
	for _, p := range strings.Split(a.Body, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// contentHTML renders the body as <p> elements.
func (a Article) contentHTML() string {
	var b strings.Builder
	for _, p := range a.paragraphs() {
		b.WriteString("<p>")
		b.WriteString(html.EscapeString(p))
		b.WriteString("</p>\n")
	}
	return b.String()
}

// writeFurniture writes n bytes (about: whole lines) of page furniture for
// article id: a navigation list, then an inline script's data, each line
// different, so that compression gains what it gains on real markup and
// no more than that.
func writeFurniture(b *strings.Builder, id, n int) {
	if n <= 0 {
		return
	}
	end := b.Len() + n
	b.WriteString("<nav class=\"site-menu\"><ul>\n")
	for i := 0; b.Len() < end && i < 40; i++ {
		fmt.Fprintf(b, "<li class=\"menu-item menu-item-%d\"><a href=\"/section-%d/\">Section %d</a></li>\n", i, i, i)
	}
	b.WriteString("</ul></nav>\n<script>window.__data = [\n")
	for i := 0; b.Len() < end; i++ {
		fmt.Fprintf(b, "{\"slot\":%d,\"post\":%d,\"unit\":\"ad-%x\",\"sizes\":[[300,250],[728,90]],\"lazy\":%t},\n", i, id, uint32(i*2654435761+id), i%3 == 0)
	}
	b.WriteString("0];</script>\n")
}

func (s *Site) serveArticle(w http.ResponseWriter, r *http.Request, a Article) {
	url := s.URL(a.Path)
	img := s.URL(a.Image)
	ld := map[string]any{
		"@context":         "https://schema.org",
		"@type":            "NewsArticle",
		"headline":         a.Title,
		"description":      a.Summary,
		"datePublished":    a.Published.Format(time.RFC3339),
		"dateModified":     a.Modified.Format(time.RFC3339),
		"author":           []map[string]any{{"@type": "Person", "name": a.Author}},
		"image":            []string{img},
		"articleSection":   a.Section,
		"inLanguage":       a.Lang,
		"identifier":       strconv.Itoa(a.ID),
		"mainEntityOfPage": map[string]any{"@type": "WebPage", "@id": url},
		"publisher":        map[string]any{"@type": "Organization", "name": s.name},
	}
	if a.ImageCredit != "" {
		ld["image"] = []map[string]any{{"@type": "ImageObject", "url": img, "creditText": a.ImageCredit}}
	}
	ldJSON, _ := json.Marshal(ld)
	e := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"%s\">\n<head>\n<meta charset=\"utf-8\">\n", e(a.Lang))
	fmt.Fprintf(&b, "<title>%s | %s</title>\n", e(a.Title), e(s.name))
	fmt.Fprintf(&b, "<meta name=\"description\" content=\"%s\">\n", e(a.Summary))
	fmt.Fprintf(&b, "<meta name=\"author\" content=\"%s\">\n", e(a.Author))
	fmt.Fprintf(&b, "<link rel=\"canonical\" href=\"%s\">\n", e(url))
	fmt.Fprintf(&b, "<link rel=\"shortlink\" href=\"%s\">\n", e(a.GUID(s.name)))
	fmt.Fprintf(&b, "<link rel=\"alternate\" type=\"application/json\" href=\"%s\">\n", e(s.URL("/wp-json/wp/v2/posts/"+strconv.Itoa(a.ID))))
	fmt.Fprintf(&b, "<meta property=\"og:type\" content=\"article\">\n")
	fmt.Fprintf(&b, "<meta property=\"og:site_name\" content=\"%s\">\n", e(s.name))
	fmt.Fprintf(&b, "<meta property=\"og:title\" content=\"%s\">\n", e(a.Title))
	fmt.Fprintf(&b, "<meta property=\"og:description\" content=\"%s\">\n", e(a.Summary))
	fmt.Fprintf(&b, "<meta property=\"og:url\" content=\"%s\">\n", e(url))
	fmt.Fprintf(&b, "<meta property=\"og:image\" content=\"%s\">\n", e(img))
	fmt.Fprintf(&b, "<meta property=\"og:locale\" content=\"%s\">\n", e(strings.ReplaceAll(a.Lang, "-", "_")))
	fmt.Fprintf(&b, "<meta property=\"article:published_time\" content=\"%s\">\n", a.Published.Format(time.RFC3339))
	fmt.Fprintf(&b, "<meta property=\"article:modified_time\" content=\"%s\">\n", a.Modified.Format(time.RFC3339))
	fmt.Fprintf(&b, "<meta property=\"article:author\" content=\"%s\">\n", e(a.Author))
	fmt.Fprintf(&b, "<meta property=\"article:section\" content=\"%s\">\n", e(a.Section))
	fmt.Fprintf(&b, "<meta name=\"twitter:card\" content=\"summary_large_image\">\n")
	fmt.Fprintf(&b, "<script type=\"application/ld+json\">%s</script>\n", ldJSON)
	fmt.Fprintf(&b, "</head>\n<body class=\"single postid-%d\">\n<header><a href=\"/\">%s</a></header>\n", a.ID, e(s.name))
	fmt.Fprintf(&b, "<article id=\"post-%d\">\n<h1>%s</h1>\n", a.ID, e(a.Title))
	fmt.Fprintf(&b, "<p class=\"byline\">By <span class=\"author\">%s</span>, <time datetime=\"%s\">%s</time></p>\n",
		e(a.Author), a.Published.Format(time.RFC3339), a.Published.Format("2 January 2006"))
	fmt.Fprintf(&b, "<p class=\"standfirst\">%s</p>\n", e(a.Summary))
	fmt.Fprintf(&b, "<figure><img src=\"%s\" alt=\"\"></figure>\n", e(a.Image))
	b.WriteString(a.contentHTML())
	b.WriteString("</article>\n<footer>Published by " + e(s.name) + "</footer>\n")
	writeFurniture(&b, a.ID, a.Furniture)
	b.WriteString("</body>\n</html>\n")
	body := []byte(b.String())
	serveConditional(w, r, "text/html; charset=utf-8", body, a.Modified)
}
