package backoff

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// articleHead is the <head> and page chrome of an ordinary news article:
// scripts, style sheets and class names full of '-', '_', '/' and '#'.
const articleHead = `<!DOCTYPE html>
<html lang="en-GB" class="no-js">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Council approves the new river crossing | The Daily Example</title>
<link rel="canonical" href="https://news.example/2026/11/30/council-approves-river-crossing">
<link rel="stylesheet" href="/static/css/main.3f9a1c.css">
<link rel="preload" href="/static/fonts/source-serif_400.woff2" as="font" crossorigin>
<meta property="og:title" content="Council approves the new river crossing">
<meta property="og:image" content="https://cdn.news.example/img/2026/11/bridge_1200x630.jpg">
<script async src="https://www.googletagmanager.com/gtag/js?id=G-4B7Q2X9Z1K"></script>
<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);} gtag('js', new Date()); gtag('config', 'G-4B7Q2X9Z1K', {'anonymize_ip': true});</script>
<style>.site-header{border-bottom:1px solid #e5e5e5}#main_nav a{color:#333}.c-article__body p{margin:0 0 1.2em}</style>
</head>
<body class="article-page layout_wide">
<header class="site-header"><a class="skip-link" href="#main-content">Skip to content</a>
<nav id="main_nav"><ul><li><a href="/news/">News</a></li><li><a href="/sport/">Sport</a></li><li><a href="/opinion/">Opinion</a></li></ul></nav></header>
<main id="main-content"><article class="c-article post-48213">
<h1 class="c-article__title">Council approves the new river crossing</h1>
<p class="c-article__byline">By Jane Example, 30 November 2026</p>
`

// articlePage is an ordinary article of about 10 KB.
var articlePage = []byte(articleHead +
	strings.Repeat("<p>An article paragraph of ordinary length.</p>\n", 200) +
	"</article></main></body></html>\n")

// scriptPage is a 16 KiB page of the script-heavy kind: inline CSS with BEM
// class names, a bundler's runtime, JSON state, and some article text.
var scriptPage = func() []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Markets rally as rates hold - Example Business</title>` + "\n<style>\n")
	for i := 0; b.Len() < 5<<10; i++ {
		fmt.Fprintf(&b, ".c-card--%d .c-card__title{font:600 1.125rem/1.3 \"Inter\",system-ui,sans-serif;color:#1a1a1a}\n", i)
		fmt.Fprintf(&b, ".o-grid__item_%d > a:hover,#nav_item-%d:focus-visible{outline:2px solid #0a58ca;text-decoration:underline}\n", i, i)
	}
	b.WriteString("</style>\n<script>\n")
	b.WriteString(`(self.__next_f=self.__next_f||[]).push([0]);var __webpack_modules__={},__webpack_module_cache__={};` + "\n")
	for i := 0; b.Len() < 11<<10; i++ {
		fmt.Fprintf(&b, `__webpack_modules__[%d]=function(e,t,n){"use strict";var r=n(%d),o=n.n(r);t.default=function(e){return o()("js-share_"+e.id,{"data-track":"share-button","aria-label":'Share'})}};`+"\n", i, i+7)
		fmt.Fprintf(&b, `self.__next_f.push([1,"%d:I[\"app/_components/article-body.tsx\",[\"static/chunks/app-page_%x.js\"],\"default\"]\n"]);`+"\n", i, i*7919)
	}
	b.WriteString("</script></head>\n<body class=\"page page--article\"><main id=\"content\">\n")
	for b.Len() < ChallengePeek {
		b.WriteString(`<p class="c-article__para">Shares in the region's largest lenders rose on Tuesday after the central bank left rates unchanged, while bond yields fell for a third day.</p>` + "\n")
	}
	return []byte(b.String()[:ChallengePeek])
}()

// BenchmarkDetectChallenge times detect against detectRef, the naive
// implementation it replaced, on ordinary pages (which every fetch meets)
// and on recorded challenge and denial pages.
func BenchmarkDetectChallenge(b *testing.B) {
	html := http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Server": {"nginx"}}
	type page struct {
		name   string
		status int
		header http.Header
		body   []byte
	}
	pages := []page{
		{"article-10KB-200", 200, html, articlePage},
		{"script-16KiB-200", 200, html, scriptPage},
	}
	for _, file := range []string{"cloudflare-jschallenge-503.http", "sucuri-js-challenge.http", "plain-apache-403.http"} {
		r := readRecorded(b, file)
		pages = append(pages, page{strings.TrimSuffix(file, ".http"), r.status, r.header, r.body})
	}
	for _, p := range pages {
		want := detectRef(p.status, p.header, p.body)
		if got := detect(p.status, p.header, p.body); got != want {
			b.Fatalf("%s: detect = %d, detectRef = %d", p.name, got, want)
		}
		for _, impl := range []struct {
			name   string
			detect func(int, http.Header, []byte) int
		}{{"ref", detectRef}, {"new", detect}} {
			b.Run(p.name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(p.body)))
				b.ReportAllocs()
				for b.Loop() {
					impl.detect(p.status, p.header, p.body)
				}
			})
		}
	}
}
