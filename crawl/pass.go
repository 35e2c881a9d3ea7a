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
	"golang.org/x/sync/errgroup"
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
	// Stopped reports that MaxFailures consecutive deposit failures (the
	// Deposits store failing its writes) stopped the pass.
	Stopped bool
	// Err is why the pass could not run or ended early (a lease held
	// elsewhere, a store error, ctx), or nil.
	Err error

	// triggerDue: the trigger was due, and is still: nothing of it was
	// sent, or what it announced is not all recorded.
	triggerDue bool
	// backlogDue: the backlog walk left it due (a page not sent, a
	// reference not recorded).
	backlogDue bool
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

// passMode says what a pass does beyond what is due.
type passMode struct {
	forceTrigger bool // read the trigger even if it is not due
	triggerOnly  bool // read the trigger only: no backlog, no article
}

// pass is one pass of one source under its lease. It reads what is due of
// the source's lists (run), then the source's pending articles through four
// stages, each a method, under one errgroup (readArticles):
//
//   - schedule: the feeder, which queues each pending reference, from this
//     pass's trigger as it is read and then from the State, on its host's
//     queue (starting the host's reader), or straight for extraction when
//     only the excerpt may be kept;
//   - fetch: one reader per host (hostReaders), alive while its queue
//     lasts, reading each article once;
//   - extract: up to Extractors extractors turning what was read into
//     articles and handing each to the image stage (images.go); one is
//     started when a job arrives in extractQ and none is idle, and each
//     ends once extractQ is empty;
//   - deposit: one depositor, the pass's own goroutine, settling each
//     article in turn.
//
// Bounded queues join the stages, so a slow stage holds the ones before it
// back. No stage keeps a goroutine waiting for work that has not come: the
// last of the schedule stage and the readers to end closes extractQ and,
// once the extractors and the image checks are through, depositQ (leave).
type pass struct {
	c    *Crawler
	src  *Source
	mode passMode
	rep  *PassReport
	num  uint64 // the lease's pass number
	ttl  time.Duration
	ctx  context.Context // the pass's: ends with it, or when its lease is lost
	held *heldLease

	renewal renewal // the Crawler's renewer's

	maxReads, maxFailures, hostQ, nex int

	// Set by readArticles for the stages.
	get      fetch.GetOptions // the source's, for every article read
	stop     context.CancelFunc
	gate     *failGate
	extractQ chan *job // read (or excerpt-only), waiting for an extractor
	depositQ chan *job // extracted, waiting for the depositor
	stages   *passStages
	images   *imageStage
	live     atomic.Int64 // the schedule stage and the readers at work (leave)

	// The extract stage's.
	exMu sync.Mutex
	exN  int // extractors running
	exWG sync.WaitGroup

	// The schedule stage's alone.
	hosts   map[string]*hostQueue
	queued  map[string]bool // keys given a job in this pass
	embargo time.Time       // the earliest embargo not lifted
}

// pass runs one pass of src under its lease.
func (c *Crawler) pass(ctx context.Context, src Source, mode passMode) (*PassReport, error) {
	ctx = forSource(ctx, src.ID) // robots.txt fetched for its reads counts for it (CountRobots)
	ttl, maxReads, maxFailures, hostQ, _, nex := c.limits()
	started := c.startTurn(ctx)
	if started == nil {
		return &PassReport{Source: src.ID, Start: c.clk.Now(), Err: ctx.Err()}, ctx.Err()
	}
	defer started()
	rep := &PassReport{Source: src.ID, Start: c.clk.Now()}
	lease, err := c.acquire(ctx, src.ID, rep.Start, ttl)
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
	var p *pass
	defer func() {
		cancel()
		if p != nil {
			c.renewals.remove(p)
		}
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
	p = &pass{
		c: c, src: &src, mode: mode, rep: rep, num: lease.Pass, ttl: ttl, ctx: pctx,
		held:     &heldLease{expires: lease.Expires, cancel: cancel},
		maxReads: maxReads, maxFailures: maxFailures, hostQ: hostQ, nex: nex,
	}
	c.renewals.add(c, p)
	c.emit(Event{Kind: EventPassStarted, Source: src.ID, Count: int(lease.Pass)})
	return c.endPass(rep, p.run(ctx, pctx, started))
}

// acquire takes the source's lease. A lease held by an owner of this
// machine whose process is gone (killed, crashed: see ownerGone) is taken
// over at once, by releasing it in that owner's name — a compare-and-set on
// the owner, a no-op if the lease changed hands meanwhile — and acquiring
// it anew; any other held lease is left to expire.
func (c *Crawler) acquire(ctx context.Context, id string, now time.Time, ttl time.Duration) (Lease, error) {
	l, err := c.state.AcquireLease(ctx, id, c.owner, now, ttl)
	var le *LeaseError
	if err == nil || !errors.As(err, &le) || !errors.Is(err, ErrLeaseHeld) || le.Held.Owner == c.owner || !ownerGone(c.self, le.Held.Owner) {
		return l, err
	}
	if err := c.state.ReleaseLease(ctx, id, le.Held.Owner); err != nil {
		return Lease{}, err
	}
	if l, err = c.state.AcquireLease(ctx, id, c.owner, now, ttl); err != nil {
		return l, err
	}
	c.emit(Event{Kind: EventLeaseTakenOver, Source: id, Reason: "its owner's process is gone: " + le.Held.Owner})
	return l, nil
}

// run reads what is due of the source's lists, then its articles. ctx is
// the caller's; pctx the pass's, which ends too when the lease is lost or
// the source deactivated. started gives back the pass's turn to start.
func (p *pass) run(ctx, pctx context.Context, started func()) error {
	c, src := p.c, p.src
	sc, err := c.state.Schedule(pctx, src.ID)
	if err != nil {
		return err
	}
	announce := p.readLists(pctx, sc, started)
	if err := pctx.Err(); err != nil {
		return c.passErr(ctx, src.ID, err)
	}
	if p.mode.triggerOnly {
		return nil
	}
	err = p.readArticles(pctx, announce)
	if err == nil {
		err = pctx.Err()
	}
	if err != nil {
		err = c.passErr(ctx, src.ID, err)
	}
	return err
}

// readLists walks the backlog and reads the trigger, as far as each is due.
// When the trigger is the last list the pass reads, it is not read here: the
// returned announce reads it while the article stages run, giving each
// pending reference to add as it is recorded. Otherwise announce is nil.
func (p *pass) readLists(pctx context.Context, sc Schedule, started func()) (announce func(add func(RefState))) {
	c, src, rep, mode := p.c, p.src, p.rep, p.mode
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
		c.walkBacklog(tctx, src, rep)
	}
	triggerDue := mode.forceTrigger || !sc.NextTrigger.After(now)
	// When the trigger is the last list the pass reads, its articles go to
	// the readers as each is recorded, so a host's first article is read
	// as soon as its interval allows, however long the State takes to
	// record the rest. A sitemap walked after the trigger completes what
	// is known of its references first.
	switch {
	case triggerDue && !mode.triggerOnly && !(backlogDue && sitemap):
		announce = func(add func(RefState)) {
			c.readTrigger(tctx, src, rep, add)
			started() // nothing was written, or the turn is back already
		}
	case triggerDue:
		c.readTrigger(tctx, src, rep, nil)
		started()
	default:
		started()
	}
	if backlogDue && sitemap {
		c.walkBacklog(pctx, src, rep)
	}
	return announce
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

// readArticles reads every pending article of the source through the four
// stages (see pass). announce, when set, reads the trigger while the stages
// run, giving each pending reference to the readers as it is recorded; the
// other pending references follow once it is done. It returns the first
// error of the State's that ended the pass early, else the schedule stage's.
func (p *pass) readArticles(ctx context.Context, announce func(add func(RefState))) error {
	c, src := p.c, p.src
	_, _, _, _, qsize, _ := c.limits()
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
	p.get = fetch.GetOptions{Source: &fsrc} // one for every read of the pass

	stop, stopPass := context.WithCancel(ctx)
	defer stopPass()
	p.stop = stopPass
	p.gate = newFailGate(p.maxFailures)
	context.AfterFunc(stop, p.gate.close)
	p.extractQ, p.depositQ = make(chan *job, qsize), make(chan *job, qsize)
	p.stages = &passStages{extractQ: p.extractQ, depositQ: p.depositQ}
	p.stages.Stage = Stage{Source: src.ID, Pass: p.num}
	p.hosts, p.queued = map[string]*hostQueue{}, map[string]bool{}
	p.images = c.imageStage(stop, src, p.depositQ)
	c.mu.Lock()
	c.stages[src.ID] = p.stages
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.stages, src.ID)
		c.mu.Unlock()
	}()

	// The stages before the depositor end by themselves once their input
	// does; a stop (the State failing, MaxFailures reached, ctx) ends the
	// readers at their next article, and the depositor drains what is
	// under way. The depositor is this goroutine.
	g, gctx := errgroup.WithContext(stop)
	p.live.Store(1) // the schedule stage
	g.Go(func() error { return p.schedule(ctx, gctx, announce) })
	err := p.deposit(ctx)
	if gerr := g.Wait(); err == nil {
		err = gerr
	}
	return err
}

// schedule is the schedule stage: it queues the references announce gives
// (the trigger's, as they are recorded) and then every pending one the State
// holds, and closes the hosts' queues, whose readers end once they have
// read them. ctx is the pass's, for the State; stop ends when the pass
// stops. It returns the State's error if it could not list the pending
// references or record the embargo; what was queued is read all the same.
func (p *pass) schedule(ctx, stop context.Context, announce func(add func(RefState))) error {
	defer p.leave()
	defer func() {
		for _, hq := range p.hosts {
			hq.close()
		}
	}()
	add := func(r RefState) { p.add(stop, r) }
	if announce != nil {
		announce(add)
	}
	c, src := p.c, p.src
	refs, err := c.state.Pending(ctx, src.ID)
	if err != nil {
		return err
	}
	for _, r := range refs {
		add(r)
	}
	if src.Embargo {
		return c.updateSchedule(context.WithoutCancel(ctx), src.ID, func(sc *Schedule) { sc.Embargo = p.embargo })
	}
	return nil
}

// add queues one pending reference, once per pass: on its host's queue,
// starting the host's reader with its first, or for extraction when only
// its excerpt may be kept. An embargoed reference waits for a later pass,
// and one past HostQueue for the next.
func (p *pass) add(stop context.Context, r RefState) {
	c, src, rep := p.c, p.src, p.rep
	if r.Outcome != Pending || p.queued[r.Key] {
		return
	}
	p.queued[r.Key] = true
	if src.Embargo && r.Published.After(c.clk.Now()) {
		rep.Embargoed++
		if p.embargo.IsZero() || r.Published.Before(p.embargo) {
			p.embargo = r.Published
		}
		c.emit(Event{Kind: EventEmbargoed, Source: src.ID, URL: r.URL, Key: r.Key, Reason: "embargoed until " + r.Published.UTC().Format(time.RFC3339) + ""})
		return
	}
	j := &job{ref: r, url: articleURL(src, r)}
	if !src.FullText {
		j.excerpt = true // excerpt-only: no read
		p.toExtract(stop, j)
		return
	}
	j.host = hostOf(j.url)
	hq := p.hosts[j.host]
	if hq != nil && hq.added >= p.hostQ {
		rep.Deferred++
		return
	}
	rep.Queued++
	ps := p.stages
	if hq == nil {
		hq = newHostQueue(hostReaders)
		p.hosts[j.host] = hq
		ps.hosts.Add(1)
		ps.waiting.Add(1)
		hq.add(j)
		for range hostReaders {
			p.live.Add(1)
			go func() {
				defer p.leave()
				p.fetch(stop, j.host, hq)
			}()
		}
		return
	}
	ps.waiting.Add(1)
	if !hq.add(j) {
		ps.waiting.Add(-1) // the host stopped: left for the next pass
	}
}

// fetch is one reader of the fetch stage: it reads host h's articles in
// turn, while the failure gate lets it and the lease holds, and hands each
// to the extract stage. A host cooling down or suspended stops its queue:
// its other articles wait for the next pass, and the other hosts go on.
func (p *pass) fetch(stop context.Context, h string, hq *hostQueue) {
	c, ps := p.c, p.stages
	defer func() {
		if hq.leave() {
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
		if !p.gate.enter() {
			hq.stop()
			return
		}
		if !p.held.valid(c.clk.Now()) {
			// The lease ran out before it could be renewed: another owner
			// may hold it now, so nothing more is sent.
			c.emit(Event{Kind: EventLeaseLost, Source: p.src.ID, Host: h})
			hq.stop()
			return
		}
		c.read(stop, p.src, p.num, p.maxReads, p.get, j)
		if j.cooldown {
			hq.stop()
		}
		if !p.toExtract(stop, j) {
			hq.stop()
			return
		}
	}
}

// toExtract queues j for the extract stage, starting an extractor when
// fewer than Extractors run; false if the pass stopped first.
func (p *pass) toExtract(stop context.Context, j *job) bool {
	select {
	case p.extractQ <- j:
	case <-stop.Done():
		return false
	}
	p.exMu.Lock()
	if p.exN < p.nex && len(p.extractQ) > 0 {
		p.exN++
		p.exWG.Add(1)
		go p.extractor()
	}
	p.exMu.Unlock()
	return true
}

// extractor is one of the extract stage's: it extracts the jobs in
// extractQ in turn, handing each to the image stage, which sends it on to
// the depositor, and ends once extractQ is empty. A job is taken only by an
// extractor free to work on it, so what waits for one waits in extractQ;
// and a pass waiting for its next read keeps no extractor's stack, which
// parsing a page grows. A job queued after an extractor found the queue
// empty finds its count lowered, so toExtract starts another.
func (p *pass) extractor() {
	defer p.exWG.Done()
	for {
		var j *job
		p.exMu.Lock()
		select {
		case j = <-p.extractQ: // nil once closed and drained
		default:
		}
		if j == nil {
			p.exN--
			p.exMu.Unlock()
			return
		}
		p.exMu.Unlock()
		p.c.extract(p.src, j)
		p.images.send(p.c, p.src, j)
	}
}

// leave is called as the schedule stage and each reader end. The last to
// end, when nothing more can be queued for extraction, closes extractQ,
// waits for the extractors and the image checks, and closes depositQ,
// which ends the depositor once it has settled the rest.
func (p *pass) leave() {
	if p.live.Add(-1) > 0 {
		return
	}
	close(p.extractQ)
	p.exWG.Wait()
	p.images.wait()
	close(p.depositQ)
}

// deposit is the deposit stage: it settles each job in turn until depositQ
// is closed, counts the deposit failures, and stops the pass once
// MaxFailures of them are consecutive, or when the State fails, whose first
// error it returns. A source deactivated or withdrawn while the pass ran
// keeps nothing read since.
func (p *pass) deposit(ctx context.Context) error {
	c, src, rep := p.c, p.src, p.rep
	var storeErr error
	// zero: the source's consecutive failures are known to be none in this
	// pass. Only the pass holding the source's lease changes the count, so
	// a success then changes nothing and the State is not asked (Attempt
	// still finds a lease lost, once per article).
	zero := false
	for j := range p.depositQ {
		if !c.isActive(src.ID) {
			// Deactivated or withdrawn while the pass ran: what was read
			// since is not kept.
			continue
		}
		failed, err := c.settle(ctx, src, j, rep)
		c.addTally(ctx, src.ID, readTally(j))
		if err != nil && storeErr == nil {
			storeErr = err
			p.stop()
		}
		n := -1
		switch {
		case failed == nil:
		case !*failed && zero:
			n = 0
		default:
			n, err = c.state.Failure(context.WithoutCancel(ctx), src.ID, p.num, *failed)
			zero = err == nil && n == 0
			if err != nil {
				if storeErr == nil {
					storeErr = err
				}
				n = -1
				p.stop()
			} else if n >= p.maxFailures && !rep.Stopped {
				rep.Stopped = true
				c.emit(Event{Kind: EventPassStopped, Source: src.ID, Count: n})
				p.stop()
			}
		}
		if !j.excerpt {
			p.gate.leave(n)
		}
	}
	return storeErr
}
