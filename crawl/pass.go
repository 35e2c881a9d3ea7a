package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politefetch/politefetch/extract"
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
		fsrc.Credential = fetch.Credential{Header: src.Read.Credential.Header, Value: v, Hosts: src.Admitted}
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
