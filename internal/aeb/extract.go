package aeb

import (
	"net/url"
	"strings"

	"github.com/politefetch/politefetch/extract"
)

// Extract is extract.HTML's article body for one page, as the benchmark
// labels a body: the text of every block but figure captions, blocks
// separated by blank lines.
func Extract(p *Page) string {
	var u *url.URL
	if p.URL != "" {
		u, _ = url.Parse(p.URL)
	}
	a, err := extract.HTML(p.HTML, u, nil)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, bl := range a.Blocks {
		if bl.Kind == extract.Caption {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(bl.Text)
	}
	return b.String()
}
