package crawl

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

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
	readers int // readers still at work
	closed  bool
	stopped bool
}

// newHostQueue returns an empty queue for the given number of readers.
func newHostQueue(readers int) *hostQueue {
	q := &hostQueue{readers: readers}
	q.cond.L = &q.mu
	return q
}

// leave says one reader has ended; true for the last.
func (q *hostQueue) leave() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.readers--
	return q.readers == 0
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
