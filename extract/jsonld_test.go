package extract

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseInstant(t *testing.T) {
	t.Parallel()
	plus2 := time.FixedZone("", 2*3600)
	for _, c := range []struct {
		in       string
		want     time.Time
		dateOnly bool
	}{
		{"2026-01-02T03:04:05Z", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), false},
		{"2026-01-02t03:04:05z", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), false},
		{"2026-01-02T03:04:05.123+02:00", time.Date(2026, 1, 2, 3, 4, 5, 123e6, plus2), false},
		{"2026-01-02T03:04:05+0200", time.Date(2026, 1, 2, 3, 4, 5, 0, plus2), false},
		{"2026-01-02T03:04+02:00", time.Date(2026, 1, 2, 3, 4, 0, 0, plus2), false},
		{"2026-01-02 03:04:05+02:00", time.Date(2026, 1, 2, 3, 4, 5, 0, plus2), false},
		{"2026-01-02 03:04:05 +0200", time.Date(2026, 1, 2, 3, 4, 5, 0, plus2), false},
		{"20260102T030405Z", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), false},
		{"Fri, 02 Jan 2026 03:04:05 GMT", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), false},
		{"Fri, 02 Jan 2026 03:04:05 +0200", time.Date(2026, 1, 2, 3, 4, 5, 0, plus2), false},
		{"2026-01-02", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), true},
		{"20260102", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), true},
		{"November 19, 2019", time.Date(2019, 11, 19, 0, 0, 0, 0, time.UTC), true},
		{"19 Nov 2019", time.Date(2019, 11, 19, 0, 0, 0, 0, time.UTC), true},
		{"19 Nov 2019 07:09 GMT", time.Date(2019, 11, 19, 7, 9, 0, 0, time.UTC), false},
		{"Tue Nov 19 2019 03:05:46 GMT+0200", time.Date(2019, 11, 19, 3, 5, 46, 0, plus2), false},
		// ISO 8601 basic date with an extended time, and unpadded dates.
		{"20200414T00:38:07Z", time.Date(2020, 4, 14, 0, 38, 7, 0, time.UTC), false},
		{"2022-1-26T10:00:00+01:00", time.Date(2022, 1, 26, 10, 0, 0, 0, time.FixedZone("", 3600)), false},
		{"2022-01-6", time.Date(2022, 1, 6, 0, 0, 0, 0, time.UTC), true},
		// A zone name whose offset is not in doubt.
		{"Tue Jul 30 09:35:14 CEST 2019", time.Date(2019, 7, 30, 9, 35, 14, 0, plus2), false},
		{"Tue Jul 30 09:35:14 PDT 2019", time.Date(2019, 7, 30, 9, 35, 14, 0, time.FixedZone("", -7*3600)), false},
		// Dotted dates are day first.
		{"30.07.2019", time.Date(2019, 7, 30, 0, 0, 0, 0, time.UTC), true},
		{"1.2.2020", time.Date(2020, 2, 1, 0, 0, 0, 0, time.UTC), true},
		{"31.02.2020", time.Time{}, false},
		{"Tue Jul 30 09:35:14 IST 2019", time.Time{}, false},
		// Which of day and month comes first is not stated.
		{"01/02/2026", time.Time{}, false},
		// No zone stated: the text is kept, no instant is made up.
		{"2026-01-02T03:04:05", time.Time{}, false},
		{"2026-01-02 03:04", time.Time{}, false},
		// An abbreviation whose offset the text does not give.
		{"Fri, 02 Jan 2026 03:04:05 EST", time.Time{}, false},
		{"yesterday", time.Time{}, false},
		{"2026-13-45", time.Time{}, false},
		{"", time.Time{}, false},
	} {
		got, dateOnly := parseInstant(c.in)
		if !got.Equal(c.want) || dateOnly != c.dateOnly {
			t.Errorf("parseInstant(%q) = %v, %v; want %v, %v", c.in, got, dateOnly, c.want, c.dateOnly)
		}
		if !got.IsZero() {
			_, off := got.Zone()
			_, woff := c.want.Zone()
			if off != woff {
				t.Errorf("parseInstant(%q): offset %d, want %d (the zone as written)", c.in, off, woff)
			}
		}
	}
}

func TestInstantConflicts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"2026-01-02T07:00:00+01:00", "2026-01-02T06:00:00Z", true},
		{"2026-01-02T23:30:00-05:00", "2026-01-02", true}, // its own date, in its own zone
		{"2026-01-02T23:30:00-05:00", "2026-01-03", false},
		{"2026-01-02T07:00:00+01:00", "2026-01-02T07:00:00Z", false},
		{"2026-01-02T07:00:00", "2026-01-02T07:00:00Z", false}, // a zone-less text agrees only with itself
		{"soon", "soon", true},
	} {
		if got := sameInstant(instantOf(c.a, "a"), instantOf(c.b, "b")); got != c.same {
			t.Errorf("sameInstant(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

// TestInstant_PlaceholderStatesNothing: a CMS's zero date is no date, and
// a less trusted source's real one is read.
func TestInstant_PlaceholderStatesNothing(t *testing.T) {
	t.Parallel()
	page := pageWithScripts(`{"@type":"NewsArticle","datePublished":"0001-01-01T00:00:00Z","dateModified":"0000-00-00 00:00:00"}`)
	page = append(page, `<meta property="article:published_time" content="2026-01-02T10:00:00Z">`...)
	a := metaOf(t, page, goldenPage)
	if a.Published.Value != "2026-01-02T10:00:00Z" || len(a.Published.Conflicts) != 0 || a.Modified.Present() {
		t.Errorf("published %+v, modified %+v", a.Published, a.Modified)
	}
}

func TestIsLangTag(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"en", true}, {"en-GB", true}, {"pt_BR", true}, {"zh-Hant-TW", true}, {"es-419", true}, {"fil", true},
		{"english", false}, {"English (UK)", false}, {"e", false}, {"en-", false}, {"-en", false}, {"en--GB", false},
		{"12", false}, {"", false}, {"en-abcdefghi", false},
	} {
		if got := isLangTag(c.in); got != c.want {
			t.Errorf("isLangTag(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// article is a JSON-LD script of one NewsArticle.
const ldArticle = `{"@context":"https://schema.org","@type":"NewsArticle","headline":"The one to read"}`

func pageWithScripts(scripts ...string) []byte {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head>")
	for _, s := range scripts {
		b.WriteString(`<script type="application/ld+json">`)
		b.WriteString(s)
		b.WriteString("</script>")
	}
	b.WriteString("</head><body><p>x</p></body></html>")
	return []byte(b.String())
}

// TestLD_HostileScriptsAreCapped: a script over a cap (bytes, depth,
// objects) is skipped whole before it is decoded, and the others are
// still read.
func TestLD_HostileScriptsAreCapped(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", maxLDDepth+1) + strings.Repeat("]", maxLDDepth+1)
	deepObj := strings.Repeat(`{"a":`, maxLDDepth+1) + "1" + strings.Repeat("}", maxLDDepth+1)
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"@type":"NewsArticle","headline":"spam"},`, 100_000), ",") + "]"
	huge := `{"@type":"NewsArticle","headline":"huge","description":"` + strings.Repeat("x", maxLDScriptBytes) + `"}`
	// A deep string is not deep: brackets inside strings do not count.
	inString := `{"@type":"Thing","name":"` + strings.Repeat("[{", 1000) + `"}`
	for _, c := range []struct {
		name            string
		scripts         []string
		read, skipped   int
		headline        string
		maxObjectsAfter int
	}{
		{"deep array", []string{deep, ldArticle}, 1, 1, "The one to read", 1},
		{"deep object", []string{deepObj, ldArticle}, 1, 1, "The one to read", 1},
		{"100,000 objects", []string{many, ldArticle}, 1, 1, "The one to read", 1},
		{"huge", []string{huge, ldArticle}, 1, 1, "The one to read", 1},
		{"invalid", []string{`{"@type":"NewsArticle",`, "not json", ldArticle}, 1, 2, "The one to read", 1},
		{"brackets in strings", []string{inString, ldArticle}, 2, 0, "The one to read", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := parseLD(c.scripts)
			if d.stats.read != c.read || d.stats.skipped != c.skipped {
				t.Errorf("read %d, skipped %d; want %d, %d", d.stats.read, d.stats.skipped, c.read, c.skipped)
			}
			if d.stats.objects > c.maxObjectsAfter {
				t.Errorf("%d objects decoded, want at most %d", d.stats.objects, c.maxObjectsAfter)
			}
			if a := metaOf(t, pageWithScripts(c.scripts...), goldenPage); a.Headline.Value != c.headline {
				t.Errorf("headline %q, want %q", a.Headline.Value, c.headline)
			}
		})
	}
}

// TestLD_TotalCaps: the scripts of one page share a cap on bytes and on
// objects, and past maxLDScripts no script is read.
func TestLD_TotalCaps(t *testing.T) {
	t.Parallel()
	big := `{"@type":"Thing","name":"` + strings.Repeat("x", maxLDScriptBytes-100) + `"}`
	var scripts []string
	for range 6 {
		scripts = append(scripts, big)
	}
	d := parseLD(scripts)
	if d.stats.bytes > maxLDTotalBytes || d.stats.read != maxLDTotalBytes/maxLDScriptBytes || d.stats.skipped != 6-d.stats.read {
		t.Errorf("bytes cap: %+v", d.stats)
	}

	objs := "[" + strings.TrimSuffix(strings.Repeat(`{"@type":"Thing"},`, maxLDObjects/4), ",") + "]"
	d = parseLD([]string{objs, objs, objs, objs, objs, ldArticle})
	if d.stats.objects > maxLDObjects || d.stats.read != 4 || d.stats.skipped != 2 {
		t.Errorf("objects cap: %+v", d.stats)
	}

	scripts = scripts[:0]
	for range maxLDScripts + 10 {
		scripts = append(scripts, `{"@type":"Thing"}`)
	}
	d = parseLD(scripts)
	if d.stats.read != maxLDScripts || d.stats.skipped != 10 {
		t.Errorf("scripts cap: %+v", d.stats)
	}
}

// TestLD_HostileCostsNoDecoding: a script of 100,000 objects is refused
// by the scan, before any decoding, so it costs no allocation per object.
func TestLD_HostileCostsNoDecoding(t *testing.T) {
	many := []string{"[" + strings.TrimSuffix(strings.Repeat(`{"@type":"NewsArticle"},`, 100_000), ",") + "]"}
	allocs := testing.AllocsPerRun(5, func() { parseLD(many) })
	if allocs > 10 {
		t.Errorf("%.0f allocations for a refused script, want at most 10", allocs)
	}
}

// TestLD_ReferenceCycle: @id references that name each other end after
// maxLDRefHops.
func TestLD_ReferenceCycle(t *testing.T) {
	t.Parallel()
	ld := `{"@graph":[{"@id":"#a","@type":"Person","knows":{"@id":"#b"}},{"@id":"#b","@type":"Person","knows":{"@id":"#a"}},
	{"@type":"NewsArticle","headline":"Cycles","author":{"@id":"#loop"},"publisher":{"@id":"#loop"}},
	{"@id":"#loop","sameAs":{"@id":"#loop"}}]}`
	a := metaOf(t, pageWithScripts(ld), goldenPage)
	if a.Headline.Value != "Cycles" || len(a.Authors) != 0 || a.Publisher.Present() {
		t.Errorf("got %+v", a)
	}
}

// TestLD_ChoosesThePagesArticle: of several Article nodes, the one whose
// URL is the page's (or its canonical) is read, else one that names no
// page, else none.
func TestLD_ChoosesThePagesArticle(t *testing.T) {
	t.Parallel()
	other := `{"@type":"NewsArticle","headline":"Related","url":"https://news.example/other/"}`
	mine := `{"@type":"NewsArticle","headline":"Mine","mainEntityOfPage":{"@id":"` + goldenPage + `"}}`
	if a := metaOf(t, pageWithScripts(other, mine), goldenPage); a.Headline.Value != "Mine" {
		t.Errorf("headline %q, want Mine", a.Headline.Value)
	}
	if a := metaOf(t, pageWithScripts(other, mine), "https://news.example/elsewhere/"); a.Headline.Present() {
		t.Errorf("headline %q from a page whose articles all name other pages", a.Headline.Value)
	}
	unnamed := `{"@type":"NewsArticle","headline":"Unnamed"}`
	if a := metaOf(t, pageWithScripts(other, unnamed), goldenPage); a.Headline.Value != "Unnamed" {
		t.Errorf("headline %q, want the one that names no other page", a.Headline.Value)
	}
	if a := metaOf(t, pageWithScripts(other), goldenPage); a.Headline.Value != "Related" {
		t.Errorf("headline %q, want the only article, whatever URL it names", a.Headline.Value)
	}
	canon := append(pageWithScripts(other, mine), `<link rel="canonical" href="/other/">`...)
	if a := metaOf(t, canon, "https://news.example/other/?utm_source=x"); a.Headline.Value != "Related" {
		t.Errorf("headline %q, want the one the canonical link names", a.Headline.Value)
	}
	webpage := `{"@type":"WebPage","mainEntity":{"@type":"BlogPosting","headline":"Main entity"}}`
	if a := metaOf(t, pageWithScripts(webpage), goldenPage); a.Headline.Value != "Main entity" {
		t.Errorf("headline %q, want the WebPage's mainEntity", a.Headline.Value)
	}
}

// TestMeta_HostileMarkupIsCapped: a page of 20,000 meta tags, links and
// itemprops keeps at most the caps' worth.
func TestMeta_HostileMarkupIsCapped(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`<html><head>`)
	for i := range 20_000 {
		fmt.Fprintf(&b, `<meta name="author" content="Author %d"><meta property="article:tag" content="tag%d"><link rel="shortlink" href="/?p=%d">`, i, i, i)
	}
	b.WriteString(`</head><body><div itemscope itemtype="https://schema.org/Article">`)
	for i := range 20_000 {
		fmt.Fprintf(&b, `<span itemprop="author">Item %d</span>`, i)
	}
	b.WriteString(`</div></body></html>`)
	a := metaOf(t, []byte(b.String()), goldenPage)
	if len(a.Authors) > maxAuthors || len(a.Keywords) > maxKeywords || len(a.IDs) > maxIDs {
		t.Errorf("%d authors, %d keywords, %d ids: over the caps", len(a.Authors), len(a.Keywords), len(a.IDs))
	}
	if len(a.Authors) == 0 || a.Authors[0].Value != "Author 0" {
		t.Errorf("authors %v", a.Authors)
	}
	if len(a.IDs) != 0 {
		t.Errorf("ids %v from a page with many different shortlinks", a.IDs)
	}
}

func FuzzJSONLD(f *testing.F) {
	pages, _ := filepath.Glob("testdata/meta/*.html")
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, part := range strings.Split(string(b), `<script type="application/ld+json">`)[1:] {
			script, _, _ := strings.Cut(part, "</script>")
			f.Add(script)
		}
	}
	f.Add(ldArticle)
	f.Fuzz(func(t *testing.T, script string) {
		d := parseLD([]string{script, script})
		if d.stats.objects > maxLDObjects || d.stats.bytes > maxLDTotalBytes {
			t.Fatalf("caps exceeded: %+v", d.stats)
		}
		a := metaOf(t, pageWithScripts(script), goldenPage)
		if len(a.Authors) > maxAuthors || len(a.Keywords) > maxKeywords || len(a.IDs) > maxIDs {
			t.Fatalf("lists over their caps: %+v", a)
		}
	})
}
