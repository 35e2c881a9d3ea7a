package extract

import "testing"

// S7: a share image's credit is read from what the publisher states for
// that image, and only for the image chosen.
func TestImageCredit_S7_StatedForTheImage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, page, want, source string
	}{
		{"creditText", `{"@type":"NewsArticle","headline":"H","image":{"@type":"ImageObject","url":"https://news.example/a.jpg","creditText":"Photo: A. Lens / Agency","creator":{"@type":"Person","name":"A. Lens"}}}`,
			"Photo: A. Lens / Agency", "json-ld:NewsArticle.image.creditText"},
		{"creator", `{"@type":"NewsArticle","headline":"H","image":{"@type":"ImageObject","url":"https://news.example/a.jpg","creator":{"@type":"Person","name":"A. Lens"}}}`,
			"A. Lens", "json-ld:NewsArticle.image.creator.name"},
		{"copyrightHolder", `{"@type":"NewsArticle","headline":"H","image":[{"@type":"ImageObject","contentUrl":"/a.jpg","copyrightHolder":{"@type":"Organization","name":"Agency"}}]}`,
			"Agency", "json-ld:NewsArticle.image.copyrightHolder.name"},
		{"a URL is no credit", `{"@type":"NewsArticle","headline":"H","image":{"@type":"ImageObject","url":"https://news.example/a.jpg","creator":"https://news.example/staff/lens"}}`,
			"", ""},
		{"none stated", `{"@type":"NewsArticle","headline":"H","image":"https://news.example/a.jpg"}`, "", ""},
	} {
		a := metaOf(t, pageWithScripts(tc.page), goldenPage)
		if a.Image.Value != "https://news.example/a.jpg" {
			t.Errorf("%s: image %q", tc.name, a.Image.Value)
		}
		if a.ImageCredit.Value != tc.want || (tc.source != "" && a.ImageCredit.Source != tc.source) {
			t.Errorf("%s: credit %+v, want %q from %s", tc.name, a.ImageCredit, tc.want, tc.source)
		}
	}
	// JSON-LD is trusted first and names another image than the
	// microdata, whose credit is not that image's.
	other := []byte(`<!DOCTYPE html><html><head><script type="application/ld+json">{"@type":"NewsArticle","headline":"H","image":"https://news.example/a.jpg"}</script></head>
<body><article itemscope itemtype="https://schema.org/NewsArticle"><figure itemprop="image" itemscope itemtype="https://schema.org/ImageObject"><img itemprop="contentUrl" src="/b.jpg"><span itemprop="creditText">B's credit</span></figure><p>x</p></article></body></html>`)
	if a := metaOf(t, other, goldenPage); a.Image.Value != "https://news.example/a.jpg" || a.ImageCredit.Present() {
		t.Errorf("image %q with credit %+v, want a.jpg and no credit (it was stated for b.jpg)", a.Image.Value, a.ImageCredit)
	}
	micro := []byte(`<!DOCTYPE html><html><body><article itemscope itemtype="https://schema.org/NewsArticle"><h1 itemprop="headline">H</h1>
<figure itemprop="image" itemscope itemtype="https://schema.org/ImageObject"><img itemprop="contentUrl" src="/a.jpg"><figcaption>Rain. <span itemprop="creditText">Photo: C. Shutter</span></figcaption></figure><p>x</p></article></body></html>`)
	if a := metaOf(t, micro, goldenPage); a.ImageCredit.Value != "Photo: C. Shutter" {
		t.Errorf("microdata credit %+v (image %q)", a.ImageCredit, a.Image.Value)
	}
}

// S7: WordPress keeps the image file's IPTC credit, else its copyright.
func TestImageCredit_S7_WordPress(t *testing.T) {
	t.Parallel()
	post := func(meta string) []byte {
		return []byte(`{"id":1,"title":{"rendered":"H"},"content":{"rendered":"<p>x</p>"},"_embedded":{"wp:featuredmedia":[{"id":9,"source_url":"https://news.example/a.jpg","media_details":{"image_meta":` + meta + `}}]}}`)
	}
	for meta, want := range map[string]string{
		`{"credit":"Agency","copyright":"(c) A. Lens"}`: "Agency",
		`{"credit":"","copyright":"(c) A. Lens"}`:       "(c) A. Lens",
		`{"credit":"","copyright":""}`:                  "",
	} {
		a, err := WordPress(post(meta))
		if err != nil {
			t.Fatal(err)
		}
		if a.ImageCredit.Value != want {
			t.Errorf("%s: credit %+v, want %q", meta, a.ImageCredit, want)
		}
	}
}
