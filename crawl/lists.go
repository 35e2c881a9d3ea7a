package crawl

import (
	"context"
	"errors"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
)

// slowedBy reports whether a trigger read's error is the site asking us
// to slow down or refusing us (as the source's refusal policy judges its
// answer, see backoff.Policy.SlowsDown), or the chain refusing for it.
func slowedBy(src *Source, err error) bool {
	var re *fetch.RefusedError
	if errors.As(err, &re) {
		return re.Reason == fetch.Cooldown || re.Reason == fetch.Suspended || re.Reason == fetch.Robots
	}
	var se *feed.StatusError
	if errors.As(err, &se) {
		fp, perr := src.Policy.Fetch()
		return perr != nil || fp.Backoff.SlowsDown(backoff.Outcome{Kind: backoff.Feed, Status: se.StatusCode})
	}
	return false
}

// keepsExcerpts reports whether the source keeps anything of its trigger:
// as its policy says (fetch.Policy.KeepExcerpts; never under the vault's).
func keepsExcerpts(src *Source) bool {
	fp, err := src.Policy.Fetch()
	return err == nil && fp.KeepExcerpts
}

// readTrigger reads the source's trigger and records what it announces.
// add, when set, is given each reference recorded that is still pending, as
// the State returned it, once it is recorded.
func (c *Crawler) readTrigger(ctx context.Context, src *Source, rep *PassReport, add func(RefState)) {
	rep.TriggerRead = true
	t := &triggerRead{c: c, src: src, rep: rep, add: add}
	sent := c.clk.Now()
	// A source with a backlog: a trigger naming an article the list named
	// adds its identifier to the same record, where the identifiers are compared.
	if src.Backlog != nil {
		refs, err := c.state.Refs(ctx, src.ID)
		if err != nil {
			t.fail("", err, false)
			rep.triggerDue = true
			return
		}
		t.byURL = make(map[string]string, len(refs))
		for _, r := range refs {
			t.byURL[r.URL] = r.Key
		}
	}
	if len(src.Trigger.Feeds) > 0 {
		t.feeds(ctx)
	} else {
		t.api(ctx)
	}
	c.addTally(ctx, src.ID, t.tally)
	if !t.read {
		// Nothing reached the publisher: the trigger stays due, and its
		// last read and the site's slow-down stay as they were.
		rep.triggerDue = true
		return
	}
	if t.lost && !t.slowed {
		// The publisher answered, but what it announced is not all in the
		// State (a reference the State did not take, an answer the pass
		// stopped reading when its lease or ctx ended): the read counts as
		// the last, and the trigger stays due, so that the next pass, in
		// this process or another, reads it again instead of waiting out
		// the interval with those references unknown. Its validators were
		// not kept (keep), so that read is answered in full. A site that
		// asked us to slow down is not asked again early, lost or not.
		rep.triggerDue = true
		if err := c.updateSchedule(context.WithoutCancel(ctx), src.ID, func(sc *Schedule) {
			sc.LastTrigger = sent
			if sc.NextTrigger.After(sent) {
				sc.NextTrigger = sent
			}
			sc.Slowed = time.Time{}
		}); err != nil {
			c.emit(Event{Kind: EventStoreError, Source: src.ID, Err: err})
		}
		return
	}
	if err := c.updateSchedule(context.WithoutCancel(ctx), src.ID, func(sc *Schedule) {
		sc.LastTrigger = sent
		sc.NextTrigger = sent.Add(src.interval())
		sc.Slowed = time.Time{}
		if t.slowed {
			sc.Slowed = sc.NextTrigger
		}
	}); err != nil {
		// The publisher was asked: this process holds the source until
		// the interval has passed, whatever the State still says.
		rep.triggerHold = sent.Add(src.interval())
		c.emit(Event{Kind: EventStoreError, Source: src.ID, Err: err})
	}
}

// triggerRead is one read of a source's trigger, its feeds or its API list.
type triggerRead struct {
	c     *Crawler
	src   *Source
	rep   *PassReport
	add   func(RefState)
	byURL map[string]string // known references' keys by URL; nil without a backlog
	// read: some read of the trigger reached the publisher, or was refused
	// by a decision of the chain's. A trigger none of whose reads did stays
	// due: the failure was ours (see ours), and Run tries again after
	// RetryAfterError instead of waiting out the interval.
	read   bool
	slowed bool // the site asked us to slow down or refused us
	// lost: an answer of the publisher's is not all recorded in the
	// State: a reference it named that See did not take, or a read that
	// reached the publisher and was cut short by the pass's end.
	lost  bool
	tally Tally // the reads answered
}

// doer returns the Doer a list of kind k is read through. Each list's
// validators are kept only once its references are recorded (see
// listDoer).
func (t *triggerRead) doer(k fetch.Kind) (*reachDoer, *listDoer) {
	l := t.c.newListDoer(t.src, k)
	return &reachDoer{next: l}, l
}

// fail records a read of u that failed with err; reached says whether the
// request reached the publisher.
func (t *triggerRead) fail(u string, err error, reached bool) {
	if t.rep.Trigger.Err == nil {
		t.rep.Trigger.Err = err
	}
	if !reached && ours(err) {
		t.rep.Trigger.Unsent++
	} else {
		t.read = true
	}
	if reached {
		t.tally.TriggerReads++
		if interrupted(err) {
			t.lost = true // the pass ended (its lease lost, ctx) while the publisher answered
		}
	}
	t.slowed = t.slowed || slowedBy(t.src, err)
	t.c.emit(Event{Kind: EventTriggerFailed, Source: t.src.ID, Host: hostOf(u), URL: u, Err: err, Reason: reasonOf(err)})
}

// feeds reads each of the trigger's feeds and records its items.
func (t *triggerRead) feeds(ctx context.Context) {
	c, src, rep := t.c, t.src, t.rep
	d, list := t.doer(fetch.KindFeed)
	r := &feed.Reader{Client: d, RefsOnly: !keepsExcerpts(src), Keep: src.Params}
	for _, u := range src.Trigger.Feeds {
		res, err := r.Read(ctx, u)
		if err != nil {
			c.keep(ctx, src, list, false)
			t.fail(u, err, d.reachedBy(err))
			continue
		}
		t.read = true
		t.tally.TriggerReads++
		if res.NotModified {
			t.tally.NotModified++
			rep.Trigger.NotModified++
			c.emit(Event{Kind: EventNotModified, Source: src.ID, Host: hostOf(u), URL: u})
			continue
		}
		c.emit(Event{Kind: EventTriggerRead, Source: src.ID, Host: hostOf(u), URL: u, Count: len(res.Feed.Items)})
		recorded := true
		for _, it := range res.Feed.Items {
			r := RefState{URL: it.Link, FeedID: it.ID, Published: it.Published}
			if keepsExcerpts(src) {
				ex := it.Excerpt()
				r.Excerpt = &ex
			}
			if c.see(ctx, src, it.ID, r, &rep.Trigger, t.byURL, t.add) != nil {
				recorded, t.lost = false, true
			}
		}
		c.keep(ctx, src, list, recorded)
	}
}

// api reads the first page of the trigger's API list and records its
// references.
func (t *triggerRead) api(ctx context.Context) {
	c, src, rep := t.c, t.src, t.rep
	spec := *src.Trigger.API
	spec.MaxPages = 1
	d, list := t.doer(fetch.KindAPI)
	w := &feed.APIWalker{Client: d, Spec: spec, Keep: src.Params, Clock: c.clk}
	n, failed, recorded := 0, false, true
	for ref, err := range w.Walk(ctx, feed.Stop{}) {
		if err != nil && pastFirstPage(err) {
			break // the first page was read, and its references yielded
		}
		if err != nil {
			t.fail(spec.URL, err, d.reachedBy(err))
			failed = true
			break
		}
		t.read = true
		n++
		if c.see(ctx, src, ref.ID, RefState{URL: ref.URL, FeedID: ref.ID, Published: ref.Date()}, &rep.Trigger, t.byURL, t.add) != nil {
			recorded, t.lost = false, true
		}
	}
	c.keep(ctx, src, list, recorded && !failed)
	if !failed {
		t.tally.TriggerReads++
		t.read = true // an empty list is a read too
		c.emit(Event{Kind: EventTriggerRead, Source: src.ID, Host: hostOf(spec.URL), URL: spec.URL, Count: n})
	}
}

// pastFirstPage reports whether an API trigger's walk ended with err at the
// bound of one page the trigger sets (MaxPages 1): the walker reports
// reaching it as an error wrapping feed.ErrTooMany, after the first page was
// read and its references yielded. The only other such error of the walker's
// is a page with too many items, which is a *feed.ParseError.
func pastFirstPage(err error) bool {
	var pe *feed.ParseError
	return errors.Is(err, feed.ErrTooMany) && !errors.As(err, &pe)
}

// see records one announced reference. byURL, when set, maps the URLs of
// references already known to their keys, so a list naming a known article
// adds its identifier to the same record (where the identifiers are compared).
// It returns the State's error when the reference could not be recorded; a
// reference dropped (its host not admitted, no identifier) is no error. add,
// when set, is given the recorded reference if it is still pending.
func (c *Crawler) see(ctx context.Context, src *Source, id string, r RefState, lr *ListReport, byURL map[string]string, add func(RefState)) error {
	lr.Refs++
	if r.URL == "" || !src.admits(hostOf(r.URL)) {
		c.emit(Event{Kind: EventRefDropped, Source: src.ID, URL: r.URL, Reason: "host not admitted"})
		return nil
	}
	switch {
	case src.Identifier == IDFromURL:
		r.Key = r.URL
	case byURL[r.URL] != "":
		r.Key = byURL[r.URL]
	default:
		r.Key = id
	}
	if r.Key == "" {
		c.emit(Event{Kind: EventRefDropped, Source: src.ID, URL: r.URL, Reason: "no CMS identifier"})
		return nil
	}
	now := c.clk.Now()
	got, created, err := c.state.See(context.WithoutCancel(ctx), src.ID, r, now)
	if err != nil {
		c.emit(Event{Kind: EventStoreError, Source: src.ID, Err: err})
		return err
	}
	if byURL != nil {
		byURL[r.URL] = r.Key
	}
	if created {
		lr.New++
	}
	if add != nil && got.Outcome == Pending {
		add(got)
	}
	return nil
}

// walkBacklog walks the source's backlog list and records what it
// names.
func (c *Crawler) walkBacklog(ctx context.Context, src *Source, rep *PassReport) {
	rep.BacklogRead = true
	b := src.Backlog
	// The list's validators are kept only once the whole walk is recorded
	// (see listDoer): a page answered 304 ends an API walk, and a sitemap
	// index answered 304 skips every sitemap under it.
	var w feed.Walker
	kind := fetch.KindAPI
	if b.Kind == BacklogSitemap {
		kind = fetch.KindSitemap
	}
	list := c.newListDoer(src, kind)
	reach := &reachDoer{next: list} // tells a walk that failed unsent
	switch b.Kind {
	case BacklogSitemap:
		w = &feed.SitemapWalker{Client: reach, URLs: b.URLs, Site: b.Site, Keep: src.Params, Clock: c.clk}
	case BacklogWordPress:
		w = &feed.APIWalker{Client: reach, Spec: feed.WordPress(b.Site, b.PerPage), Keep: src.Params, Clock: c.clk}
	default:
		w = &feed.APIWalker{Client: reach, Spec: *b.API, Keep: src.Params, Clock: c.clk}
	}
	refs, err := c.state.Refs(ctx, src.ID)
	if err != nil {
		rep.Backlog.Err = err
		return
	}
	byURL := make(map[string]string, len(refs))
	for _, r := range refs {
		byURL[r.URL] = r.Key
	}
	known := feed.KnownFunc(func(ref feed.Ref) bool {
		if src.Identifier == IDFromURL || ref.ID == "" {
			return byURL[ref.URL] != ""
		}
		k := byURL[ref.URL]
		return k != "" && k == ref.ID
	})
	complete, recorded, unsent := true, true, false
	for ref, err := range w.Walk(ctx, feed.Stop{Floor: b.Floor, Known: known, Now: c.clk.Now()}) {
		if err != nil {
			rep.Backlog.Err = err
			complete = false
			unsent = !reach.reachedBy(err) && ours(err)
			c.emit(Event{Kind: EventBacklogFailed, Source: src.ID, Err: err, Reason: reasonOf(err)})
			break
		}
		reach.take() // what reached the publisher so far was answered
		if c.see(ctx, src, ref.ID, RefState{URL: ref.URL, ListID: ref.ID, Published: ref.Date()}, &rep.Backlog, byURL, nil) != nil {
			recorded = false
		}
	}
	c.keep(ctx, src, list, complete && recorded)
	rep.backlogDue = unsent || !recorded
	c.emit(Event{Kind: EventBacklogWalked, Source: src.ID, Count: rep.Backlog.Refs})
	now := c.clk.Now()
	interval := c.BacklogInterval
	if interval <= 0 {
		interval = DefaultBacklogInterval
	}
	if err := c.updateSchedule(context.WithoutCancel(ctx), src.ID, func(sc *Schedule) {
		if complete {
			sc.LastBacklog = now
		}
		// A walk that failed is tried again at the next interval too: the
		// next pass's trigger reads keep the source current meanwhile. One
		// whose failing request never left the process (a store of ours
		// down, no turn at the host in time) asked the publisher nothing
		// for that page: it stays due, for the next pass. So does one
		// that named a reference the State did not take: that reference
		// would otherwise stay unknown until the next interval.
		if !unsent && recorded {
			sc.NextBacklog = now.Add(interval)
		}
	}); err != nil {
		c.emit(Event{Kind: EventStoreError, Source: src.ID, Err: err})
	}
}
