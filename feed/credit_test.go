package feed

import (
	"net/url"
	"testing"
)

// S7: the credit Media RSS states for the share image travels with it: the
// media:content's own media:credit first, then its group's, then the item's;
// none for an image the feed names without Media RSS.
func TestNormalize_S7_ImageCredit(t *testing.T) {
	t.Parallel()
	const head = `<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>T</title><link>https://news.example/</link>`
	items := `<item><title>own</title><link>https://news.example/1</link><media:credit>Item credit</media:credit>` +
		`<media:content url="https://news.example/1.jpg" medium="image"><media:credit role="photographer">A. Lens</media:credit></media:content></item>` +
		`<item><title>group</title><link>https://news.example/2</link><media:group><media:credit>Agency</media:credit><media:content url="https://news.example/2.jpg" type="image/jpeg"/></media:group></item>` +
		`<item><title>item</title><link>https://news.example/3</link><media:credit>Item credit</media:credit><media:thumbnail url="https://news.example/3.jpg"/></item>` +
		`<item><title>enclosure</title><link>https://news.example/4</link><media:credit>Not the enclosure's</media:credit><enclosure url="https://news.example/4.jpg" type="image/jpeg" length="0"/></item>`
	base, _ := url.Parse("https://news.example/feed.xml")
	f, _, err := normalize([]byte(head+items+`</channel></rss>`), base, parseConfig{links: newLinkCleaner(nil), maxItems: 20})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A. Lens", "Agency", "Item credit", ""}
	if len(f.Items) != len(want) {
		t.Fatalf("%d items", len(f.Items))
	}
	for i, it := range f.Items {
		if it.ImageCredit != want[i] || it.Image == "" { // an enclosure is not Media RSS: the item's media:credit is not its
			t.Errorf("%s: image %q credit %q, want %q", it.Title, it.Image, it.ImageCredit, want[i])
		}
		if ex := it.Excerpt(); ex.ImageCredit != it.ImageCredit {
			t.Errorf("%s: excerpt credit %q", it.Title, ex.ImageCredit)
		}
	}
}
