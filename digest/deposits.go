package digest

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/extract"
)

// PublisherOf returns how the source appears on cards: its brand (else its
// name) and its category. A crawl.Source names no logo; set Logo from the
// digest's own configuration.
func PublisherOf(s crawl.Source) Publisher {
	return Publisher{Source: s.ID, Name: cmp.Or(s.Brand, s.Name), Category: s.Category}
}

// Stories reads the deposits of each publisher's source read at or after
// since, as stories: an article read in full with its page's headline,
// date and canonical address, or the feed's excerpt of a story whose
// article was not read. A deposit with neither an article nor an
// excerpt, or a gated article, is left out.
//
// A story's URL is the canonical address its page states when that is an
// https or http address on the host the article was read from, and the
// address it was read at otherwise, so a page cannot send readers to
// another site. Its date is the page's publication instant, else the
// feed's, else when it was read. Its Image is the publisher's share image
// only where the deposit records that the image passed its check
// (crawl.Deposit.Image usable), linked at the check's final URL with the
// credit the page or feed stated; nil otherwise.
func Stories(ctx context.Context, deps crawl.Deposits, pubs []Publisher, since time.Time) ([]Story, error) {
	var out []Story
	for _, p := range pubs {
		ds, err := deps.List(ctx, p.Source, since)
		if err != nil {
			return nil, fmt.Errorf("digest: deposits of %s: %w", p.Source, err)
		}
		for _, d := range ds {
			if s, ok := storyOf(p, d); ok {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

func storyOf(p Publisher, d *crawl.Deposit) (Story, bool) {
	switch {
	case d.Article != nil && d.Envelope != nil:
		a := d.Article
		if a.Access == extract.Gated {
			return Story{}, false
		}
		s := Story{
			Publisher:   p,
			URL:         canonical(d.URL, a.Canonical.Value),
			Headline:    a.Headline.Value,
			Published:   d.ReadAt,
			Article:     a,
			Description: a.Description.Value,
			Image:       imageOf(d),
		}
		if !a.Published.Time.IsZero() && !a.Published.DateOnly {
			s.Published = a.Published.Time
		}
		return s, s.Headline != ""
	case d.Excerpt != nil:
		e := d.Excerpt
		s := Story{
			Publisher:   p,
			URL:         cmp.Or(e.Link, d.URL),
			Headline:    e.Headline,
			Published:   cmp.Or(e.Published, d.ReadAt),
			Excerpt:     true,
			Description: e.Description,
			Image:       imageOf(d),
		}
		return s, s.Headline != "" && s.URL != ""
	}
	return Story{}, false
}

// imageOf returns the deposit's share image when its check passed: the
// final URL to link to, with the stated credit.
func imageOf(d *crawl.Deposit) *Image {
	r := d.Image
	if r == nil || !r.Usable() || r.FinalURL == "" {
		return nil
	}
	return &Image{URL: r.FinalURL, Credit: r.Credit}
}

// canonical returns the page's canonical address when it is on the host
// read, else the address read.
func canonical(read, stated string) string {
	if stated == "" {
		return read
	}
	r, err1 := url.Parse(read)
	c, err2 := url.Parse(stated)
	if err1 != nil || err2 != nil || (c.Scheme != "https" && c.Scheme != "http") ||
		!strings.EqualFold(strings.TrimPrefix(c.Hostname(), "www."), strings.TrimPrefix(r.Hostname(), "www.")) {
		return read
	}
	return c.String()
}
