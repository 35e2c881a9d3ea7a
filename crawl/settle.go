package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/extract"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
)

// articleURL is where the source's article is read.
func articleURL(src *Source, r RefState) string {
	switch src.Read.Method {
	case ReadPublicAPI, ReadCMSAPI:
		return strings.ReplaceAll(src.Read.URL, "{id}", url.PathEscape(r.Key))
	}
	return r.URL
}

// read counts one attempt and reads the article once.
func (c *Crawler) read(ctx context.Context, src *Source, pass uint64, maxReads int, fsrc fetch.GetOptions, j *job) {
	n, err := c.state.Attempt(ctx, src.ID, pass, j.ref.Key)
	if err != nil {
		j.err = err
		return
	}
	if n > maxReads {
		j.skipped = true
		return
	}
	// Unconditional: an article is read only while it is not deposited, so
	// a 304 would stand for nothing kept (a deposit that failed, or a
	// process stopped before it deposited), and the article would never be.
	j.res, j.err = c.Client.Get(ctx, j.url, fsrc, fetch.GetOptions{Unconditional: true})
	var re *fetch.RefusedError
	if errors.As(j.err, &re) && (re.Reason == fetch.Cooldown || re.Reason == fetch.Suspended) {
		j.cooldown = true
	}
}

// extract fills j.article from a complete read.
func (c *Crawler) extract(src *Source, j *job) {
	if j.res == nil || j.err != nil || !j.res.Complete() {
		return
	}
	switch {
	case c.Extract != nil:
		j.article, j.xerr = c.Extract(src, j.res)
	case src.Read.Method == "" || src.Read.Method == ReadPage:
		u, err := url.Parse(j.res.FinalURL)
		if err != nil || j.res.FinalURL == "" {
			u, _ = url.Parse(j.url)
		}
		j.article, j.xerr = extract.HTML(j.res.Body, u, &extract.Options{ContentType: j.res.Header.Get("Content-Type")})
	default:
		j.article, j.xerr = extract.WordPress(j.res.Body)
	}
}

// interrupted reports whether a read's error is its context's end (the
// caller's cancellation, a lost lease, a deactivation), not a failure.
func interrupted(err error) bool { return errors.Is(err, context.Canceled) }

// readTally is what one article's job adds to its source's tally beside
// what the State counts itself (the read's Attempt, the outcome): a refusal,
// a failure of the read, a share image checked.
func readTally(j *job) Tally {
	var t Tally
	var re *fetch.RefusedError
	switch {
	case j.skipped || j.excerpt:
	case j.err != nil && errors.As(j.err, &re):
		t.Refusals++
	case j.err != nil && !interrupted(j.err):
		t.Failures++
	case j.err == nil && j.res != nil && !j.res.Complete():
		t.Failures++
	}
	if j.image != nil {
		t.ImageReads++
	}
	return t
}

// serverRefused reports a response that is the publisher refusing us, as
// the source's refusal policy (the ledger's) judges it.
func serverRefused(src *Source, res *fetch.Result) bool {
	if res == nil {
		return false
	}
	fp, err := src.Policy.Fetch()
	if err != nil {
		return false
	}
	return fp.Backoff.Classify(backoff.NewOutcome(backoff.Article, res.Status, res.Header, res.Body)) == backoff.Refusal
}

// settle decides what becomes of one article: it deposits, records, and
// says whether the article's deposit failed. Only our own failures to
// deposit count (document 003, V12): failed is true when a write to the
// Deposits store failed, false when one was made, and nil when nothing was
// written, as for an answer of the publisher's that is not a complete 200,
// which the per-article reads and the refusal ledger handle. err is the
// State's, when it could not record the outcome.
func (c *Crawler) settle(ctx context.Context, src *Source, j *job, rep *PassReport) (failed *bool, err error) {
	ctx = context.WithoutCancel(ctx)
	now := c.clk.Now()
	ev := Event{Source: src.ID, Host: j.host, URL: j.url, Key: j.ref.Key}
	if j.skipped || j.excerpt || j.err != nil || !j.res.Complete() {
		return c.settleUnread(ctx, src, j, rep, ev, now)
	}
	return c.settleRead(ctx, src, j, rep, ev, now)
}

// settleUnread settles an article with no complete read: skipped, kept as
// its excerpt only, refused, or failed.
func (c *Crawler) settleUnread(ctx context.Context, src *Source, j *job, rep *PassReport, ev Event, now time.Time) (failed *bool, err error) {
	yes, no := true, false
	// The story as the feed tells it, where the publisher or the chain
	// refused the article: a failure to keep it is ours.
	excerptInstead := func() *bool {
		if j.ref.Excerpt == nil {
			return nil
		}
		if _, err := c.putExcerpt(ctx, src, j, now); err != nil {
			return &yes
		}
		return &no
	}
	switch {
	case j.skipped:
		rep.Skipped++
		ev.Kind, ev.Reason = EventSkipped, fmt.Sprintf("read %d times in this pass", c.maxReads())
		c.emit(ev)
		return nil, nil
	case j.excerpt:
		if j.ref.Excerpt == nil {
			rep.Excluded++
			ev.Kind, ev.Reason = EventExcluded, "no full-text licence and no excerpt kept"
			c.emit(ev)
			return nil, c.settleRef(ctx, src.ID, j.ref.Key, Excluded, ev.Reason, now)
		}
		if _, err := c.putExcerpt(ctx, src, j, now); err != nil {
			rep.Failed++
			return &yes, nil
		}
		rep.Excerpted++
		return &no, c.settleRef(ctx, src.ID, j.ref.Key, Excerpted, "no full-text licence", now)
	case j.err != nil:
		var re *fetch.RefusedError
		if errors.As(j.err, &re) {
			rep.Refused++
			ev.Kind, ev.Reason, ev.Err = EventRefused, re.Reason.String(), j.err
			c.emit(ev)
			return excerptInstead(), nil
		}
		if interrupted(j.err) {
			return nil, nil // cut short by the pass's end: read on a later pass
		}
		rep.Failed++
		ev.Kind, ev.Err = EventFailed, j.err
		if j.res != nil {
			ev.Status = j.res.Status
		}
		c.emit(ev)
		return nil, nil // not ours to count: nothing was there to deposit
	default: // a read, but not a complete one
		rep.Failed++
		ev.Kind, ev.Status, ev.Err = EventFailed, j.res.Status, j.res.Depositable()
		if serverRefused(src, j.res) {
			ev.Reason = "refused by the publisher"
			kept := excerptInstead()
			c.emit(ev)
			return kept, nil
		}
		c.emit(ev)
		return nil, nil // the publisher's answer, not a failure of ours
	}
}

// settleRead settles an article read in full: excluded when gated, a
// mismatch when its identifiers disagree, else deposited.
func (c *Crawler) settleRead(ctx context.Context, src *Source, j *job, rep *PassReport, ev Event, now time.Time) (failed *bool, err error) {
	yes, no := true, false
	ev.Status = j.res.Status
	if j.article != nil && j.article.Access == extract.Gated {
		rep.Excluded++
		ev.Kind, ev.Reason = EventExcluded, "gated: "+j.article.AccessSource+""
		c.emit(ev)
		return nil, c.settleRef(ctx, src.ID, j.ref.Key, Excluded, ev.Reason, now)
	}
	if ok, ids := identifiersAgree(src, j.ref, j.article); !ok {
		rep.Mismatched++
		ev.Kind, ev.IDs = EventMismatch, ids
		ev.Reason = fmt.Sprintf("feed %q, list %q, article %q", ids[0], ids[1], ids[2])
		c.emit(ev)
		return nil, c.settleRef(ctx, src.ID, j.ref.Key, Mismatch, ev.Reason, now)
	}
	d := &Deposit{
		Source: src.ID, Key: j.ref.Key, URL: j.res.FinalURL, ReadAt: now,
		Envelope: j.res.Body, MediaType: j.res.MediaType, Proof: j.res.Proof, Sent: j.res.Sent.Clone(), Article: j.article, Image: j.image,
	}
	if d.URL == "" {
		d.URL = j.url
	}
	if j.res.Proof != nil {
		d.ReadAt = j.res.Proof.ReadAt
		d.Digest = j.res.Proof.Digest
	}
	if d.Digest == "" {
		d.Digest = d.Sum()
	}
	if _, err := c.deps.Put(ctx, d); err != nil {
		rep.Failed++
		ev.Kind, ev.Err = EventFailed, err
		c.emit(ev)
		return &yes, nil
	}
	rep.Deposited++
	ev.Kind, ev.Bytes, ev.Err = EventDeposited, int64(len(d.Envelope)), j.xerr // the envelope is kept even when nothing could be extracted
	c.emit(ev)
	return &no, c.settleRef(ctx, src.ID, j.ref.Key, Deposited, "", now)
}

// settleTries is how many times settleRef asks the State to record an outcome.
const settleTries = 3

// settleRef records the outcome of source's reference key, asking the State
// again at once, settleTries times in all, while it fails for a reason
// other than ctx's end. An outcome is recorded once the article's work is
// done (a deposit made, say), so a Settle lost to one time-out of a shared
// store would have the next pass read the article again: a request to the
// publisher for nothing. Settle sets a value, so asking again after an
// answer that was lost records the same outcome. It returns the last
// attempt's error.
func (c *Crawler) settleRef(ctx context.Context, source, key string, o Outcome, note string, now time.Time) error {
	var err error
	for range settleTries {
		if err = c.state.Settle(ctx, source, key, o, note, now); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}

func (c *Crawler) maxReads() int {
	_, r, _, _, _, _ := c.limits()
	return r
}

func (c *Crawler) putExcerpt(ctx context.Context, src *Source, j *job, now time.Time) (bool, error) {
	d := &Deposit{Source: src.ID, Key: j.ref.Key, URL: j.ref.Excerpt.Link, ReadAt: now, Excerpt: j.ref.Excerpt, Image: j.image}
	if d.URL == "" {
		d.URL = j.ref.URL
	}
	d.Digest = d.Sum()
	added, err := c.deps.Put(ctx, d)
	if err != nil {
		c.emit(Event{Kind: EventFailed, Source: src.ID, URL: d.URL, Key: d.Key, Err: err})
		return false, err
	}
	if added {
		c.emit(Event{Kind: EventExcerpted, Source: src.ID, Host: j.host, URL: d.URL, Key: d.Key})
	}
	return added, nil
}

// identifiersAgree compares the identifiers the trigger, the backlog list
// and the article gave: every one that was given must be the same
// string. The article's is the one of its identifiers equal to the key,
// else its first; an article naming none, or a source identified by URL,
// has nothing to compare.
func identifiersAgree(src *Source, r RefState, a *extract.Article) (bool, [3]string) {
	ids := [3]string{r.FeedID, r.ListID, ""}
	if src.Identifier == IDFromURL {
		return true, ids
	}
	if a != nil && len(a.IDs) > 0 {
		ids[2] = a.IDs[0].Value
		for _, id := range a.IDs {
			if id.Value == r.Key {
				ids[2] = id.Value
				break
			}
		}
	}
	want := ""
	for _, v := range ids {
		if v == "" {
			continue
		}
		if want == "" {
			want = v
		} else if v != want {
			return false, ids
		}
	}
	return true, ids
}

// reasonOf names a failure's cause briefly, for events and counts.
func reasonOf(err error) string {
	var re *fetch.RefusedError
	var se *feed.StatusError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &re):
		return re.Reason.String()
	case errors.As(err, &se):
		return fmt.Sprint(se.StatusCode)
	}
	return "error"
}
