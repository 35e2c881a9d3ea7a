package extract

import (
	"net/url"
	"testing"
)

func TestSection_CategoriesThePageStates(t *testing.T) {
	const self = "https://news.example/politik/2024/council-vote"
	crumbLD := `<script type="application/ld+json">{"@context":"https://schema.org","@type":"BreadcrumbList","itemListElement":[
{"@type":"ListItem","position":1,"name":"Start","item":"https://news.example/"},
{"@type":"ListItem","position":2,"name":"Politik","item":"https://news.example/politik/"},
{"@type":"ListItem","position":3,"name":"The council votes","item":"` + self + `"}]}</script>`
	for _, c := range []struct {
		name, head, body string
		want, source     string
	}{{
		name: "CategoryTagLink",
		body: `<div class="entry-meta">Filed under <a href="/category/local/" rel="category tag">Local news</a>, <a href="/category/council/" rel="category tag">Council</a></div>`,
		want: "Local news", source: "a[rel=category]",
	}, {
		name: "BreadcrumbListInJSONLD",
		head: crumbLD,
		want: "Politik", source: "json-ld:BreadcrumbList.itemListElement",
	}, {
		name: "BreadcrumbTrailInMarkup",
		body: `<nav class="breadcrumbs"><a href="/">Home</a> › <a href="/sport/">Sport</a> › <a href="/sport/rugby/">Rugby</a> › <span>The final</span></nav>`,
		want: "Rugby", source: "breadcrumb",
	}, {
		name: "BreadcrumbEndingAtThePage",
		body: `<ol class="breadcrumb"><li><a href="/">Home</a></li><li><a href="/politik/">Politik</a></li><li><a href="` + self + `">The council votes</a></li></ol>`,
		want: "Politik", source: "breadcrumb",
	}, {
		name: "ArticleSectionBeforeBreadcrumbs",
		head: `<meta property="article:section" content="Inland">` + crumbLD,
		want: "Inland", source: "meta[property=article:section]",
	}, {
		name: "MetaCategory",
		head: `<meta name="category" content="Wirtschaft">`,
		want: "Wirtschaft", source: "meta[name=category]",
	}, {
		name: "HomeAloneIsNoSection",
		body: `<div class="breadcrumb"><a href="/">Home</a></div>`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			page := datePage(c.head, c.body)
			u, _ := url.Parse(self)
			a, err := HTML(page, u, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.Section.Value != c.want || a.Section.Source != c.source {
				t.Errorf("Section = %q from %q, want %q from %q", a.Section.Value, a.Section.Source, c.want, c.source)
			}
			checkStated(t, page, a)
		})
	}
}
