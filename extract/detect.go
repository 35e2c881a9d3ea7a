package extract

import (
	"slices"
	"sync"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// detect measures body's elements, chooses the body's containers and renders
// them. With plain set, class and id names are not read (hidden elements and
// tags still are). It also reports whether an element with content was left
// out for its name alone.
func detect(body *html.Node, plain bool) ([]Block, bool) {
	d := detectors.Get().(*detector)
	defer d.release()
	d.plain = plain
	d.measure(body, 0)
	d.markSkipped()
	roots := d.choose(body)
	r := renderer{d: d}
	for _, n := range roots {
		r.render(n, 0)
	}
	r.flush()
	return r.blocks, d.named
}

// stats is what the detector learns about one element's subtree, boilerplate
// left out.
type stats struct {
	n      *html.Node
	end    int32   // index after the last element below n (the nodes are in document order)
	text   int32   // bytes of text, whitespace not counted
	link   int32   // of which inside links
	paras  int32   // paragraphs of prose below
	commas int32   // commas in the text outside block children
	prose  int32   // bytes of text in paragraphs of prose below
	score  float64 // prose credited to this element as a container
	block  bool    // holds block-level elements
	skip   bool    // boilerplate: left out of the body
	note   bool    // a caption or credit: rendered as a Caption, not measured as prose
	weight float64 // class and id hint
}

// value is how much s looks like the article's container.
func (s *stats) value() float64 {
	return s.score * (1 - s.linkDensity()) * (1 + s.weight/100)
}

func (s *stats) linkDensity() float64 {
	if s.text == 0 {
		return 0
	}
	return float64(s.link) / float64(s.text)
}

type detector struct {
	nodes []stats
	index map[*html.Node]int32
	path  []int32 // the ancestors of the element being measured
	plain bool    // class and id names are not read
	named bool    // an element with content was left out for its name alone
}

// detectors keeps detectors between pages: a detector's index and nodes are
// its largest allocations, sized by the page, and most pages are alike.
var detectors = sync.Pool{New: func() any {
	return &detector{index: make(map[*html.Node]int32, 1024)}
}}

// maxPooledNodes bounds what a pooled detector keeps: one huge page's
// buffers are dropped rather than held for the pages after it.
const maxPooledNodes = 1 << 14

// release empties d, dropping its references to the page, and returns it
// to the pool unless it grew past maxPooledNodes.
func (d *detector) release() {
	if cap(d.nodes) > maxPooledNodes {
		return
	}
	clear(d.index)
	clear(d.nodes)
	d.nodes, d.path = d.nodes[:0], d.path[:0]
	d.plain, d.named = false, false
	detectors.Put(d)
}

func (d *detector) get(n *html.Node) *stats {
	if i, ok := d.index[n]; ok {
		return &d.nodes[i]
	}
	return nil
}

// measure records stats for element n and its subtree and returns its index.
func (d *detector) measure(n *html.Node, depth int) int32 {
	i := int32(len(d.nodes))
	d.nodes = append(d.nodes, stats{n: n})
	d.index[n] = i
	kind := kindPlain
	if depth > 0 {
		kind = classify(n, d.plain)
	}
	var text, link, paras, commas, inline, prose int32
	block := false
	d.path = append(d.path, i)
	if depth < maxDepth && kind != kindDrop {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case html.TextNode:
				t := textBytes(c.Data)
				text += t
				inline += t
				commas += countCommas(c.Data)
				if n.DataAtom == atom.A {
					link += t
				}
			case html.ElementNode:
				ci := d.measure(c, depth+1)
				cs := &d.nodes[ci]
				if cs.skip || cs.note {
					continue
				}
				text += cs.text
				if n.DataAtom == atom.A {
					link += cs.text
				} else {
					link += cs.link
				}
				paras += cs.paras
				prose += cs.prose
				if cs.block || isBlock(c.DataAtom) {
					block = true
				} else {
					inline += cs.text
					commas += cs.commas
				}
			}
		}
	}
	d.path = d.path[:len(d.path)-1]
	s := &d.nodes[i]
	s.end = int32(len(d.nodes))
	s.text, s.link, s.block, s.commas = text, link, block, commas
	switch kind {
	case kindDrop:
		s.skip = true
		if n.FirstChild != nil && !d.plain && !d.named && classify(n, true) == kindPlain {
			d.named = true
		}
		return i
	case kindNote:
		s.note = true
		return i
	case kindWeak:
		// Boilerplate by its name, unless it plainly holds an article.
		if !(paras >= 3 && text >= 600 && s.linkDensity() < 0.3) {
			s.skip = true
			if text > 0 && !d.plain && classify(n, true) == kindPlain {
				d.named = true
			}
			return i
		}
	}
	s.weight = classWeight(n)
	// A paragraph of prose credits its container and, less, the ones above.
	if isProse(n) && inline >= minProse {
		v := 1 + float64(commas) + min(float64(inline)/100, 3)
		if n.DataAtom == atom.P || n.DataAtom == atom.Pre || n.DataAtom == atom.Blockquote || n.DataAtom == atom.Td {
			d.credit(len(d.path)-1, v)
		} else {
			s.score += v
			d.credit(len(d.path)-1, v/2)
		}
		paras++
		prose += inline
	}
	s.paras, s.prose = paras, prose
	return i
}

// markSkipped marks every element below a skipped one as skipped too.
func (d *detector) markSkipped() {
	until := int32(0)
	for i := range d.nodes {
		s := &d.nodes[i]
		if int32(i) < until {
			s.skip = true
			continue
		}
		if s.skip {
			until = s.end
		}
	}
}

// siblingProse is how much prose, in bytes, a sibling of the body's
// container needs to join it whatever its score.
const siblingProse = 100

// minProse is the shortest text, in bytes, that counts as a paragraph.
const minProse = 25

// credit adds a paragraph's value v to the ancestor at path[at] and halves and
// thirds of it to the next two up.
func (d *detector) credit(at int, v float64) {
	for k, div := 0, 1.0; k < 3 && at-k >= 0; k, div = k+1, div+1 {
		d.nodes[d.path[at-k]].score += v / div
	}
}

// isProse reports whether n holds running text of its own: a paragraph-like
// element, or a container whose text sits directly in it.
func isProse(n *html.Node) bool {
	switch n.DataAtom {
	case atom.P, atom.Pre, atom.Blockquote, atom.Td, atom.Div, atom.Section, atom.Article, atom.Main, atom.Span, atom.Font, atom.Center, atom.Dd:
		return true
	}
	return false
}

// choose picks the elements whose rendering is the body, in document order.
func (d *detector) choose(body *html.Node) []*html.Node {
	best := -1
	bestScore := 0.0
	for i := range d.nodes {
		s := &d.nodes[i]
		if s.skip || s.score <= 0 {
			continue
		}
		f := s.value()
		if f > bestScore {
			best, bestScore = i, f
		}
	}
	if best < 0 {
		return nil
	}
	top := d.tableOf(d.nodes[best].n)
	parent := top.Parent
	if parent == nil || top == body {
		return []*html.Node{top}
	}
	threshold := max(10, bestScore*0.2)
	var out []*html.Node
	for c := parent.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c == top {
			out = append(out, c)
			continue
		}
		s := d.get(c)
		if s == nil || s.skip {
			continue
		}
		f := s.value()
		switch {
		case s.note:
			out = append(out, c) // a figure beside the body: its caption
		case f >= threshold:
			out = append(out, c)
		case c.DataAtom == atom.P && s.text >= 80 && s.linkDensity() < 0.25:
			out = append(out, c)
		case s.prose >= siblingProse && s.linkDensity() < 0.2:
			out = append(out, c) // a standfirst or lead paragraph in a box of its own
		}
	}
	return d.twins(d.sections(parent, out), top)
}

// sections adds to the chosen siblings the sections of an article beside
// them that hold little prose of their own: a list of ingredients before
// the method, a table of settings, a box of frequent questions. A sibling
// joins when it lies between two chosen ones, or next to one (or to one
// that joined) and is a titled section, a list or table, or a paragraph of
// prose longer than a byline, each with few links. chosen is in document order.
func (d *detector) sections(parent *html.Node, chosen []*html.Node) []*html.Node {
	var sibs []*html.Node
	for c := parent.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			sibs = append(sibs, c)
		}
	}
	in := make([]bool, len(sibs))
	first, last := -1, -1
	k := 0
	for i, c := range sibs {
		if k < len(chosen) && c == chosen[k] {
			in[i] = true
			k++
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return chosen
	}
	added := false
	for i := first + 1; i < last; i++ {
		if !in[i] && (d.clean(sibs[i], sectionText) || d.section(sibs[i])) {
			in[i], added = true, true
		}
	}
	for i := last + 1; i < len(sibs) && d.section(sibs[i]); i++ {
		in[i], added = true, true
	}
	for i := first - 1; i >= 0 && d.section(sibs[i]); i-- {
		in[i], added = true, true
	}
	if !added {
		return chosen
	}
	out := make([]*html.Node, 0, len(sibs))
	for i, c := range sibs {
		if in[i] {
			out = append(out, c)
		}
	}
	return out
}

// clean reports whether n is measured, not boilerplate, holds at least min
// bytes of text and few links.
func (d *detector) clean(n *html.Node, min int32) bool {
	s := d.get(n)
	return s != nil && !s.skip && s.text >= min && s.linkDensity() < 0.2
}

// section reports whether n, beside the body, reads as a part of it: a
// heading without links, a titled section (its first element a heading), a
// list, a table or sectionProse of prose, with few links.
func (d *detector) section(n *html.Node) bool {
	switch n.DataAtom {
	case atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return d.clean(n, 1) && d.get(n).link == 0
	}
	if !d.clean(n, sectionText) || d.get(n).linkDensity() >= 0.1 {
		return false
	}
	switch n.DataAtom {
	case atom.Ul, atom.Ol, atom.Dl, atom.Table:
		return true
	}
	if d.get(n).prose >= sectionProse {
		return true
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			switch c.DataAtom {
			case atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				return true
			}
			return false
		}
	}
	return false
}

// sectionText is the least text, in bytes, of a section that joins the
// body beside its parts.
const sectionText = 20

// sectionProse is the least prose, in bytes, of an untitled section that
// joins the body beside it: less is a byline, a dateline or a call to
// share.
const sectionProse = 80

// tableOf returns the data table n is part of (n a row group, a row or a
// cell), so that the table is the container and its lead and notes beside
// it can join; n itself when it is not in a table, or is in one that lays
// out the page.
func (d *detector) tableOf(n *html.Node) *html.Node {
	t := n
	for k := 0; k < 4 && t != nil; k++ {
		switch t.DataAtom {
		case atom.Tbody, atom.Thead, atom.Tfoot, atom.Tr, atom.Td, atom.Th:
			t = t.Parent
			continue
		case atom.Table:
			if t != n && !d.layoutTable(t) {
				if s := d.get(t); s != nil && !s.skip {
					return t
				}
			}
		}
		break
	}
	return n
}

// twins adds to the chosen elements the other parts of a body split into
// several containers of one class (a chunk between each advertisement): every
// element with top's tag and class attribute that holds prose of its own and
// is not inside the chosen ones. The result is in document order.
func (d *detector) twins(chosen []*html.Node, top *html.Node) []*html.Node {
	cls := attr(top, "class")
	if cls == "" {
		return chosen
	}
	// The chosen elements are siblings in document order, so their spans of
	// d.nodes are sorted and disjoint; one sweep finds the twins outside them,
	// none inside another.
	ti := d.index[top]
	spans := make([]int32, 0, len(chosen))
	for _, n := range chosen {
		spans = append(spans, d.index[n])
	}
	var extra []int32
	k, until := 0, int32(0)
	for i := int32(0); i < int32(len(d.nodes)); i++ {
		for k < len(spans) && d.nodes[spans[k]].end <= i {
			k++
		}
		if k < len(spans) && spans[k] <= i {
			i = d.nodes[spans[k]].end - 1
			continue
		}
		s := &d.nodes[i]
		if i < until || s.skip || s.n.DataAtom != top.DataAtom || s.paras == 0 || s.linkDensity() > 0.3 {
			continue
		}
		if i < ti && ti < s.end || attr(s.n, "class") != cls {
			continue // an ancestor of top, or another class
		}
		extra = append(extra, i)
		until = s.end
	}
	if len(extra) == 0 {
		return chosen
	}
	all := append(spans, extra...)
	slices.Sort(all)
	out := make([]*html.Node, len(all))
	for i, x := range all {
		out[i] = d.nodes[x].n
	}
	return out
}
