package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/extract"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/sharecheck"
)

// PassReport is what one pass of one source did.
type PassReport struct {
	Source string
	Pass   uint64 // the pass number the lease gave; 0 when no lease was had
	Start  time.Time
	End    time.Time

	TriggerRead bool // the trigger was read in this pass
	Trigger     ListReport
	BacklogRead bool // the backlog was walked in this pass
	Backlog     ListReport

	Queued     int // articles queued for reading
	Deferred   int // articles beyond HostQueue, left for the next pass
	Deposited  int // deposited in full
	Excerpted  int // kept as the feed's excerpt
	Excluded   int // gated, or nothing that may be kept
	Mismatched int // identifiers disagreed
	Refused    int // not sent: refused by the chain (robots, cool-down, …)
	Failed     int // read, but not a complete 200, or unreadable, or not stored
	Skipped    int // already read MaxReads times in this pass
	Embargoed  int // announced with an embargo that has not lifted: read on a later pass
	// Stopped reports that MaxFailures consecutive deposit failures
	// stopped the pass.
	Stopped bool
	// Err is why the pass could not run or ended early (a lease held
	// elsewhere, a store error, ctx), or nil.
	Err error

	triggerDue bool // the trigger was due, and is still: nothing of it was sent
	// triggerHold is when the trigger is next due after a read that
	// reached the publisher but whose schedule the State did not take:
	// Run starts no pass of the source before it, though the State still
	// says due.
	triggerHold time.Time
}

// ListReport is what a read of a trigger or a walk of a backlog found.
type ListReport struct {
	Refs        int // references read
	New         int // of them, never seen before
	NotModified int // feeds answered 304
	// Unsent counts the reads that never reached the publisher, for a
	// failure of ours that may pass (a store of the chain's that did not
	// answer, the host's turn not had in time). A trigger none of whose
	// reads reached the publisher stays due.
	Unsent int
	Err    error // the first failure, or nil
}

func (c *Crawler) limits() (ttl time.Duration, reads, failures, hostQ, q, ex int) {
	ttl, reads, failures, hostQ, q, ex = c.LeaseTTL, c.MaxReads, c.MaxFailures, c.HostQueue, c.QueueSize, c.Extractors
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	if reads <= 0 {
		reads = DefaultMaxReads
	}
	if failures <= 0 {
		failures = DefaultMaxFailures
	}
	if hostQ <= 0 {
		hostQ = DefaultHostQueue
	}
	if q <= 0 {
		q = DefaultQueueSize
	}
	if ex <= 0 {
		ex = DefaultExtractors
	}
	return
}

// pass runs one pass of src under its lease.
// passMode says what a pass does beyond what is due.
type passMode struct {
	forceTrigger bool // read the trigger even if it is not due
	triggerOnly  bool // read the trigger only: no backlog, no article
}

func (c *Crawler) pass(ctx context.Context, src Source, mode passMode) (*PassReport, error) {
	ttl, _, _, _, _, _ := c.limits()
	started := c.startTurn(ctx)
	if started == nil {
		return &PassReport{Source: src.ID, Start: c.clk.Now(), Err: ctx.Err()}, ctx.Err()
	}
	defer started()
	rep := &PassReport{Source: src.ID, Start: c.clk.Now()}
	lease, err := c.state.AcquireLease(ctx, src.ID, c.owner, rep.Start, ttl)
	if err != nil {
		rep.Err = err
		return rep, err
	}
	rep.Pass = lease.Pass
	pctx, cancel := context.WithCancel(ctx)
	run := &runningPass{cancel: cancel, done: make(chan struct{})}
	c.mu.Lock()
	c.running[src.ID] = run
	active := c.sources[src.ID].Active
	c.mu.Unlock()
	var renew sync.WaitGroup
	defer func() {
		cancel()
		renew.Wait()
		_ = c.state.ReleaseLease(context.WithoutCancel(ctx), src.ID, c.owner)
		c.mu.Lock()
		delete(c.running, src.ID)
		c.mu.Unlock()
		close(run.done)
	}()
	if !active { // deactivated between the lookup and the lease
		rep.Err = fmt.Errorf("%w: %s", ErrInactive, src.ID)
		return rep, rep.Err
	}
	held := &heldLease{expires: lease.Expires, cancel: cancel}
	renew.Add(1)
	go func() {
		defer renew.Done()
		for {
			select {
			case <-pctx.Done():
				return
			case <-c.clk.After(ttl / 3):
			}
			l, err := c.state.RenewLease(pctx, src.ID, c.owner, c.clk.Now(), ttl)
			if err != nil {
				if pctx.Err() == nil {
					c.emit(Event{Kind: EventLeaseLost, Source: src.ID, Err: err})
				}
				cancel() // never two passes at once: stop before the next request
				return
			}
			held.renewed(l.Expires)
		}
	}()
	c.emit(Event{Kind: EventPassStarted, Source: src.ID, Count: int(lease.Pass)})

	sc, err := c.state.Schedule(pctx, src.ID)
	if err != nil {
		return c.endPass(rep, err)
	}
	now := c.clk.Now()
	// An API backlog first, when due: at start-up it knows nothing and
	// lists every reference with its identifier, which the trigger's then
	// meet; later walks stop at the first page already known. A sitemap
	// names no identifier, so it comes after the trigger, whose references
	// it then meets by address.
	backlogDue := src.Backlog != nil && !sc.NextBacklog.After(now) && !mode.triggerOnly
	sitemap := src.Backlog != nil && src.Backlog.Kind == BacklogSitemap
	// The pass's turn to start goes back once its first request is
	// written: its host's TLS set-up is done by then.
	tctx := httptrace.WithClientTrace(pctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { started() }})
	if backlogDue && !sitemap {
		c.walkBacklog(tctx, &src, rep)
	}
	triggerDue := mode.forceTrigger || !sc.NextTrigger.After(now)
	// When the trigger is the last list the pass reads, its articles go to
	// the readers as each is recorded, so a host's first article is read
	// as soon as its interval allows, however long the State takes to
	// record the rest. A sitemap walked after the trigger completes what
	// is known of its references first.
	var announce func(add func(RefState))
	switch {
	case triggerDue && !mode.triggerOnly && !(backlogDue && sitemap):
		announce = func(add func(RefState)) {
			c.readTrigger(tctx, &src, rep, add)
			started() // nothing was written, or the turn is back already
		}
	case triggerDue:
		c.readTrigger(tctx, &src, rep, nil)
		started()
	default:
		started()
	}
	if backlogDue && sitemap {
		c.walkBacklog(pctx, &src, rep)
	}
	if err := pctx.Err(); err != nil {
		return c.endPass(rep, c.passErr(ctx, src.ID, err))
	}
	if mode.triggerOnly {
		return c.endPass(rep, nil)
	}
	err = c.readArticles(pctx, &src, lease.Pass, held, rep, announce)
	if err == nil {
		err = pctx.Err()
	}
	if err != nil {
		err = c.passErr(ctx, src.ID, err)
	}
	return c.endPass(rep, err)
}

// passErr says why a pass's context ended: the caller's, a deactivation, or
// a lost lease.
func (c *Crawler) passErr(ctx context.Context, id string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, context.Canceled) {
		c.mu.Lock()
		active := c.sources[id].Active
		c.mu.Unlock()
		if !active {
			return fmt.Errorf("%w: %s", ErrInactive, id)
		}
		return fmt.Errorf("%w: source %s", ErrLeaseLost, id)
	}
	return err
}

func (c *Crawler) endPass(rep *PassReport, err error) (*PassReport, error) {
	rep.End = c.clk.Now()
	rep.Err = err
	c.emit(Event{Kind: EventPassEnded, Source: rep.Source, Count: int(rep.Pass), Err: err, Pass: rep})
	return rep, err
}

func (c *Crawler) updateSchedule(ctx context.Context, id string, f func(*Schedule)) error {
	sc, err := c.state.Schedule(ctx, id)
	if err != nil {
		return err
	}
	f(&sc)
	return c.state.SetSchedule(ctx, id, sc)
}

// slowedBy reports whether a trigger read's error is the site asking us
// to slow down or refusing us, or the chain refusing for it.
func slowedBy(err error) bool {
	var re *fetch.RefusedError
	if errors.As(err, &re) {
		return re.Reason == fetch.Cooldown || re.Reason == fetch.Suspended || re.Reason == fetch.Robots
	}
	var se *feed.StatusError
	if errors.As(err, &se) {
		switch se.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests, http.StatusServiceUnavailable:
			return true
		}
	}
	return false
}

// keepsExcerpts reports whether the source keeps anything of its trigger:
// never under the vault policy.
func keepsExcerpts(src *Source) bool { return src.Policy.Preset != Vault }

// readTrigger reads the source's trigger and records what it announces.
// add, when set, is given each reference recorded that is still pending, as
// the State returned it, once it is recorded.
func (c *Crawler) readTrigger(ctx context.Context, src *Source, rep *PassReport, add func(RefState)) {
	rep.TriggerRead = true
	sent := c.clk.Now()
	slowed := false
	// read: some read of the trigger reached the publisher, or was refused
	// by a decision of the chain's. A trigger none of whose reads did stays
	// due: the failure was ours (see ours), and Run tries again after
	// RetryAfterError instead of waiting out the interval.
	read := false
	// Each list's validators are kept only once its references are
	// recorded (see listDoer).
	doer := func(k fetch.Kind) (*reachDoer, *listDoer) {
		l := c.newListDoer(src, k)
		return &reachDoer{next: l}, l
	}
	fail := func(u string, err error, reached bool) {
		if rep.Trigger.Err == nil {
			rep.Trigger.Err = err
		}
		if !reached && ours(err) {
			rep.Trigger.Unsent++
		} else {
			read = true
		}
		slowed = slowed || slowedBy(err)
		c.emit(Event{Kind: EventTriggerFailed, Source: src.ID, Host: hostOf(u), URL: u, Err: err, Reason: reasonOf(err)})
	}
	// A source with a backlog: a trigger naming an article the list named
	// adds its identifier to the same record, where the identifiers are compared.
	var byURL map[string]string
	if src.Backlog != nil {
		refs, err := c.state.Refs(ctx, src.ID)
		if err != nil {
			fail("", err, false)
			rep.triggerDue = true
			return
		}
		byURL = make(map[string]string, len(refs))
		for _, r := range refs {
			byURL[r.URL] = r.Key
		}
	}
	if len(src.Trigger.Feeds) > 0 {
		d, list := doer(fetch.KindFeed)
		r := &feed.Reader{Client: d, RefsOnly: !keepsExcerpts(src), Keep: src.Params}
		for _, u := range src.Trigger.Feeds {
			res, err := r.Read(ctx, u)
			if err != nil {
				c.keep(ctx, src, list, false)
				fail(u, err, d.take())
				continue
			}
			read = true
			if res.NotModified {
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
				if c.see(ctx, src, it.ID, r, &rep.Trigger, byURL, add) != nil {
					recorded = false
				}
			}
			c.keep(ctx, src, list, recorded)
		}
	} else {
		spec := *src.Trigger.API
		spec.MaxPages = 1
		d, list := doer(fetch.KindAPI)
		w := &feed.APIWalker{Client: d, Spec: spec, Keep: src.Params, Clock: c.clk}
		n, failed, recorded := 0, false, true
		for ref, err := range w.Walk(ctx, feed.Stop{}) {
			if err != nil && pastFirstPage(err) {
				break // the first page was read, and its references yielded
			}
			if err != nil {
				fail(spec.URL, err, d.take())
				failed = true
				break
			}
			read = true
			n++
			if c.see(ctx, src, ref.ID, RefState{URL: ref.URL, FeedID: ref.ID, Published: ref.Date()}, &rep.Trigger, byURL, add) != nil {
				recorded = false
			}
		}
		c.keep(ctx, src, list, recorded && !failed)
		if !failed {
			read = true // an empty list is a read too
			c.emit(Event{Kind: EventTriggerRead, Source: src.ID, Host: hostOf(spec.URL), URL: spec.URL, Count: n})
		}
	}
	if !read {
		// Nothing reached the publisher: the trigger stays due, and its
		// last read and the site's slow-down stay as they were.
		rep.triggerDue = true
		return
	}
	if err := c.updateSchedule(context.WithoutCancel(ctx), src.ID, func(sc *Schedule) {
		sc.LastTrigger = sent
		sc.NextTrigger = sent.Add(src.interval())
		sc.Slowed = time.Time{}
		if slowed {
			sc.Slowed = sc.NextTrigger
		}
	}); err != nil {
		// The publisher was asked: this process holds the source until
		// the interval has passed, whatever the State still says.
		rep.triggerHold = sent.Add(src.interval())
		c.emit(Event{Kind: EventStoreError, Source: src.ID, Err: err})
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
			unsent = !reach.take() && ours(err)
			c.emit(Event{Kind: EventBacklogFailed, Source: src.ID, Err: err, Reason: reasonOf(err)})
			break
		}
		reach.take() // what reached the publisher so far was answered
		if c.see(ctx, src, ref.ID, RefState{URL: ref.URL, ListID: ref.ID, Published: ref.Date()}, &rep.Backlog, byURL, nil) != nil {
			recorded = false
		}
	}
	c.keep(ctx, src, list, complete && recorded)
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
		// for that page: it stays due, for the next pass.
		if !unsent {
			sc.NextBacklog = now.Add(interval)
		}
	}); err != nil {
		c.emit(Event{Kind: EventStoreError, Source: src.ID, Err: err})
	}
}

// job is one article on its way through the stages.
type job struct {
	ref      RefState
	host     string
	url      string
	excerpt  bool // no full-text licence: keep the excerpt only
	skipped  bool // MaxReads reached in this pass
	res      *fetch.Result
	err      error
	article  *extract.Article
	xerr     error
	cooldown bool               // the chain refused for the host's cool-down or suspension
	image    *sharecheck.Result // the story's share image, checked (images.go)
}

// readArticles reads every pending article of the source through the
// stages: per-host readers, extractors, one depositor. announce, when set,
// reads the trigger while the stages run, giving each pending reference to
// the readers as it is recorded; the other pending references follow once it
// is done.
func (c *Crawler) readArticles(ctx context.Context, src *Source, pass uint64, held *heldLease, rep *PassReport, announce func(add func(RefState))) error {
	_, maxReads, maxFailures, hostQ, qsize, nex := c.limits()
	fsrc := src.fetchSource()
	if src.Read.Method == ReadCMSAPI {
		v, err := src.Read.Credential.Resolve()
		if err != nil {
			if announce != nil {
				announce(func(RefState) {}) // the trigger is read all the same
			}
			return err
		}
		fsrc.Credential = fetch.Credential{Header: src.Read.Credential.Header, Value: fetch.NewSecret(v), Hosts: src.Admitted}
	}
	srcOpt := fetch.WithSource(fsrc) // one for every read of the pass

	stop, stopPass := context.WithCancel(ctx)
	defer stopPass()
	gate := newFailGate(maxFailures)
	context.AfterFunc(stop, gate.close)
	extractQ := make(chan *job, qsize)
	depositQ := make(chan *job, qsize)
	ps := &passStages{extractQ: extractQ, depositQ: depositQ}
	ps.Stage = Stage{Source: src.ID, Pass: pass}
	c.mu.Lock()
	c.stages[src.ID] = ps
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.stages, src.ID)
		c.mu.Unlock()
	}()

	// Goroutines: the feeder (this pass's trigger, then the State's pending
	// references) queueing jobs; one reader per host (hostReaders), started
	// with the host's first job and alive while its queue lasts; one
	// dispatcher handing what is read to extractions, each a goroutine of
	// its own that ends with it, at most nex at once; the depositor is this
	// goroutine. The feeder and the readers hold live: the last of them to
	// end closes extractQ.
	var live atomic.Int64
	live.Store(1) // the feeder's
	done := func() {
		if live.Add(-1) == 0 {
			close(extractQ)
		}
	}
	hosts := map[string]*hostQueue{} // the feeder's alone
	startReader := func(h string, hq *hostQueue) {
		var left atomic.Int32
		left.Store(hostReaders)
		for range hostReaders {
			live.Add(1)
			go func() {
				defer done()
				defer func() {
					if left.Add(-1) == 0 {
						ps.waiting.Add(-int64(hq.left()))
						ps.hosts.Add(-1)
					}
				}()
				for {
					j := hq.take()
					if j == nil {
						return
					}
					ps.waiting.Add(-1)
					if !gate.enter() {
						hq.stop()
						return
					}
					if !held.valid(c.clk.Now()) {
						// The lease ran out before it could be renewed:
						// another owner may hold it now, so nothing more
						// is sent.
						c.emit(Event{Kind: EventLeaseLost, Source: src.ID, Host: h})
						hq.stop()
						return
					}
					c.read(stop, src, pass, maxReads, srcOpt, j)
					if j.cooldown {
						// The host is cooling down or suspended: its other
						// articles wait for the next pass, and the other
						// hosts go on.
						hq.stop()
					}
					select {
					case extractQ <- j:
					case <-stop.Done():
						hq.stop()
						return
					}
				}
			}()
		}
	}
	queued := map[string]bool{} // keys given a job in this pass
	var embargo time.Time
	add := func(r RefState) {
		if r.Outcome != Pending || queued[r.Key] {
			return
		}
		queued[r.Key] = true
		if src.Embargo && r.Published.After(c.clk.Now()) {
			rep.Embargoed++
			if embargo.IsZero() || r.Published.Before(embargo) {
				embargo = r.Published
			}
			c.emit(Event{Kind: EventEmbargoed, Source: src.ID, URL: r.URL, Key: r.Key, Reason: "embargoed until " + r.Published.UTC().Format(time.RFC3339) + ""})
			return
		}
		j := &job{ref: r, url: articleURL(src, r)}
		if !src.FullText {
			j.excerpt = true // excerpt-only: no read
			select {
			case extractQ <- j:
			case <-stop.Done():
			}
			return
		}
		j.host = hostOf(j.url)
		hq := hosts[j.host]
		if hq != nil && hq.added >= hostQ {
			rep.Deferred++
			return
		}
		rep.Queued++
		if hq == nil {
			hq = newHostQueue()
			hosts[j.host] = hq
			ps.hosts.Add(1)
			ps.waiting.Add(1)
			hq.add(j)
			startReader(j.host, hq)
			return
		}
		ps.waiting.Add(1)
		if !hq.add(j) {
			ps.waiting.Add(-1) // the host stopped: left for the next pass
		}
	}
	var feedErr error
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		defer done()
		defer func() {
			for _, hq := range hosts {
				hq.close()
			}
		}()
		if announce != nil {
			announce(add)
		}
		refs, err := c.state.Refs(ctx, src.ID)
		if err != nil {
			feedErr = err
			return
		}
		for _, r := range refs {
			add(r)
		}
		if src.Embargo {
			if err := c.updateSchedule(context.WithoutCancel(ctx), src.ID, func(sc *Schedule) { sc.Embargo = embargo }); err != nil {
				feedErr = err
			}
		}
	}()
	images := c.imageStage(stop, src, depositQ)
	go func() {
		// A slot is had before a job is taken, so the dispatcher never
		// holds one: what waits for an extractor waits in extractQ.
		slots := make(chan struct{}, nex) // extractions under way
		var extracting sync.WaitGroup
		for {
			slots <- struct{}{}
			j, ok := <-extractQ
			if !ok {
				break
			}
			extracting.Add(1)
			go func() {
				defer extracting.Done()
				defer func() { <-slots }()
				c.extract(src, j)
				images.send(c, src, j)
			}()
		}
		extracting.Wait()
		images.wait()
		close(depositQ)
	}()
	var storeErr error
	for j := range depositQ {
		if !c.isActive(src.ID) {
			// Deactivated or withdrawn while the pass ran: what was read
			// since is not kept.
			continue
		}
		failed, err := c.settle(ctx, src, j, rep)
		if err != nil && storeErr == nil {
			storeErr = err
			stopPass()
		}
		n := -1
		if failed != nil {
			n, err = c.state.Failure(context.WithoutCancel(ctx), src.ID, pass, *failed)
			if err != nil {
				if storeErr == nil {
					storeErr = err
				}
				n = -1
				stopPass()
			} else if n >= maxFailures && !rep.Stopped {
				rep.Stopped = true
				c.emit(Event{Kind: EventPassStopped, Source: src.ID, Count: n})
				stopPass()
			}
		}
		if !j.excerpt {
			gate.leave(n)
		}
	}
	<-fed
	if storeErr == nil {
		storeErr = feedErr
	}
	return storeErr
}

// articleURL is where the source's article is read.
func articleURL(src *Source, r RefState) string {
	switch src.Read.Method {
	case ReadPublicAPI, ReadCMSAPI:
		return strings.ReplaceAll(src.Read.URL, "{id}", url.PathEscape(r.Key))
	}
	return r.URL
}

// read counts one attempt and reads the article once.
func (c *Crawler) read(ctx context.Context, src *Source, pass uint64, maxReads int, fsrc fetch.GetOption, j *job) {
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
	j.res, j.err = c.Client.Get(ctx, j.url, fetch.AsKind(fetch.KindArticle), fsrc, fetch.Unconditional())
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

// serverRefused reports a response that is the publisher refusing us.
func serverRefused(res *fetch.Result) bool {
	if res == nil {
		return false
	}
	switch res.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		return true
	}
	_, ok := backoff.DetectChallenge(res.Status, res.Header, res.Body)
	return ok
}

// settle decides what becomes of one article: it deposits, records, and
// says whether the outcome counts as a deposit failure (nil: neither a
// failure nor a success, as when nothing was sent).
func (c *Crawler) settle(ctx context.Context, src *Source, j *job, rep *PassReport) (failed *bool, err error) {
	yes, no := true, false
	ctx = context.WithoutCancel(ctx)
	now := c.clk.Now()
	ev := Event{Source: src.ID, Host: j.host, URL: j.url, Key: j.ref.Key}
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
			return nil, c.state.Settle(ctx, src.ID, j.ref.Key, Excluded, ev.Reason, now)
		}
		if _, err := c.putExcerpt(ctx, src, j, now); err != nil {
			rep.Failed++
			return &yes, nil
		}
		rep.Excerpted++
		return &no, c.state.Settle(ctx, src.ID, j.ref.Key, Excerpted, "no full-text licence", now)
	case j.err != nil:
		var re *fetch.RefusedError
		if errors.As(j.err, &re) {
			rep.Refused++
			ev.Kind, ev.Reason, ev.Err = EventRefused, re.Reason.String(), j.err
			c.emit(ev)
			if j.ref.Excerpt != nil {
				_, _ = c.putExcerpt(ctx, src, j, now) // the story as the feed tells it
			}
			return nil, nil
		}
		rep.Failed++
		ev.Kind, ev.Err = EventFailed, j.err
		if j.res != nil {
			ev.Status = j.res.Status
		}
		c.emit(ev)
		return &yes, nil
	case !j.res.Complete():
		rep.Failed++
		ev.Kind, ev.Status, ev.Err = EventFailed, j.res.Status, j.res.Depositable()
		if serverRefused(j.res) {
			ev.Reason = "refused by the publisher"
			if j.ref.Excerpt != nil {
				_, _ = c.putExcerpt(ctx, src, j, now)
			}
		}
		c.emit(ev)
		return &yes, nil
	}
	ev.Status = j.res.Status
	if j.article != nil && j.article.Access == extract.Gated {
		rep.Excluded++
		ev.Kind, ev.Reason = EventExcluded, "gated: "+j.article.AccessSource+""
		c.emit(ev)
		return &no, c.state.Settle(ctx, src.ID, j.ref.Key, Excluded, ev.Reason, now)
	}
	if ok, ids := identifiersAgree(src, j.ref, j.article); !ok {
		rep.Mismatched++
		ev.Kind, ev.IDs = EventMismatch, ids
		ev.Reason = fmt.Sprintf("feed %q, list %q, article %q", ids[0], ids[1], ids[2])
		c.emit(ev)
		return &yes, c.state.Settle(ctx, src.ID, j.ref.Key, Mismatch, ev.Reason, now)
	}
	d := &Deposit{
		Source: src.ID, Key: j.ref.Key, URL: j.res.FinalURL, ReadAt: now,
		Envelope: j.res.Body, MediaType: j.res.MediaType, Proof: j.res.Proof, Article: j.article, Image: j.image,
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
	return &no, c.state.Settle(ctx, src.ID, j.ref.Key, Deposited, "", now)
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

// failGate holds a pass's reads back so that a pass never sends a read
// that could only follow its last allowed failure: reads start only
// while the consecutive failures plus the reads not yet settled stay under
// the limit. Safe for concurrent use.
type failGate struct {
	mu      sync.Mutex
	cond    sync.Cond
	max     int
	fails   int
	pending int
	closed  bool
}

func newFailGate(max int) *failGate {
	g := &failGate{max: max}
	g.cond.L = &g.mu
	return g
}

// enter waits for room to start a read; false once the pass has stopped.
func (g *failGate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for !g.closed && g.fails+g.pending >= g.max {
		g.cond.Wait()
	}
	if g.closed {
		return false
	}
	g.pending++
	return true
}

// leave settles one read; fails is the consecutive failures after it, or
// negative when unchanged.
func (g *failGate) leave(fails int) {
	g.mu.Lock()
	g.pending--
	if fails >= 0 {
		g.fails = fails
	}
	g.mu.Unlock()
	g.cond.Broadcast()
}

func (g *failGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.cond.Broadcast()
}

// heldLease is a pass's view of its lease: until when it holds, as the last
// acquire or renewal said. A reader checks it before every request, so a
// lease that ran out (a stalled renewal, a clock moved on) stops the pass
// before another owner's pass could overlap it.
type heldLease struct {
	mu      sync.Mutex
	expires time.Time
	cancel  context.CancelFunc
}

func (h *heldLease) renewed(expires time.Time) {
	h.mu.Lock()
	h.expires = expires
	h.mu.Unlock()
}

// valid reports whether the lease still holds at now; when it does not, it
// ends the pass.
func (h *heldLease) valid(now time.Time) bool {
	h.mu.Lock()
	ok := now.Before(h.expires)
	h.mu.Unlock()
	if !ok {
		h.cancel()
	}
	return ok
}

// Stage is a snapshot of one running pass's stages: how many articles
// wait in its per-host queues and on how many hosts, and how many wait for
// extraction and for the depositor (each queue holds at most QueueSize).
type Stage struct {
	Source  string
	Pass    uint64
	Hosts   int // hosts whose reader is still at work
	Waiting int // articles queued for reading, not yet sent
	Extract int // read, waiting for an extractor
	Deposit int // extracted, waiting for the depositor
}

type passStages struct {
	Stage
	waiting, hosts     atomic.Int64
	extractQ, depositQ chan *job
}

// Stages returns a snapshot of every pass under way, in no particular
// order: a view of the back-pressure between the stages.
func (c *Crawler) Stages() []Stage {
	if c.init() != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Stage, 0, len(c.stages))
	for _, ps := range c.stages {
		st := ps.Stage
		st.Hosts, st.Waiting = int(ps.hosts.Load()), int(ps.waiting.Load())
		st.Extract, st.Deposit = len(ps.extractQ), len(ps.depositQ)
		out = append(out, st)
	}
	return out
}

// runningPass is a pass under way in this process.
type runningPass struct {
	cancel context.CancelFunc
	done   chan struct{} // closed once the pass has ended and released its lease
}

func (c *Crawler) isActive(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sources[id].Active
}

// hostReaders is how many goroutines read one host's queue in a pass: one,
// so that each Get starts its wait at the chain's pacer only once the
// previous answer is in. More would queue Gets at the pacer, where the
// policy's Timeout runs while they wait: with a long Crawl-delay, or a
// host shared with another process, they would time out unsent and count
// as failed reads.
const hostReaders = 1

// hostQueue is one host's articles in a pass, taken in order by its
// readers until it ends or is stopped. Jobs are added while the pass's
// lists are recorded; take waits for one until the queue is closed.
type hostQueue struct {
	mu      sync.Mutex
	cond    sync.Cond
	jobs    []*job
	added   int // jobs ever added (jobs holds those not yet taken)
	closed  bool
	stopped bool
}

func newHostQueue() *hostQueue {
	q := &hostQueue{}
	q.cond.L = &q.mu
	return q
}

// add queues j; false when the queue was stopped, and j left out.
func (q *hostQueue) add(j *job) bool {
	q.mu.Lock()
	q.added++
	if q.stopped {
		q.mu.Unlock()
		return false
	}
	q.jobs = append(q.jobs, j)
	q.mu.Unlock()
	q.cond.Signal()
	return true
}

// close says no job will be added.
func (q *hostQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// take returns the next job, waiting for one while the queue is open; nil
// once it is closed and empty, or stopped.
func (q *hostQueue) take() *job {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.stopped && !q.closed && len(q.jobs) == 0 {
		q.cond.Wait()
	}
	if q.stopped || len(q.jobs) == 0 {
		return nil
	}
	j := q.jobs[0]
	q.jobs[0] = nil
	q.jobs = q.jobs[1:]
	return j
}

func (q *hostQueue) stop() {
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// left is how many articles were never taken.
func (q *hostQueue) left() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.jobs)
}
