package extract

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// readBody finds the article's body in doc and sets a.Blocks to it, in
// reading order. It measures every element below <body> once, picks the
// container whose paragraphs carry the most prose and the fewest links, adds
// the siblings that read like more of the same, and renders the result as
// blocks, leaving out boilerplate (navigation, forms, share and related
// widgets, scripts, hidden elements) wherever it sits.
func readBody(doc *html.Node, page *url.URL, a *Article, opts *Options) {
	body := findElement(doc, atom.Body, 3)
	if body == nil {
		return
	}
	blocks, named := detect(body, false)
	if n := proseLen(blocks); n < thinBody && named {
		// Names misled the detector (a wrapper called "ad-container"):
		// measure again by the text alone, and keep that if it finds more.
		if alt, _ := detect(body, true); proseLen(alt) > 2*n {
			blocks = alt
		}
	}
	if n := proseLen(blocks); n < thinBody && expandTemplates(body, 0) {
		// The body may be markup kept in a script for the page's own code
		// to insert (Blogger keeps a post in a text/template script).
		if alt, _ := detect(body, false); proseLen(alt) > 2*n {
			blocks = alt
		}
	}
	a.Blocks = dropEmptySections(dropHeadline(blocks, a.Headline.Value, documentTitle(doc)))
}

// thinBody is the length of running text, in bytes, under which a body is
// implausibly thin and the detector tries another candidate.
const thinBody = 250

// expandTemplates replaces every <script> below n whose type names a
// template of HTML (text/template, text/x-template) by the elements its
// text parses to, inside a <div>, and reports whether it replaced any.
func expandTemplates(n *html.Node, depth int) bool {
	found := false
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && depth < maxDepth {
			if c.DataAtom == atom.Script {
				if t := strings.ToLower(attr(c, "type")); strings.HasPrefix(t, "text/") && strings.Contains(t, "template") && c.FirstChild != nil {
					if expandTemplate(c) {
						found = true
					}
				}
			} else if expandTemplates(c, depth+1) {
				found = true
			}
		}
		c = next
	}
	return found
}

// expandTemplate puts the markup of script s in its place, as the children
// of a <div>; it reports false, leaving s, when the text parses to nothing.
func expandTemplate(s *html.Node) bool {
	var b strings.Builder
	for c := s.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	div := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(b.String()), div)
	if err != nil || len(nodes) == 0 {
		return false
	}
	for _, c := range nodes {
		div.AppendChild(c)
	}
	s.Parent.InsertBefore(div, s)
	s.Parent.RemoveChild(s)
	return true
}

// proseLen is the length of the running text of blocks: paragraphs, quotes
// and preformatted text, not lists, tables or headings, which a page of
// teasers or links is made of too.
func proseLen(blocks []Block) int {
	n := 0
	for _, b := range blocks {
		switch b.Kind {
		case Paragraph, Quote, Preformatted:
			n += len(b.Text)
		}
	}
	return n
}

// dropHeadline leaves out of the body the blocks that repeat the headline
// (it is metadata, in a.Headline): a block whose text is the headline or the
// document's title, or begins the title ("Headline | Site").
func dropHeadline(blocks []Block, headline, title string) []Block {
	headline, title = normSpace(headline), normSpace(title)
	if headline == "" && title == "" {
		return blocks
	}
	out := blocks[:0]
	for _, b := range blocks {
		if (b.Kind == Heading || b.Kind == Paragraph) && len(b.Text) <= 2*max(len(headline), len(title)) {
			t := normSpace(b.Text)
			if t == headline || t == title || (strings.Count(t, " ") >= 1 && len(t) < len(title) && strings.HasPrefix(title, t)) {
				continue
			}
		}
		out = append(out, b)
	}
	return out
}

// dropEmptySections leaves out headings over nothing: a heading followed by
// the end of the body, or by a heading of its level or above, introduced
// something the detector left out (comments, related links).
func dropEmptySections(blocks []Block) []Block {
	keep := make([]bool, len(blocks))
	var next *Block // the next block kept, captions aside
	for i := len(blocks) - 1; i >= 0; i-- {
		b := &blocks[i]
		if b.Kind == Heading && (next == nil || next.Kind == Heading && next.Level <= b.Level) {
			continue
		}
		keep[i] = true
		if b.Kind != Caption {
			next = b
		}
	}
	out := blocks[:0]
	for i, b := range blocks {
		if keep[i] {
			out = append(out, b)
		}
	}
	return out
}

// normSpace collapses white space and trims it.
func normSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// documentTitle is the text of the page's <title>.
func documentTitle(doc *html.Node) string {
	root := findElement(doc, atom.Html, 2)
	if root == nil {
		return ""
	}
	head := findElement(root, atom.Head, 1)
	if head == nil {
		return ""
	}
	for c := head.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.DataAtom == atom.Title && c.FirstChild != nil {
			return c.FirstChild.Data
		}
	}
	return ""
}

// findElement returns the first element of kind a within depth levels of n.
func findElement(n *html.Node, a atom.Atom, depth int) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	if depth == 0 {
		return nil
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findElement(c, a, depth-1); f != nil {
			return f
		}
	}
	return nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// The classes of element the detector knows before measuring.
type elementKind uint8

const (
	kindPlain elementKind = iota
	kindDrop              // never content: scripts, media, controls, hidden
	kindWeak              // boilerplate by name or tag, unless it plainly holds an article
	kindNote              // a caption or credit
)

func classify(n *html.Node, plain bool) elementKind {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Math, atom.Canvas,
		atom.Iframe, atom.Object, atom.Embed, atom.Video, atom.Audio, atom.Source, atom.Img, atom.Picture,
		atom.Map, atom.Button, atom.Input, atom.Select, atom.Textarea, atom.Option, atom.Dialog, atom.Head,
		atom.Link, atom.Meta, atom.Title:
		return kindDrop
	case atom.Nav, atom.Aside, atom.Footer, atom.Form, atom.Header, atom.Menu:
		return kindWeak
	case atom.Figcaption, atom.Figure:
		return kindNote
	}
	if n.Type != html.ElementNode {
		return kindDrop
	}
	var cls, id string
	for _, at := range n.Attr {
		switch at.Key {
		case "hidden":
			return kindDrop
		case "aria-hidden":
			if at.Val == "true" {
				return kindDrop
			}
		case "style":
			if hiddenStyle(at.Val) {
				return kindDrop
			}
		case "class":
			cls = at.Val
		case "id":
			id = at.Val
		case "role":
			switch at.Val {
			case "dialog", "alertdialog":
				return kindDrop // a pop-up, shown over the page when it is shown at all
			case "navigation", "complementary", "contentinfo", "banner", "menu", "menubar", "search", "alert":
				return kindWeak
			}
		case "aria-modal":
			if at.Val == "true" {
				return kindDrop
			}
		}
	}
	if cls == "" && id == "" {
		return kindPlain
	}
	for c := range strings.FieldsSeq(cls) {
		if hiddenClasses[c] {
			return kindDrop
		}
	}
	if plain {
		return kindPlain
	}
	return nameKind(cls, id)
}

func hiddenStyle(s string) bool {
	s = strings.ToLower(s)
	s = strings.ReplaceAll(s, " ", "")
	return strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden")
}

// What the words of a class or id say about an element: hard boilerplate
// (comments) is left out whatever it holds; a widget word marks boilerplate
// unless the element plainly holds an article; a layout word, unless a
// content word is there too.
const (
	wordHard uint8 = 1 + iota
	wordWidget
	wordLayout
	wordContent
	wordNote
	wordEmbed // an embedded post or player: content, whatever else the name says
)

var nameWords = map[string]uint8{
	"comment": wordHard, "comments": wordHard, "commentlist": wordHard, "disqus": wordHard, "replies": wordHard,
	"respond": wordHard,

	"ad": wordWidget, "ads": wordWidget, "advert": wordWidget, "advertisement": wordWidget, "adsbygoogle": wordWidget,
	"share": wordWidget, "sharing": wordWidget, "sharebar": wordWidget, "social": wordWidget, "related": wordWidget,
	"newsletter": wordWidget, "subscribe": wordWidget, "subscription": wordWidget, "signup": wordWidget,
	"promo": wordWidget, "promotion": wordWidget, "outbrain": wordWidget, "taboola": wordWidget,
	"recommended": wordWidget, "recommendations": wordWidget, "sponsor": wordWidget, "sponsored": wordWidget,
	"popular": wordWidget, "trending": wordWidget, "breadcrumb": wordWidget, "breadcrumbs": wordWidget,
	"cookie": wordWidget, "cookies": wordWidget, "consent": wordWidget, "gdpr": wordWidget, "popup": wordHard,
	"modal": wordWidget, "paywall": wordWidget, "byline": wordWidget, "pagination": wordWidget, "pager": wordWidget,
	"sharedaddy": wordWidget, "relatedposts": wordWidget, "skyscraper": wordWidget, "rss": wordWidget, "gallery": wordWidget, "slideshow": wordWidget, "carousel": wordWidget,
	"lightbox":  wordWidget,
	"copyright": wordWidget, "disclaimer": wordWidget, "legal": wordWidget, "overlay": wordHard, "teaser": wordWidget,
	"teasers": wordWidget, "readmore": wordWidget, "app": wordWidget, "apps": wordWidget, "download": wordWidget,
	"pdf": wordWidget, "print": wordWidget, "login": wordWidget, "register": wordWidget, "optin": wordWidget,

	"sidebar": wordLayout, "footer": wordLayout, "header": wordLayout, "masthead": wordLayout, "menu": wordLayout,
	"nav": wordLayout, "navbar": wordLayout, "navigation": wordLayout, "banner": wordLayout, "widget": wordLayout,
	"toolbar": wordLayout, "tags": wordLayout, "combx": wordLayout, "community": wordLayout, "extra": wordLayout,
	"supplemental": wordLayout, "meta": wordLayout,

	"article": wordContent, "body": wordContent, "content": wordContent, "main": wordContent, "entry": wordContent,
	"story": wordContent, "text": wordContent, "prose": wordContent, "blog": wordContent, "post": wordContent,
	"hentry": wordContent,

	"embed": wordEmbed, "embedded": wordEmbed,

	"caption": wordNote, "credit": wordNote, "credits": wordNote, "figcaption": wordNote,
}

// hiddenClasses are whole class names that hide an element from readers.
var hiddenClasses = map[string]bool{
	"hidden": true, "hide": true, "sr-only": true, "screen-reader-text": true, "visually-hidden": true,
	"visuallyhidden": true, "d-none": true, "element-invisible": true, "offscreen": true,
}

// nameKind classifies an element by the words of its class and id.
func nameKind(cls, id string) elementKind {
	f := nameFlags(cls) | nameFlags(id)
	switch {
	case f&(1<<wordHard) != 0:
		return kindDrop
	case f&(1<<wordEmbed) != 0:
		return kindPlain
	case f&(1<<wordWidget) != 0:
		return kindWeak
	case f&(1<<wordLayout) != 0 && f&(1<<wordContent) == 0:
		return kindWeak
	case f&(1<<wordNote) != 0:
		return kindNote
	}
	return kindPlain
}

// nameFlags returns the set (1<<word...) of the kinds of word in a class or id
// value. Words are lower-cased and split at anything not a letter or digit
// and where lower case turns upper (commentsContainer: comments, container).
func nameFlags(v string) uint16 {
	var buf [24]byte
	var flags uint16
	n := 0
	emit := func() {
		if n > 0 && n <= len(buf) {
			flags |= 1 << nameWords[string(buf[:n])]
		}
		n = 0
	}
	prevLower := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			if n < len(buf) {
				buf[n] = c
			}
			n++
			prevLower = true
		case 'A' <= c && c <= 'Z':
			if prevLower {
				emit()
			}
			if n < len(buf) {
				buf[n] = c + 'a' - 'A'
			}
			n++
			prevLower = false
		default:
			emit()
			prevLower = false
		}
	}
	emit()
	return flags &^ 1 // bit 0: words of no kind
}

// classWeight is a hint from an element's class and id.
func classWeight(n *html.Node) float64 {
	w := 0.0
	for _, at := range n.Attr {
		switch at.Key {
		case "class", "id":
			if nameFlags(at.Val)&(1<<wordContent) != 0 {
				w += 50
			}
		case "itemprop":
			if at.Val == "articleBody" {
				w += 25
			}
		}
	}
	if n.DataAtom == atom.Article {
		w += 10
	}
	return w
}

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Details, atom.Dialog, atom.Dd, atom.Div,
		atom.Dl, atom.Dt, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Form, atom.H1, atom.H2,
		atom.H3, atom.H4, atom.H5, atom.H6, atom.Header, atom.Hgroup, atom.Hr, atom.Li, atom.Main, atom.Nav,
		atom.Ol, atom.P, atom.Pre, atom.Section, atom.Table, atom.Ul, atom.Tr, atom.Td, atom.Th, atom.Tbody,
		atom.Thead, atom.Tfoot, atom.Caption, atom.Center, atom.Summary, atom.Menu, atom.Br:
		return true
	}
	return false
}

// textBytes counts s's bytes that are not white space.
func textBytes(s string) int32 {
	n := int32(0)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '\f':
		default:
			n++
		}
	}
	return n
}

func countCommas(s string) int32 {
	n := int32(strings.Count(s, ","))
	if !isASCII(s) {
		for _, r := range s {
			switch r {
			case '，', '、', '،':
				n++
			}
		}
	}
	return n
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
