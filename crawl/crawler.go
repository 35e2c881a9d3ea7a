package crawl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/politefetch/politefetch/extract"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/sharecheck"
)

// Clock is the time a Crawler reads and waits on: Now and After. Nil
// fields of type Clock mean real time.
type Clock = clock.Clock

// Defaults of a Crawler's zero fields.
const (
	DefaultBacklogInterval = 24 * time.Hour
	DefaultRefreshGuard    = 5 * time.Minute
	DefaultLeaseTTL        = 30 * time.Second
	DefaultMaxReads        = 3  // reads of one article per pass
	DefaultMaxFailures     = 10 // consecutive failures of ours to deposit that stop a pass
	DefaultHostQueue       = 1000
	DefaultQueueSize       = 64
	DefaultExtractors      = 2
	DefaultStarting        = 512
	// RetryAfterError is how long Run waits before a source's next pass
	// when its last one could not run (a State that did not answer), or
	// sent nothing of a trigger that was due (the chain's own stores did
	// not answer, the host's turn was not had in time).
	RetryAfterError = time.Minute
	// StartHold is the longest a starting pass holds its turn (see
	// Crawler.Starting): a host slow to accept a connection holds up the
	// others' starts no longer than this.
	StartHold = time.Second
)

// Errors of a Crawler.
var (
	ErrNoClient        = errors.New("crawl: crawler has no fetch client")
	ErrUnknownSource   = errors.New("crawl: unknown source")
	ErrInactive        = errors.New("crawl: source is inactive")
	ErrRefreshDeclined = errors.New("crawl: refresh declined")
)

// RefreshError says why a Refresh was declined and when the source's
// trigger is next read. It matches ErrRefreshDeclined.
type RefreshError struct {
	Source string
	Reason string    // "read within the guard", "the site asked us to slow down or refused us"
	Next   time.Time // the next scheduled read
}

func (e *RefreshError) Error() string {
	return fmt.Sprintf("crawl: refresh of %s declined: %s; next read at %s", e.Source, e.Reason, e.Next.Format(time.RFC3339))
}

// Is matches ErrRefreshDeclined.
func (e *RefreshError) Is(target error) bool { return target == ErrRefreshDeclined }

// Crawler runs sources: it reads each active source's trigger at its
// interval, walks its backlog at start-up and then every BacklogInterval,
// and reads each announced article through Client, depositing what may be
// kept. Set Client and Sources; the zero value of every other field works.
// A Crawler without a Client refuses every call with ErrNoClient, one with
// a limit beyond its bound (a RefreshGuard under MinRefreshGuard, say) with
// a *LimitError naming the field, and one with an invalid source with that
// source's *SourceError.
//
// Run crawls until its context ends; Pass, RunOnce, Refresh and ReadTrigger
// do one thing at once, for tools and tests. Stages, SourceCounts and
// HostCounts show what is under way and what was done.
//
// Politeness is the Client's: its pacer is the only thing that spaces
// requests, its robots gate and ledger the only things that refuse them.
// The Crawler decides what to read and when, never how fast.
//
// Work on one source happens in a pass ([Crawler.Pass]), under the source's
// lease in State, so no two passes of one source run at once, even in
// several processes sharing State. Within a pass, articles are queued
// per host (at most HostQueue each; the rest wait for the next pass), each
// host read by its own goroutine, so a slow, cooling or suspended host
// never holds up the others; what is read flows through bounded queues to
// the extractors and then to one depositor, so a slow extractor or store
// holds the readers back instead of growing memory.
//
// A Crawler is safe for concurrent use. Do not change its fields after the
// first call; sources change through Deactivate and Withdraw. It owns no
// goroutine outside its method calls.
type Crawler struct {
	// Client reads everything. Required; the Crawler does not close it.
	Client *fetch.Client
	// Sources are the sources to crawl. Each must validate; the first
	// method call refuses the crawler otherwise.
	Sources []Source
	// State keeps schedules, leases, references and counters. Nil: a
	// MemoryState owned by the Crawler.
	State State
	// Deposits receives what is kept. Nil: a MemoryDeposits owned by the
	// Crawler (see Crawler.Deposited).
	Deposits Deposits
	// Clock gives the time. Nil: real time.
	Clock Clock
	// Owner names this crawler in pass leases. "": this process's
	// identity (its host name, process id and start time, the machine's
	// boot id and the pid namespace, where the system tells them; and a
	// random id), which lets a crawler restarted on the same machine take
	// over at once the leases of one whose process is gone (killed,
	// crashed) instead of waiting for them to expire. A lease of any other
	// owner, or of one on another machine, is had once it expires.
	Owner string

	// BacklogInterval is the time between backlog walks. 0:
	// DefaultBacklogInterval; at least MinBacklogInterval.
	BacklogInterval time.Duration
	// RefreshGuard is how long after a trigger read a Refresh or a
	// ReadTrigger is declined. 0: DefaultRefreshGuard; at least
	// MinRefreshGuard.
	RefreshGuard time.Duration
	// LeaseTTL is a pass lease's lifetime, renewed every third of it while
	// the pass runs: a worker that dies holds its sources at most this
	// long (see Owner for a restart on the same machine). 0:
	// DefaultLeaseTTL; at least MinLeaseTTL.
	LeaseTTL time.Duration
	// MaxReads bounds the reads of one article in one pass. 0:
	// DefaultMaxReads, which is also its most.
	MaxReads int
	// MaxFailures is how many consecutive deposit failures stop a pass:
	// our own failures to deposit (Deposits failing or refusing a write),
	// never the publisher's answers, which fail their article only. 0:
	// DefaultMaxFailures, which is also its most.
	MaxFailures int
	// HostQueue bounds the articles of one host queued in one pass. 0:
	// DefaultHostQueue; a negative one is refused.
	HostQueue int
	// QueueSize bounds each queue between stages. 0: DefaultQueueSize; a
	// negative one is refused.
	QueueSize int
	// Extractors bounds the articles of one pass extracted at once: the
	// pass runs that many extractors, which end with it. 0:
	// DefaultExtractors; a negative one is refused.
	Extractors int
	// Starting bounds the passes starting at once. A pass holds one of
	// these turns from its start until its first request is written (its
	// host's TLS set-up done; at most StartHold), so that sources started
	// together (RunOnce, Run's start-up) start in turn, each host's first
	// request going out promptly, instead of thousands of TLS handshakes
	// sharing the CPU at once, each then taking as long as all of them and
	// the slowest past the policy's timeout. 0: DefaultStarting; a negative
	// one is refused.
	Starting int

	// Extract turns a complete read into an article. Nil: extract.HTML for
	// pages, extract.WordPress for API documents (the WordPress REST post
	// shape). An extraction error leaves the deposit's Article nil; the
	// envelope and its proof are still deposited.
	Extract func(src *Source, res *fetch.Result) (*extract.Article, error)
	// Images checks each story's share image (S7) for sources under the
	// strict news policy, recording the answer in the Deposit's Image. Its
	// Client should be the Crawler's, so the same identity, pacing,
	// robots.txt and ledger apply. Nil: no image is checked, and no
	// deposit carries one. Under the digest policy (which loads no
	// sub-resource of a page) and the vault policy (which keeps no image)
	// no image is ever read, whatever Images is.
	Images *sharecheck.Checker

	// OnEvent, when set, is called for every event, from the goroutine
	// that caused it: it must be quick and safe for concurrent use.
	OnEvent func(Event)
	// Logger receives a line per event of note. Nil: silent.
	Logger *slog.Logger

	once    sync.Once
	initErr error
	clk     Clock
	state   State
	deps    Deposits
	owner   string
	self    ownerID // this process, for telling a gone owner's lease

	mu      sync.Mutex
	sources map[string]*Source
	order   []string
	running map[string]*runningPass
	stages  map[string]*passStages
	counts  counts

	starting chan struct{} // the turns of passes starting (Starting)
	renewals renewer       // the running passes' leases
}

func (c *Crawler) init() error {
	c.once.Do(func() {
		if c.Client == nil {
			c.initErr = ErrNoClient
			return
		}
		if c.initErr = c.CheckLimits(); c.initErr != nil {
			return
		}
		c.clk = clock.Or(c.Clock)
		c.state = c.State
		if c.state == nil {
			c.state = new(MemoryState)
		}
		c.deps = c.Deposits
		if c.deps == nil {
			c.deps = new(MemoryDeposits)
		}
		c.self = newOwner()
		c.owner = c.Owner
		if c.owner == "" {
			c.owner = c.self.String()
		}
		c.starting = make(chan struct{}, cmp.Or(max(c.Starting, 0), DefaultStarting))
		c.sources = map[string]*Source{}
		c.running = map[string]*runningPass{}
		c.stages = map[string]*passStages{}
		for i := range c.Sources {
			s := c.Sources[i]
			if err := s.Validate(); err != nil {
				c.initErr = err
				return
			}
			if _, dup := c.sources[s.ID]; dup {
				c.initErr = &SourceError{Source: s.ID, Field: "id", Reason: "two sources share it"}
				return
			}
			s.Admitted = append([]string(nil), s.Admitted...)
			c.sources[s.ID] = &s
			c.order = append(c.order, s.ID)
		}
	})
	return c.initErr
}

// source returns a copy of the named source.
func (c *Crawler) source(id string) (Source, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sources[id]
	if s == nil {
		return Source{}, fmt.Errorf("%w: %s", ErrUnknownSource, id)
	}
	return *s, nil
}

// Deposited returns the Crawler's own MemoryDeposits when Deposits was nil,
// else nil.
func (c *Crawler) Deposited() *MemoryDeposits {
	if c.init() != nil {
		return nil
	}
	m, _ := c.deps.(*MemoryDeposits)
	if c.Deposits != nil {
		return nil
	}
	return m
}

// StateStore returns the State the Crawler uses (its own MemoryState when
// State was nil).
func (c *Crawler) StateStore() State {
	if c.init() != nil {
		return nil
	}
	return c.state
}

// Deactivate marks the source inactive: it is never fetched again, a pass
// of it under way stops before its next request, and what it deposited
// stays as it is.
func (c *Crawler) Deactivate(id string) error {
	if err := c.init(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sources[id]
	if s == nil {
		return fmt.Errorf("%w: %s", ErrUnknownSource, id)
	}
	s.Active = false
	if run := c.running[id]; run != nil {
		run.cancel()
	}
	return nil
}

// Withdraw deactivates the source, waits for a pass of it under way in this
// Crawler to end, and removes what was kept of it: its deposits and its
// state. It returns how many deposits it removed.
func (c *Crawler) Withdraw(ctx context.Context, id string) (int, error) {
	if err := c.Deactivate(id); err != nil {
		return 0, err
	}
	// A pass under way ends first, so that nothing it read is deposited
	// after the withdrawal.
	c.mu.Lock()
	run := c.running[id]
	c.mu.Unlock()
	if run != nil {
		select {
		case <-run.done:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	n, err := c.deps.Withdraw(ctx, id)
	if err != nil {
		return n, err
	}
	c.emit(Event{Kind: EventWithdrawn, Source: id, Count: n})
	return n, c.state.Forget(ctx, id)
}

// Refresh reads the source's trigger now and runs a pass over what it
// announces, as an operator may ask — unless the trigger was read
// within RefreshGuard, or the site asked us to slow down or refused us at
// its last read, or the chain would refuse the trigger now (a cool-down, a
// suspension, robots.txt; asked of Client.Explain): then the source is left
// alone until its next scheduled read, and Refresh returns a *RefreshError
// saying so, having sent nothing but, at most, the robots.txt fetch a read
// would have made first.
func (c *Crawler) Refresh(ctx context.Context, id string) (*PassReport, error) {
	return c.refresh(ctx, id, passMode{forceTrigger: true})
}

// ReadTrigger reads the source's trigger now and records what it announces,
// reading no article (the next pass reads them): a one-shot for tools and
// tests. It is declined as Refresh is, under the same guard, and holds the
// source's lease while it reads.
func (c *Crawler) ReadTrigger(ctx context.Context, id string) (*PassReport, error) {
	return c.refresh(ctx, id, passMode{forceTrigger: true, triggerOnly: true})
}

func (c *Crawler) refresh(ctx context.Context, id string, mode passMode) (*PassReport, error) {
	ctx = forSource(ctx, id) // Explain may fetch robots.txt: it counts for the source
	if err := c.init(); err != nil {
		return nil, err
	}
	src, err := c.source(id)
	if err != nil {
		return nil, err
	}
	if !src.Active {
		return nil, fmt.Errorf("%w: %s", ErrInactive, id)
	}
	sc, err := c.state.Schedule(ctx, id)
	if err != nil {
		return nil, err
	}
	now := c.clk.Now()
	guard := c.RefreshGuard
	if guard <= 0 {
		guard = DefaultRefreshGuard
	}
	declined := ""
	switch {
	case !sc.LastTrigger.IsZero() && now.Before(sc.LastTrigger.Add(guard)):
		declined = fmt.Sprintf("read %v ago, within the %v guard", now.Sub(sc.LastTrigger).Round(time.Second), guard)
	case now.Before(sc.Slowed):
		declined = "the site asked us to slow down or refused us"
	}
	if declined == "" {
		// The chain's own state: a site cooling down or suspended, or a
		// robots.txt refusing the trigger, is left alone too.
		for _, u := range src.triggerURLs() {
			e, err := c.Client.Explain(ctx, u, fetch.GetOptions{Kind: fetch.KindFeed})
			if err == nil && !e.Allowed && e.Refusal != nil {
				declined = "the chain refuses it: " + e.Refusal.Reason.String()
				break
			}
		}
	}
	if declined != "" {
		e := &RefreshError{Source: id, Reason: declined, Next: sc.NextTrigger}
		c.emit(Event{Kind: EventRefreshDeclined, Source: id, Reason: declined, Err: e})
		return nil, e
	}
	return c.pass(ctx, src, mode)
}

// Pass runs one pass of the source now: its backlog is walked if due, its
// trigger read if due, then every announced article not yet settled is
// read (at most MaxReads times in this pass) and deposited as the
// source allows. It holds the source's lease throughout; when another
// owner holds it, Pass returns a *LeaseError matching ErrLeaseHeld, having
// sent nothing.
func (c *Crawler) Pass(ctx context.Context, id string) (*PassReport, error) {
	if err := c.init(); err != nil {
		return nil, err
	}
	src, err := c.source(id)
	if err != nil {
		return nil, err
	}
	if !src.Active {
		return nil, fmt.Errorf("%w: %s", ErrInactive, id)
	}
	return c.pass(ctx, src, passMode{})
}

// RunOnce runs one pass of every active source, at once (each source's
// hosts still paced by the Client), and returns their reports in the order
// of Sources. A source whose lease is held elsewhere reports the
// *LeaseError in its report's Err.
func (c *Crawler) RunOnce(ctx context.Context) ([]*PassReport, error) {
	if err := c.init(); err != nil {
		return nil, err
	}
	ids := c.activeIDs()
	reports := make([]*PassReport, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Pass(ctx, id)
			if r == nil {
				r = &PassReport{Source: id}
			}
			if err != nil && r.Err == nil {
				r.Err = err
			}
			reports[i] = r
		}()
	}
	wg.Wait()
	return reports, ctx.Err()
}

func (c *Crawler) activeIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for _, id := range c.order {
		if c.sources[id].Active {
			ids = append(ids, id)
		}
	}
	return ids
}

// Run crawls until ctx ends: each active source's pass starts when its
// trigger or its backlog is due (as State's schedule says, so a restarted
// crawler keeps the schedule), one pass per source at a time. It returns
// ctx's error, or an error that stops every source (an invalid source, a
// State that cannot answer at start).
func (c *Crawler) Run(ctx context.Context) error {
	if err := c.init(); err != nil {
		return err
	}
	done := make(chan string, len(c.order))
	busy := map[string]bool{}
	held := map[string]time.Time{} // sources not to start before: their lease held elsewhere, or their last pass failed
	var heldMu sync.Mutex
	// dueAt is each idle source's next start as last read from the State.
	// A source's schedule is read again only when that start comes or its
	// pass ends, not at every wake: with thousands of sources, every pass's
	// end would otherwise read all their schedules.
	dueAt := map[string]time.Time{}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		now := c.clk.Now()
		var next time.Time
		for _, id := range c.activeIDs() {
			if busy[id] {
				continue
			}
			if due, ok := dueAt[id]; ok && due.After(now) {
				if next.IsZero() || due.Before(next) {
					next = due
				}
				continue
			}
			src, err := c.source(id)
			if err != nil {
				continue
			}
			due := c.due(ctx, &src, now)
			heldMu.Lock()
			if h := held[id]; due.Before(h) {
				due = h
			}
			heldMu.Unlock()
			dueAt[id] = due
			if !due.After(now) {
				delete(dueAt, id)
				busy[id] = true
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { done <- id }()
					rep, err := c.pass(ctx, src, passMode{})
					notBefore := nextStart(ctx, rep, err, c.clk.Now())
					heldMu.Lock()
					held[id] = notBefore
					heldMu.Unlock()
				}()
				continue
			}
			if next.IsZero() || due.Before(next) {
				next = due
			}
		}
		var wake <-chan time.Time
		if !next.IsZero() {
			wake = clock.Until(c.clk, next) // not After(next.Sub(now)): the clock may have moved since now was read
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case id := <-done:
			delete(busy, id)
			delete(dueAt, id) // its pass changed its schedule
		case <-wake:
		}
	}
}

// due is when the source's next pass is due, as its schedule in the State
// says: its trigger, its backlog or an embargo lifting, whichever comes
// first. A State that does not answer makes it due a minute from now.
func (c *Crawler) due(ctx context.Context, src *Source, now time.Time) time.Time {
	sc, err := c.state.Schedule(ctx, src.ID)
	if err != nil {
		c.emit(Event{Kind: EventStoreError, Source: src.ID, Err: err})
		sc = Schedule{NextTrigger: now.Add(time.Minute)}
	}
	due := sc.NextTrigger
	if src.Backlog != nil && sc.NextBacklog.Before(due) {
		due = sc.NextBacklog
	}
	if !sc.Embargo.IsZero() && sc.Embargo.Before(due) {
		due = sc.Embargo // an embargoed article is read as soon as it lifts
	}
	return due
}

// hostOf is the frontier key of a URL: its host, as the chain keys it.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// startTurn waits for a turn to start a pass (see Crawler.Starting) and
// returns its release, which may be called any number of times; the turn
// goes back by itself after StartHold. It returns nil when ctx ends first.
func (c *Crawler) startTurn(ctx context.Context) func() {
	select {
	case c.starting <- struct{}{}:
	case <-ctx.Done():
		return nil
	}
	var once sync.Once
	released := make(chan struct{})
	release := func() {
		once.Do(func() {
			close(released)
			<-c.starting
		})
	}
	go func() {
		select {
		case <-released:
		case <-c.clk.After(StartHold):
			release()
		}
	}()
	return release
}

// nextStart returns when Run may start the source's next pass after one
// that returned rep and err at now; zero: when the State says it is due.
func nextStart(ctx context.Context, rep *PassReport, err error, now time.Time) time.Time {
	var notBefore time.Time
	var le *LeaseError
	switch {
	case ctx.Err() != nil:
	case err == nil && rep != nil && (rep.triggerDue || rep.backlogDue):
		// Nothing of the trigger was sent, or what it or the backlog
		// named is not all recorded, for a failure of ours: it stays due,
		// and is tried again a little later, not at once.
		notBefore = rep.End.Add(RetryAfterError)
	case err == nil:
	case errors.As(err, &le) && errors.Is(err, ErrLeaseHeld):
		// Another process runs this source's pass: look again when its
		// lease ends.
		notBefore = le.Held.Expires
	default:
		// A pass that could not run (a store that did not answer, a lease
		// lost) is tried again a little later, not at once.
		notBefore = now.Add(RetryAfterError)
	}
	// A trigger read whose schedule the State did not take was still a
	// read: never again before its interval has passed.
	if rep != nil && rep.triggerHold.After(notBefore) {
		notBefore = rep.triggerHold
	}
	return notBefore
}
