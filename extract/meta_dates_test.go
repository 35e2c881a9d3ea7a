package extract

import (
	"strings"
	"testing"
	"time"
)

// datePage wraps head and body markup in a page with an article to read.
func datePage(head, body string) []byte {
	return []byte("<html><head>" + head + "</head><body>" + body + "<article>" + articleParas + "</article></body></html>")
}

func TestPublished_V5_DatesThePageShows(t *testing.T) {
	for _, c := range []struct {
		name, head, body  string
		published, source string
		modified          string
		dateOnly          bool
	}{{
		name:      "TimeMarkedAsPublicationAndUpdate",
		body:      `<div class="entry-meta"><time class="entry-date published" datetime="2024-03-05T10:00:00+01:00">5 March</time> <time class="updated" datetime="2024-03-07T08:00:00+01:00">7 March</time></div>`,
		published: "2024-03-05T10:00:00+01:00", source: "time[datetime]", modified: "2024-03-07T08:00:00+01:00",
	}, {
		name:      "DottedDateInByline",
		body:      `<div class="byline">Von Anna Muster | 14.04.2020, 09:12 Uhr</div>`,
		published: "14.04.2020", source: "byline", dateOnly: true,
	}, {
		name:      "DottedDateInTimeText",
		body:      `<span class="post-date"><time>30.07.2019</time></span>`,
		published: "30.07.2019", source: "time", dateOnly: true,
	}, {
		name: "UnmarkedTimeIsNotRead",
		body: `<aside><time datetime="2021-01-01">New year</time></aside>`,
	}, {
		name:      "PublicationOverModification",
		head:      `<meta name="date" content="2023-06-02T12:00:00Z"><meta property="article:modified_time" content="2023-06-02T12:00:00Z">`,
		body:      `<p class="byline">Published 28 May 2023</p>`,
		published: "28 May 2023", source: "byline", modified: "2023-06-02T12:00:00Z", dateOnly: true,
	}, {
		name:      "PublishersOwnOffsetOverUTC",
		head:      `<script type="application/ld+json">{"@type":"NewsArticle","datePublished":"2019-07-29T22:35:14Z"}</script><meta property="article:published_time" content="2019-07-30T00:35:14+02:00">`,
		published: "2019-07-30T00:35:14+02:00", source: "meta[property=article:published_time]",
	}, {
		name:      "BylineDayOverUTCInstantNearMidnight",
		head:      `<script type="application/ld+json">{"@type":"NewsArticle","datePublished":"2019-07-29T22:35:14Z"}</script>`,
		body:      `<div class="dateline">30.07.2019</div>`,
		published: "30.07.2019", source: "byline", dateOnly: true,
	}, {
		name:      "UTCInstantKeptWhenTheBylineAgrees",
		head:      `<script type="application/ld+json">{"@type":"NewsArticle","datePublished":"2019-07-29T12:35:14Z"}</script>`,
		body:      `<div class="dateline">29.07.2019</div>`,
		published: "2019-07-29T12:35:14Z", source: "json-ld:NewsArticle.datePublished",
	}} {
		t.Run(c.name, func(t *testing.T) {
			page := datePage(c.head, c.body)
			a, err := HTML(page, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.Published.Value != c.published || a.Published.Source != c.source || a.Published.DateOnly != c.dateOnly {
				t.Errorf("Published = %q from %q (date only %v), want %q from %q (%v)", a.Published.Value, a.Published.Source, a.Published.DateOnly, c.published, c.source, c.dateOnly)
			}
			if c.published != "" && a.Published.Time.IsZero() {
				t.Errorf("Published %q has no Time", a.Published.Value)
			}
			if a.Modified.Value != c.modified {
				t.Errorf("Modified = %q, want %q", a.Modified.Value, c.modified)
			}
			checkStated(t, page, a)
		})
	}
}

// FuzzFindDate: a date found in text is copied from it and reads as a date
// alone; parseInstant never panics.
func FuzzFindDate(f *testing.F) {
	for _, s := range []string{"", "Von Anna | 14.04.2020, 09:12", "Posted on July 30, 2019 by x", "2019-07-30T10:00:00Z", "31.02.2020", "1.1.1", "Tue Jul 30 09:35:14 CEST 2019", "2022-1-2", "2022-1-", "20200414T00:38:07Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parseInstant(s)
		d := findDate(s)
		if d == "" {
			return
		}
		if _, ok := parseInstant(d); !ok {
			t.Fatalf("findDate(%q) = %q, not a date alone", s, d)
		}
		for _, w := range strings.Fields(d) {
			if !strings.Contains(s, w) {
				t.Fatalf("findDate(%q) = %q: %q is not in the text", s, d, w)
			}
		}
	})
}

// FuzzHasMonthName: the month test parseInstant puts before the textual
// layouts is exact: a text it finds no month name in is one that no
// textual layout reads.
func FuzzHasMonthName(f *testing.F) {
	for _, s := range []string{"2 January 2006", "Mon, 02 JAN 2006 15:04:05 GMT", "jan. 2, 2006", "30.07.2019",
		"2019-07-30", "by the staff", "12 Dec 2020 10:00 +0100", "Sept 3, 2021", "3 mAy 2021"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if hasMonthName(s) {
			return
		}
		for _, l := range append(textDates[:], textInstants[:]...) {
			if _, err := time.ParseInLocation(l, s, time.UTC); err == nil {
				t.Fatalf("%q names no month by hasMonthName, yet layout %q reads it", s, l)
			}
		}
	})
}
