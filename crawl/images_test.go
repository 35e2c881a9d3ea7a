package crawl

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/sharecheck"
)

// imageAudit is the auditor's policy for a crawl that checks share images:
// an image's read also sends its article page as the Referer.
func imageAudit(p fetch.Policy) politetest.Policy {
	ap := auditPolicy(p)
	ap.AllowedHeaders = append(ap.AllowedHeaders, "Referer")
	return ap
}

// imageReads returns the web's requests for share images, by path.
func imageReads(web *politetest.Web) map[string][]politetest.Request {
	out := map[string][]politetest.Request{}
	for _, r := range web.Requests() {
		if strings.HasPrefix(r.Path, "/images/") {
			out[r.Host+r.Path] = append(out[r.Host+r.Path], r)
		}
	}
	return out
}

// A strict news crawl checks each story's share image once per image URL
// through the chain, with the article page as the Referer, and records the
// answer with the story (S7): a real JPEG named by two articles is usable,
// read once, with its dimensions and the URL to link to; politetest's fake
// JPEG (HTML served as image/jpeg) is not, for its bytes; an excerpt (a
// source without a full-text licence) gets the feed's image checked. The
// auditor finds no violation.
func TestCrawler_S7_ShareImagesCheckedOnce(t *testing.T) {
	web := politetest.NewWeb(t)
	news := web.Site("images.example")
	real1 := news.AddArticle(politetest.Article{ID: 1, Image: "/images/1.jpg", ImageCredit: "Photo: A. Lens"})
	fake := news.AddArticle(politetest.Article{ID: 2, Image: "/images/fake-2.jpg"})
	real3 := news.AddArticle(politetest.Article{ID: 3, Image: "/images/1.jpg"}) // the same image as article 1
	brief := web.Site("brief.example")
	brief.AddArticle(politetest.Article{ID: 7, Image: "/images/7.png"})

	p := testPolicy(t, StrictNews, testInterval)
	client := newClient(t, web, p)
	excerpts := siteSource("brief.example", StrictNews, false)
	excerpts.FullText = false
	c := &Crawler{
		Client:  client,
		Images:  &sharecheck.Checker{Client: client},
		Sources: []Source{siteSource("images.example", StrictNews, false), excerpts},
	}
	if _, err := c.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A second pass of the same stories asks for no image again.
	if _, err := c.Pass(context.Background(), "images.example"); err != nil {
		t.Fatal(err)
	}

	deps, err := c.Deposited().List(context.Background(), "images.example", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]*Deposit{}
	for _, d := range deps {
		byKey[d.Key] = d
	}
	for _, a := range []politetest.Article{real1, real3} {
		d := byKey[strconv.Itoa(a.ID)]
		if d == nil {
			t.Fatalf("article %d not deposited (deposits: %v)", a.ID, imageKeys(byKey))
		}
		img := d.Image
		switch {
		case img == nil:
			t.Fatalf("article %d: no image check recorded", a.ID)
		case !img.Usable() || img.Reason != 0:
			t.Errorf("article %d: image not usable: %+v", a.ID, img)
		case img.MediaType != "image/jpeg" || img.Width != 16 || img.Height != 9:
			t.Errorf("article %d: image %s %d×%d, want image/jpeg 16×9", a.ID, img.MediaType, img.Width, img.Height)
		case img.FinalURL != news.URL("/images/1.jpg"):
			t.Errorf("article %d: final URL %q, want %q", a.ID, img.FinalURL, news.URL("/images/1.jpg"))
		case img.Err != nil:
			t.Errorf("article %d: deposit keeps the check's Err: %v", a.ID, img.Err)
		case img.Credit != real1.ImageCredit && a.ID == real1.ID, img.Credit != "" && a.ID != real1.ID:
			t.Errorf("article %d: credit %q; the page states %q", a.ID, img.Credit, a.ImageCredit)
		}
	}
	if d := byKey[strconv.Itoa(fake.ID)]; d == nil || d.Image == nil {
		t.Fatalf("article 2: no deposit or no image check: %+v", d)
	} else if d.Image.Usable() || d.Image.Reason != sharecheck.NotImage {
		t.Errorf("article 2's fake JPEG: usable %v, reason %v; want not usable, %v", d.Image.Usable(), d.Image.Reason, sharecheck.NotImage)
	}

	exs, err := c.Deposited().List(context.Background(), "brief.example", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 1 || exs[0].Excerpt == nil {
		t.Fatalf("brief.example: %d deposits, want one excerpt", len(exs))
	}
	if img := exs[0].Image; img == nil || !img.Usable() || img.MediaType != "image/png" {
		t.Errorf("excerpt's feed image: %+v, want a usable PNG", img)
	}

	reads := imageReads(web)
	want := map[string]string{ // image → the article page its Referer names
		"images.example/images/1.jpg":      "", // article 1's or 3's page
		"images.example/images/fake-2.jpg": news.URL(fake.Path),
		"brief.example/images/7.png":       "", // the excerpt's link
	}
	if len(reads) != len(want) {
		t.Errorf("images read: %v, want %d", imageKeys(reads), len(want))
	}
	for img, ref := range want {
		rs := reads[img]
		if len(rs) != 1 {
			t.Errorf("%s read %d times, want once", img, len(rs))
			continue
		}
		got := rs[0].Header.Get("Referer")
		if ref != "" && got != ref {
			t.Errorf("%s: Referer %q, want %q", img, got, ref)
		}
		if got == "" {
			t.Errorf("%s: no Referer", img)
		}
	}
	if rs := reads["images.example/images/1.jpg"]; len(rs) == 1 {
		if got := rs[0].Header.Get("Referer"); got != news.URL(real1.Path) && got != news.URL(real3.Path) {
			t.Errorf("images/1.jpg: Referer %q, want article 1's or 3's page", got)
		}
	}
	if rep := web.Audit(imageAudit(p)); !rep.OK() {
		t.Fatalf("auditor: %v", rep)
	}
}

// Under the vault policy (V5: no images) and the digest policy (D9: no
// sub-resource of a page) no share image is read, even with an Images
// checker, and no deposit carries a check.
func TestCrawler_V5_VaultReadsNoImage(t *testing.T)  { testNoImages(t, Vault) }
func TestCrawler_D9_DigestReadsNoImage(t *testing.T) { testNoImages(t, Digest) }

func testNoImages(t *testing.T, preset Preset) {
	web := politetest.NewWeb(t)
	site := web.Site("noimages.example")
	for i := 1; i <= 3; i++ {
		site.AddArticle(politetest.Article{ID: i})
	}
	p := testPolicy(t, preset, testInterval)
	client := newClient(t, web, p)
	c := &Crawler{
		Client:  client,
		Images:  &sharecheck.Checker{Client: client},
		Sources: []Source{siteSource("noimages.example", preset, false)},
	}
	rep := mustPass(t, c, "noimages.example")
	if rep.Deposited != 3 {
		t.Fatalf("%d deposited, want 3 (%+v)", rep.Deposited, rep)
	}
	deps, err := c.Deposited().List(context.Background(), "noimages.example", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps {
		if d.Image != nil {
			t.Errorf("%s: deposit carries an image check: %+v", d.Key, d.Image)
		}
	}
	if reads := imageReads(web); len(reads) != 0 {
		t.Errorf("images read under %s: %v", preset, imageKeys(reads))
	}
	audit(t, web, p)
}

func imageKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A slow image host holds up only the stories that name its images: while
// one site's share image takes a second and a half to answer, the other
// site's stories are read, checked and deposited, and the slow one is
// deposited with its image usable once it answers (S7).
func TestCrawler_S7_SlowImageHostStallsNothing(t *testing.T) {
	web := politetest.NewWeb(t)
	slow := web.Site("slow-images.example")
	slow.AddArticle(politetest.Article{ID: 11, Image: "/images/1.jpg"}) // an ID of its own: one source over both sites
	slow.Misbehave("/images/1.jpg", politetest.Behaviour{Kind: politetest.SlowFirstByte, Delay: 1500 * time.Millisecond})
	quick := web.Site("quick.example")
	for i := 1; i <= 3; i++ {
		quick.AddArticle(politetest.Article{ID: i})
	}
	p := testPolicy(t, StrictNews, testInterval)
	client := newClient(t, web, p)
	var ev events
	// One source over both sites, and one extractor: a check made in the
	// extractor would hold quick.example's stories behind the slow image.
	src := siteSource("slow-images.example", StrictNews, false)
	src.ID = "both"
	src.Trigger.Feeds = append(src.Trigger.Feeds, "https://quick.example/feed.xml")
	src.Admitted = append(src.Admitted, "quick.example")
	c := &Crawler{
		Client:     client,
		Images:     &sharecheck.Checker{Client: client},
		Sources:    []Source{src},
		Extractors: 1,
		OnEvent:    ev.on,
	}
	mustPass(t, c, "both")
	var order []string
	for _, e := range ev.of(EventDeposited) {
		order = append(order, e.Host)
	}
	if len(order) != 4 || order[3] != "slow-images.example" {
		t.Errorf("deposits in order of hosts %v, want quick.example's three before slow-images.example's", order)
	}
	deps, err := c.Deposited().List(context.Background(), "both", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps {
		if d.Image == nil || !d.Image.Usable() {
			t.Errorf("%s: image %+v, want usable", d.URL, d.Image)
		}
	}
	if rep := web.Audit(imageAudit(p)); !rep.OK() {
		t.Fatalf("auditor: %v", rep)
	}
}
