package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/politefetch/politefetch/digest"
	"github.com/politefetch/politefetch/digest/digesttest"
)

var update = flag.Bool("update", false, "write the desktop screenshot of the demo digest to docs/digest.png")

// browser returns a headless Chromium's path: $CHROME_BIN, else the first of
// chromium, chromium-browser, google-chrome and chromium-headless-shell's
// headless_shell found on PATH. The test skips without one, saying so.
func browser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROME_BIN"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chromium-headless-shell", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium found (set CHROME_BIN, or install Debian's chromium): the browser test needs one")
	return ""
}

// chrome starts a headless Chromium for the test, with a fresh profile, and
// returns a browser context. The browser reaches only loopback: every other
// host name fails to resolve, so nothing touches the real web.
func chrome(t *testing.T) context.Context {
	t.Helper()
	bin := browser(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	// A browser process that exits before it listens (seen once on a loaded
	// CI machine, with nothing in its output but the usual warnings) is
	// started again, up to three times in all, each failure logged; the
	// test fails if none starts.
	var err error
	for try := 1; try <= 3; try++ {
		actx, acancel := chromedp.NewExecAllocator(ctx, append(opts, chromedp.UserDataDir(t.TempDir()))...)
		bctx, bcancel := chromedp.NewContext(actx)
		if err = chromedp.Do(bctx); err == nil {
			t.Cleanup(acancel)
			t.Cleanup(bcancel)
			return bctx
		}
		bcancel()
		acancel()
		t.Logf("starting %s, try %d of 3: %v", bin, try, err)
		if ctx.Err() != nil {
			break
		}
	}
	t.Fatalf("starting %s: %v", bin, err)
	return nil
}

// demoServer crawls the demo web into a SQLite store, as build -demo
// -store does, and serves the digest read back from that store for the
// preferences o, with ages counted from now.
func demoServer(t *testing.T, o options, now time.Time) (*httptest.Server, *digest.Digest) {
	t.Helper()
	ctx := context.Background()
	var log bytes.Buffer
	o.store, o.demo = filepath.Join(t.TempDir(), "crawl.db"), true
	crawled, err := open(ctx, o, &log)
	if err != nil {
		t.Fatalf("demo crawl: %v\n%s", err, log.String())
	}
	pubs := crawled.pubs
	crawled.Close()
	o.demo = false
	l, err := open(ctx, o, &log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	l.pubs = pubs // the demo's brands and categories, as its configuration would give them
	want, _, err := l.make(ctx, o, now)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler(l, o, func() time.Time { return now }))
	t.Cleanup(srv.Close)
	return srv, want
}

// domCard is what the test reads of each card in the browser.
type domCard struct {
	Section  string `json:"section"`
	Headline string `json:"headline"`
	Summary  string `json:"summary"`
	Href     string `json:"href"`
	More     string `json:"more"`
	Label    string `json:"label"`
	Time     string `json:"time"`
}

const readCards = `Array.from(document.querySelectorAll('section.category article.card')).map(a => ({
	section: a.closest('section').querySelector('h2').textContent.trim(),
	headline: a.querySelector('h3').textContent.trim(),
	summary: a.querySelector('p.summary').textContent.trim(),
	href: (a.querySelector('a.more') || {}).href || '',
	more: (a.querySelector('a.more') || {}).textContent || '',
	label: (a.querySelector('.label') || {}).textContent || '',
	time: a.querySelector('time').getAttribute('datetime'),
}))`

// overflow lists what sticks out of the viewport: the page's own width,
// and each card's box.
const overflow = `(() => {
	const w = document.documentElement.clientWidth, out = [];
	if (document.documentElement.scrollWidth > w) out.push('page ' + document.documentElement.scrollWidth + ' > ' + w);
	document.querySelectorAll('article.card, article.card *').forEach(e => {
		const r = e.getBoundingClientRect();
		if (r.width > 0 && (r.left < -0.5 || r.right > w + 0.5)) out.push(e.tagName + '.' + e.className + ' ' + r.left + '..' + r.right + ' of ' + w);
	});
	return out;
})()`

func TestBrowser_D11_DigestPage(t *testing.T) {
	ctx := chrome(t)
	now := time.Now()
	o := options{cats: "World,Tech,Finance,Sports", max: 4}
	srv, want := demoServer(t, o, now)

	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("main")),
	); err != nil {
		t.Fatal(err)
	}
	headings, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('section.category > h2')).map(h => h.textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	cards, err := chromedp.Run(ctx, chromedp.Evaluate[[]domCard](readCards))
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('script').length`))
	if err != nil {
		t.Fatal(err)
	}
	// One section per preferred category, in the reader's order.
	if strings.Join(headings, ",") != "World,Tech,Finance,Sports" {
		t.Errorf("sections %q, want World,Tech,Finance,Sports", headings)
	}
	if scripts != 0 {
		t.Errorf("%d scripts on the page, want none", scripts)
	}
	// The right cards in the right order: the digest's, newest first in
	// each section, at most four each.
	var wantCards []digest.Card
	for _, s := range want.Sections {
		wantCards = append(wantCards, s.Cards...)
	}
	if len(cards) != len(wantCards) || len(cards) == 0 {
		t.Fatalf("%d cards in the page, want %d", len(cards), len(wantCards))
	}
	perSection := map[string]int{}
	excerpts := 0
	for i, c := range cards {
		w := wantCards[i]
		perSection[c.Section]++
		if c.Section != w.Category || c.Headline != w.Headline {
			t.Errorf("card %d: %s / %q, want %s / %q", i, c.Section, c.Headline, w.Category, w.Headline)
		}
		if i > 0 && cards[i-1].Section == c.Section && cards[i-1].Time < c.Time {
			t.Errorf("card %d (%q) is newer than the one before it", i, c.Headline)
		}
		// "Read full story" links to the canonical URL: the article's own
		// page on its publisher's site.
		if c.Href != w.URL || !strings.HasPrefix(c.Href, "https://") || !strings.Contains(c.Href, ".example/news/") {
			t.Errorf("card %d (%q) links to %q, want its canonical URL %q", i, c.Headline, c.Href, w.URL)
		}
		if !strings.HasPrefix(c.More, "Read full story on "+w.Brand) {
			t.Errorf("card %d: link text %q", i, c.More)
		}
		// At most two sentences, and the excerpt label exactly where due.
		if n := len(digest.Sentences(c.Summary)); n == 0 || n > digest.MaxSentences {
			t.Errorf("card %d (%q): %d sentences in %q", i, c.Headline, n, c.Summary)
		}
		if (c.Label != "") != w.Excerpt || w.Excerpt && c.Label != digest.ExcerptLabel {
			t.Errorf("card %d (%q): label %q, excerpt %v", i, c.Headline, c.Label, w.Excerpt)
		}
		if w.Excerpt {
			excerpts++
		}
	}
	for s, n := range perSection {
		if n > 4 {
			t.Errorf("section %s has %d cards, over the preference's 4", s, n)
		}
	}
	if excerpts == 0 {
		t.Error("no excerpt card: the demo's refused and unlicensed stories should show as excerpts")
	}

	for _, vp := range []struct {
		name  string
		width int64
	}{{"phone", 390}, {"desktop", 1280}} {
		t.Run(vp.name, func(t *testing.T) {
			var opts []chromedp.EmulateViewportOption
			if vp.width < 600 {
				opts = append(opts, chromedp.EmulateMobile, chromedp.EmulatePortrait)
			}
			if err := chromedp.Do(ctx,
				chromedp.EmulateViewport(vp.width, 844, opts...),
				chromedp.Reload(),
				chromedp.WaitVisible(chromedp.CSS("main")),
			); err != nil {
				t.Fatal(err)
			}
			over, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflow))
			if err != nil {
				t.Fatal(err)
			}
			shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			if len(over) > 0 {
				t.Errorf("at %d px, overflowing the viewport: %s", vp.width, strings.Join(over, "; "))
			}
			checkNotBlank(t, shot, int(vp.width))
		})
	}
}

// checkNotBlank decodes a PNG screenshot and checks it is as wide as the
// viewport and that a fair share of it is not the background.
func checkNotBlank(t *testing.T, shot []byte, width int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != width {
		t.Errorf("screenshot %d px wide, want %d", b.Dx(), width)
	}
	bg := img.At(b.Min.X, b.Min.Y)
	differ, total := 0, 0
	colours := map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			c := img.At(x, y)
			total++
			if !sameColour(c, bg) {
				differ++
			}
			if len(colours) < 64 {
				r, g, bl, _ := c.RGBA()
				colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			}
		}
	}
	if share := float64(differ) / float64(total); share < 0.2 || len(colours) < 8 {
		t.Errorf("screenshot looks blank: %.0f%% of it differs from the background, %d colours", 100*share, len(colours))
	}
}

func sameColour(a, b interface{ RGBA() (r, g, b, a uint32) }) bool {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	return ar == br && ag == bg && ab == bb
}

// TestScreenshot writes the desktop screenshot of the digest of the demo's
// store (a demo crawl written to SQLite and read back), as the README shows
// it, with -update:
//
//	go test ./examples/digest -run TestScreenshot -update
func TestScreenshot(t *testing.T) {
	if !*update {
		t.Skip("run with -update to write docs/digest.png")
	}
	ctx := chrome(t)
	srv, _ := demoServer(t, options{max: 3}, time.Now())
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 1500),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("main")),
	); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	checkNotBlank(t, shot, 1280)
	cfg, err := png.DecodeConfig(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "digest.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("wrote %s (%dx%d, %d bytes)\n", path, cfg.Width, cfg.Height, len(shot))
}

// A card shows the publisher's image only where the story carries one (the
// share-image check passed): hotlinked from where the publisher serves it,
// with the page's alt text and the credit, and within the card on a phone.
func TestBrowser_S7_ImageWithCredit(t *testing.T) {
	ctx := chrome(t)
	var pic bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 1200, 630))
	for i := range img.Pix {
		img.Pix[i] = byte(i % 251)
	}
	if err := png.Encode(&pic, img); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var page bytes.Buffer
	mux := http.NewServeMux()
	mux.HandleFunc("/share.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(pic.Bytes())
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(page.Bytes()) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	news, err := digesttest.News()
	if err != nil {
		t.Fatal(err)
	}
	pub := digest.Publisher{Source: "herald", Name: "The Harbour Herald", Category: "World"}
	var stories []digest.Story
	for i, st := range news[:2] {
		s := digest.Story{Publisher: pub, URL: srv.URL + "/news/" + st.ID, Headline: st.Title, Published: now.Add(-time.Duration(i+1) * time.Hour), Article: st.Article()}
		if i == 0 {
			s.Image = &digest.Image{URL: srv.URL + "/share.png", Alt: "A train at the platform", Credit: "Photo: A. Fotograf"}
		}
		stories = append(stories, s)
	}
	d, err := (&digest.Builder{}).Build(context.Background(), now, stories, digest.Preferences{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteHTML(&page, digest.PageOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("figure img")),
	); err != nil {
		t.Fatal(err)
	}
	// The image loads lazily, after the page: wait until it has (or failed).
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('figure img').complete`)); err != nil {
		t.Fatal(err)
	}
	type figure struct {
		Src     string  `json:"src"`
		Alt     string  `json:"alt"`
		Caption string  `json:"caption"`
		Natural float64 `json:"natural"`
		Right   float64 `json:"right"`
		Card    float64 `json:"card"`
	}
	figs, err := chromedp.Run(ctx, chromedp.Evaluate[[]figure](`Array.from(document.querySelectorAll('article.card figure')).map(f => {
		const i = f.querySelector('img');
		return {src: i.src, alt: i.alt, caption: f.querySelector('figcaption').textContent, natural: i.naturalWidth,
			right: i.getBoundingClientRect().right, card: f.closest('article').getBoundingClientRect().right};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 1 {
		t.Fatalf("%d images, want 1 (only the story whose image passed)", len(figs))
	}
	f := figs[0]
	if f.Src != srv.URL+"/share.png" || f.Alt != "A train at the platform" || f.Caption != "Image: Photo: A. Fotograf" {
		t.Errorf("figure = %+v", f)
	}
	if f.Natural != 1200 {
		t.Errorf("the image did not load (natural width %v)", f.Natural)
	}
	if f.Right > f.Card {
		t.Errorf("the image overflows its card: %v > %v", f.Right, f.Card)
	}
	over, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflow))
	if err != nil || len(over) > 0 {
		t.Errorf("overflowing at 390 px: %v %v", over, err)
	}
}
