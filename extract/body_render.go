package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// renderer turns the chosen elements into blocks, leaving boilerplate out.
type renderer struct {
	d      *detector
	blocks []Block
	inline strings.Builder // running text not yet closed by a block boundary
	space  bool            // white space is pending in inline
	inLink int             // depth of <a> elements around the text
	words  int             // bytes of words in inline
	linked int             // of which inside links
	// keepLinks keeps running text however much of it is links (for the
	// inside of a heading, list item, quote or cell); otherwise a paragraph
	// that is mostly links is navigation and left out.
	keepLinks bool
}

// skipped reports whether n is left out of the body.
func (r *renderer) skipped(n *html.Node) bool {
	s := r.d.get(n)
	return s == nil || s.skip
}

// render appends n's blocks.
func (r *renderer) render(n *html.Node, depth int) {
	if n.Type == html.TextNode {
		r.text(n.Data)
		return
	}
	if n.Type != html.ElementNode || r.skipped(n) || depth > maxDepth {
		return
	}
	if s := r.d.get(n); s.note {
		r.flush()
		r.caption(n, depth)
		return
	}
	switch n.DataAtom {
	case atom.Article:
		if depth > 0 && teaser(n) {
			return
		}
	case atom.A:
		r.inLink++
		r.children(n, depth)
		r.inLink--
		return
	case atom.P:
		r.flush()
		r.children(n, depth)
		r.flush()
		return
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		r.flush()
		if t := r.textOf(n, depth); t != "" {
			r.blocks = append(r.blocks, Block{Kind: Heading, Text: t, Level: int(n.DataAtom.String()[1] - '0')})
		}
		return
	case atom.Ul, atom.Ol:
		r.flush()
		r.list(n, depth)
		return
	case atom.Blockquote:
		r.flush()
		if t := r.textOf(n, depth); t != "" {
			r.blocks = append(r.blocks, Block{Kind: Quote, Text: t})
		}
		return
	case atom.Pre:
		r.flush()
		var b strings.Builder
		r.raw(&b, n, depth)
		if t := strings.Trim(b.String(), "\n"); strings.TrimSpace(t) != "" {
			r.blocks = append(r.blocks, Block{Kind: Preformatted, Text: t})
		}
		return
	case atom.Table:
		if !r.d.layoutTable(n) {
			r.flush()
			r.table(n, depth)
			return
		}
	case atom.Br:
		r.newline()
		return
	case atom.Hr:
		r.flush()
		return
	}
	blockish := isBlock(n.DataAtom) || r.d.get(n).block
	if blockish {
		r.flush()
	}
	r.children(n, depth)
	if blockish {
		r.flush()
	}
}

func (r *renderer) children(n *html.Node, depth int) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		r.render(c, depth+1)
	}
}

// softHyphen marks where a word may break across lines; it is no part of
// the text.
const softHyphen = "\u00ad"

// text adds running text, white space collapsed and soft hyphens removed.
func (r *renderer) text(s string) {
	if strings.Contains(s, softHyphen) {
		s = strings.ReplaceAll(s, softHyphen, "")
	}
	for len(s) > 0 {
		i := 0
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i > 0 {
			r.space = true
			s = s[i:]
			continue
		}
		for i < len(s) && !isSpace(s[i]) {
			i++
		}
		if r.space && r.inline.Len() > 0 {
			b := r.inline.String()
			if b[len(b)-1] != '\n' {
				r.inline.WriteByte(' ')
			}
		}
		r.space = false
		r.inline.WriteString(s[:i])
		r.words += i
		if r.inLink > 0 {
			r.linked += i
		}
		s = s[i:]
	}
}

// newline breaks the running text at a <br>; two in a row end the paragraph.
func (r *renderer) newline() {
	if b := r.inline.String(); b != "" && b[len(b)-1] == '\n' {
		r.flush()
		return
	}
	if r.inline.Len() > 0 {
		r.inline.WriteByte('\n')
	}
	r.space = false
}

// flush closes the running text as a paragraph.
func (r *renderer) flush() {
	t := strings.TrimSpace(r.inline.String())
	r.inline.Reset()
	r.space = false
	mostlyLinks := r.linked*2 > r.words
	r.words, r.linked = 0, 0
	if mostlyLinks && !r.keepLinks {
		return
	}
	if t != "" {
		r.blocks = append(r.blocks, Block{Kind: Paragraph, Text: t})
	}
}

// textOf renders n's text alone, as one line per inner block.
func (r *renderer) textOf(n *html.Node, depth int) string {
	sub := renderer{d: r.d, keepLinks: true}
	sub.children(n, depth)
	sub.flush()
	parts := make([]string, 0, len(sub.blocks))
	for _, b := range sub.blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

func (r *renderer) list(n *html.Node, depth int) {
	var items []string
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || r.skipped(c) {
			continue
		}
		if t := r.textOf(c, depth+1); t != "" {
			items = append(items, t)
		}
	}
	if len(items) > 0 {
		r.blocks = append(r.blocks, Block{Kind: List, Text: strings.Join(items, "\n"), Items: items, Ordered: n.DataAtom == atom.Ol})
	}
}

func (r *renderer) table(n *html.Node, depth int) {
	var rows []string
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || r.skipped(c) || depth > maxDepth {
				continue
			}
			switch c.DataAtom {
			case atom.Tr:
				var cells []string
				for td := c.FirstChild; td != nil; td = td.NextSibling {
					if td.Type == html.ElementNode && (td.DataAtom == atom.Td || td.DataAtom == atom.Th) && !r.skipped(td) {
						cells = append(cells, strings.ReplaceAll(r.textOf(td, depth+1), "\n", " "))
					}
				}
				if strings.TrimSpace(strings.Join(cells, "")) != "" {
					rows = append(rows, strings.Join(cells, " | "))
				}
			case atom.Caption:
				if t := r.textOf(c, depth+1); t != "" {
					rows = append(rows, t)
				}
			case atom.Thead, atom.Tbody, atom.Tfoot:
				walk(c, depth+1)
			}
		}
	}
	walk(n, depth)
	if len(rows) > 0 {
		r.blocks = append(r.blocks, Block{Kind: Table, Text: strings.Join(rows, "\n")})
	}
}

// raw appends n's text as written, for <pre>.
func (r *renderer) raw(b *strings.Builder, n *html.Node, depth int) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch c.Type {
		case html.TextNode:
			b.WriteString(strings.ReplaceAll(c.Data, softHyphen, ""))
		case html.ElementNode:
			if c.DataAtom == atom.Br {
				b.WriteByte('\n')
			} else if !r.skipped(c) && depth < maxDepth {
				r.raw(b, c, depth+1)
			}
		}
	}
}

// caption renders a figure or a caption-like element: a figure's figcaption,
// or the element's own text, as Caption blocks; a figure's other content
// (images, players, credits) is left out.
func (r *renderer) caption(n *html.Node, depth int) {
	if n.DataAtom == atom.Figure {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && depth < maxDepth && c.DataAtom == atom.Figcaption {
				if s := r.d.get(c); s != nil && !s.skip {
					r.caption(c, depth+1)
				}
			}
		}
		return
	}
	if t := r.textOf(n, depth); t != "" {
		r.blocks = append(r.blocks, Block{Kind: Caption, Text: t})
	}
}

// teaser reports whether an <article> inside the body is one of a list of
// them (related posts, more from the site): it has an <article> sibling.
func teaser(n *html.Node) bool {
	for _, next := range []func(*html.Node) *html.Node{
		func(n *html.Node) *html.Node { return n.PrevSibling },
		func(n *html.Node) *html.Node { return n.NextSibling },
	} {
		for c := next(n); c != nil; c = next(c) {
			if c.Type == html.ElementNode {
				if c.DataAtom == atom.Article {
					return true
				}
				break
			}
		}
	}
	return false
}

// layoutTable reports whether a table arranges the page rather than holding
// data: it has paragraphs, nested tables or long prose in its cells.
func (d *detector) layoutTable(n *html.Node) bool {
	s := d.get(n)
	if s == nil {
		return false
	}
	return s.paras > 2 && s.text > 1000 || hasDescendant(n, atom.Table, 0) || hasDescendant(n, atom.P, 0)
}

func hasDescendant(n *html.Node, a atom.Atom, depth int) bool {
	if depth > 8 {
		return false
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			if c.DataAtom == a || hasDescendant(c, a, depth+1) {
				return true
			}
		}
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}
