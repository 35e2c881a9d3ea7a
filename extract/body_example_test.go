package extract_test

import (
	"fmt"
	"net/url"

	"github.com/politefetch/politefetch/extract"
)

func ExampleHTML() {
	page := []byte(`<html><body>
<nav><a href="/">Home</a> <a href="/news">News</a></nav>
<article>
 <h1>Tide tables change</h1>
 <div class="story-body">
  <p>The harbour office published new tide tables on Monday, after a survey found the old ones ran twenty minutes early.</p>
  <h2>What changes</h2>
  <ul><li>High water is later.</li><li>Low water is lower.</li></ul>
  <div class="share"><a href="/share">Share this story</a></div>
 </div>
</article>
<footer>© The Harbour News</footer>
</body></html>`)
	u, _ := url.Parse("https://harbour.example/news/tides")
	a, err := extract.HTML(page, u, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range a.Blocks {
		switch b.Kind {
		case extract.Heading:
			fmt.Printf("h%d %s\n", b.Level, b.Text)
		case extract.List:
			fmt.Printf("list %q\n", b.Items)
		default:
			fmt.Println(b.Text)
		}
	}
	// Output:
	// The harbour office published new tide tables on Monday, after a survey found the old ones ran twenty minutes early.
	// h2 What changes
	// list ["High water is later." "Low water is lower."]
}
