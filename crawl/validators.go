package crawl

import (
	"context"
	"net/http"
	"sync"

	"github.com/politefetch/politefetch/fetch"
)

// listDoer is the Doer a trigger or backlog list is read through: the
// source's Doer with GetOptions.DeferValidators, so that the chain keeps no
// list's validators when its 200 arrives, and a note of the validators of
// each 200 it returned. The crawler keeps them (keep) only once every
// reference of those responses is recorded in State: kept earlier, a
// process stopped in between would, after its restart, be answered 304 for
// a list whose references it never recorded, and would not learn them
// until the list changed. Articles need none of this: they are read
// unconditionally.
//
// The note is bounded by the walk it serves: one entry per file or page
// read (feed.DefaultMaxSitemapFiles, feed.DefaultMaxPages at most), two
// header values each.
type listDoer struct {
	next fetch.Doer

	mu  sync.Mutex
	got []answered
}

// answered is a 200's URL (after redirects, as the chain requested it) and
// its validators.
type answered struct {
	url string
	h   http.Header
}

// newListDoer returns the source's Doer for kind k, deferring validators.
func (c *Crawler) newListDoer(src *Source, k fetch.Kind) *listDoer {
	return &listDoer{next: c.Client.Doer(k, src.fetchOption(), fetch.GetOptions{DeferValidators: true})}
}

func (d *listDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.next.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if etag == "" && lm == "" {
		return resp, nil
	}
	u := req.URL
	if resp.Request != nil && resp.Request.URL != nil {
		u = resp.Request.URL
	}
	h := make(http.Header, 2)
	if etag != "" {
		h.Set("ETag", etag)
	}
	if lm != "" {
		h.Set("Last-Modified", lm)
	}
	d.mu.Lock()
	d.got = append(d.got, answered{url: u.String(), h: h})
	d.mu.Unlock()
	return resp, nil
}

// keep hands the validators noted since the last keep to the chain when
// recorded is true (every reference of those responses is in State), and
// forgets them either way: a list whose references were not all recorded
// is read in full next time. A store's failure is reported as an
// EventStoreError; it costs the next read its 304, nothing else.
func (c *Crawler) keep(ctx context.Context, src *Source, d *listDoer, recorded bool) {
	d.mu.Lock()
	got := d.got
	d.got = nil
	d.mu.Unlock()
	if !recorded {
		return
	}
	ctx = context.WithoutCancel(ctx)
	for _, a := range got {
		if err := c.Client.SaveValidators(ctx, a.url, a.h, src.fetchOption()); err != nil {
			c.emit(Event{Kind: EventStoreError, Source: src.ID, Host: hostOf(a.url), URL: a.url, Err: err})
		}
	}
}
