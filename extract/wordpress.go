package extract

import (
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// ErrNotPost reports JSON that is not a WordPress post: not an object, or
// one with neither an id nor a title (a REST error such as
// {"code":"rest_post_invalid_id"} is one). It matches [ErrJSON] too.
var ErrNotPost = fmt.Errorf("%w: not a WordPress post", ErrJSON)

// WordPress reads an article from one post of WordPress's REST API
// (wp-json/wp/v2/posts/N), as it is shaped with or without _embed. Each
// field's Source names the post's field, e.g. "wordpress:title.rendered":
//
//   - Headline: title.rendered, Description: excerpt.rendered, as text;
//   - Blocks: content.rendered, rendered as the body of a page is;
//   - Published and Modified: date_gmt and modified_gmt, read as UTC
//     (WordPress writes them without an offset); only when those are
//     absent, date and modified, which are local times with no stated
//     zone and so keep only their text;
//   - Canonical: link; IDs: id, scheme "wordpress";
//   - Language: lang, which multilingual plugins add;
//   - Authors: _embedded.author[].name; Section: the first
//     _embedded.wp:term category's name; Keywords: its post_tag names;
//     Image: _embedded.wp:featuredmedia[0].source_url;
//   - Access: Gated when content.protected is true (a password wall).
//
// Author and category ids without _embed are numbers, not names, and are
// not read. The error matches [ErrJSON] (or [ErrNotPost]) when body is
// not a post, [ErrTooLarge] when it exceeds [DefaultMaxBytes].
func WordPress(body []byte) (*Article, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, err
	}
	return wpArticle(v)
}

// WordPressPosts reads the articles of a list of posts, as
// wp-json/wp/v2/posts returns it (a JSON array), in the list's order. An
// element that is not a post makes the whole list an error matching
// [ErrNotPost].
func WordPressPosts(body []byte) ([]*Article, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: not an array", ErrNotPost)
	}
	out := make([]*Article, 0, len(list))
	for i, p := range list {
		a, err := wpArticle(p)
		if err != nil {
			return nil, fmt.Errorf("%w (element %d)", err, i)
		}
		out = append(out, a)
	}
	return out, nil
}

func wpArticle(v any) (*Article, error) {
	post, ok := v.(map[string]any)
	if !ok {
		return nil, ErrNotPost
	}
	_, hasID := post["id"]
	_, hasTitle := post["title"]
	if !hasID && !hasTitle {
		return nil, ErrNotPost
	}
	get := func(path string) []any {
		p, _ := compilePath(path)
		return p.find(post)
	}
	first := func(path string, asHTML bool) Field {
		for _, x := range get(path) {
			if s := jsonText(x, asHTML); s != "" {
				return Field{Value: s, Source: "wordpress:" + path}
			}
		}
		return Field{}
	}
	// A URL is read only from a string.
	link := func(path string) Field {
		for _, x := range get(path) {
			if s, ok := x.(string); ok && collapse(s) != "" {
				return Field{Value: collapse(s), Source: "wordpress:" + path}
			}
		}
		return Field{}
	}
	a := &Article{}
	a.Headline = first("title.rendered", true)
	a.Description = first("excerpt.rendered", true)
	for _, x := range get("content.rendered") {
		if s, ok := x.(string); ok {
			a.Blocks = fragmentBlocks(s)
		}
	}
	a.Published = wpInstant(first("date_gmt", false), first("date", false))
	a.Modified = wpInstant(first("modified_gmt", false), first("modified", false))
	a.Canonical = link("link")
	a.Language = first("lang", false)
	if id := first("id", false); id.Present() {
		a.IDs = append(a.IDs, Identifier{Scheme: "wordpress", Value: id.Value, Source: id.Source})
	}
	for _, x := range get("_embedded.author[].name") {
		if s := jsonText(x, true); s != "" && len(a.Authors) < maxAuthors {
			a.Authors = append(a.Authors, Field{Value: s, Source: "wordpress:_embedded.author[].name"})
		}
	}
	for _, x := range get("_embedded.wp:term[][]") {
		t, ok := x.(map[string]any)
		if !ok {
			continue
		}
		name := jsonText(t["name"], true)
		if name == "" {
			continue
		}
		switch t["taxonomy"] {
		case "category":
			if !a.Section.Present() {
				a.Section = Field{Value: name, Source: "wordpress:_embedded.wp:term[category].name"}
			}
		case "post_tag":
			if len(a.Keywords) < maxKeywords {
				a.Keywords = append(a.Keywords, Field{Value: name, Source: "wordpress:_embedded.wp:term[post_tag].name"})
			}
		}
	}
	a.Image = link("_embedded.wp:featuredmedia[0].source_url")
	if a.Image.Present() {
		// The IPTC credit WordPress keeps from the file, else its copyright.
		a.ImageCredit = first("_embedded.wp:featuredmedia[0].media_details.image_meta.credit", false)
		if !a.ImageCredit.Present() {
			a.ImageCredit = first("_embedded.wp:featuredmedia[0].media_details.image_meta.copyright", false)
		}
	}
	for _, x := range get("content.protected") {
		if b, ok := x.(bool); ok && b {
			a.Access, a.AccessSource = Gated, "wordpress:content.protected"
		}
	}
	return a, nil
}

// wpInstant reads a WordPress time: the _gmt field as UTC, else the local
// one as written.
func wpInstant(gmt, local Field) Instant {
	// WordPress writes "0000-00-00T00:00:00" for a draft's unset date.
	if gmt.Present() && !strings.HasPrefix(gmt.Value, "0000") {
		return instantZoneless(gmt, true)
	}
	if local.Present() && !strings.HasPrefix(local.Value, "0000") {
		return instantOf(local.Value, local.Source)
	}
	return Instant{}
}

// fragmentBlocks renders an HTML fragment (a CMS's rendered content) as
// blocks, with the renderer the page's body uses: the whole fragment is
// the body, its boilerplate left out as on a page.
func fragmentBlocks(s string) []Block {
	ctx := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(s), ctx)
	if err != nil {
		return nil
	}
	root := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	for _, n := range nodes {
		root.AppendChild(n)
	}
	d := &detector{index: make(map[*html.Node]int32, 64)}
	d.measure(root, 0)
	r := renderer{d: d}
	for c := root.FirstChild; c != nil; c = c.NextSibling {
		r.render(c, 1)
	}
	r.flush()
	return r.blocks
}
