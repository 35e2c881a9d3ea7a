package crawl

import (
	"container/heap"
	"errors"
	"sync"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
)

// renewer renews the leases of a Crawler's running passes, every third of
// each lease's TTL. One goroutine waits for the earliest renewal due, and
// lives only while a pass runs; each renewal runs on a goroutine of its own
// for as long as the State takes to answer, so a State slow for one source
// holds up no other source's renewal, and a pass waiting for its next read
// keeps no goroutine of its own for its lease.
//
// A renewal refused (ErrLeaseLost) ends the pass before its next request:
// never two passes of one source at once. A State that did not answer is
// asked again a third of the TTL later while the lease still holds; the
// readers stop by themselves once it has run out (heldLease.valid).
type renewer struct {
	mu      sync.Mutex
	queue   renewQueue // passes waiting for their next renewal, earliest first
	n       int        // passes registered, queued or being renewed
	running bool       // the waiting goroutine is alive
	wake    chan struct{}
	stop    chan struct{} // closed to end the waiting goroutine
	exited  chan struct{} // closed once it has ended
}

// renewal is what the renewer knows of one pass. Its fields are guarded by
// the renewer's mutex.
type renewal struct {
	at   time.Time // when the next renewal is due
	idx  int       // in the queue; -1 while not queued
	gone bool      // the pass has ended: renew it no more
	busy sync.WaitGroup
}

// add registers p, whose first renewal is due a third of its TTL from now.
func (r *renewer) add(c *Crawler, p *pass) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wake == nil {
		r.wake = make(chan struct{}, 1)
	}
	r.n++
	r.push(p, c.clk.Now().Add(p.ttl/3))
	if !r.running {
		r.running = true
		r.stop, r.exited = make(chan struct{}), make(chan struct{})
		go r.loop(c, r.stop, r.exited)
	}
}

// remove deregisters p and returns once no renewal of its lease is under
// way, so that what follows (the lease's release) comes after the last one,
// and, when p was the last pass, once the waiting goroutine has ended: a
// Crawler keeps no goroutine outside its method calls.
func (r *renewer) remove(p *pass) {
	r.mu.Lock()
	p.renewal.gone = true
	if p.renewal.idx >= 0 {
		heap.Remove(&r.queue, p.renewal.idx)
	}
	r.n--
	var exited chan struct{}
	if r.n == 0 {
		close(r.stop)
		exited, r.running = r.exited, false
	}
	r.mu.Unlock()
	p.renewal.busy.Wait()
	if exited != nil {
		<-exited
	}
}

// push queues p's next renewal at at, waking the waiting goroutine when it
// is now the earliest. r.mu is held.
func (r *renewer) push(p *pass, at time.Time) {
	p.renewal.at = at
	heap.Push(&r.queue, p)
	if p.renewal.idx == 0 {
		r.poke()
	}
}

// poke wakes the waiting goroutine, once however many times it is called
// before it wakes.
func (r *renewer) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// loop starts each renewal as it falls due, until stop is closed (no pass
// is registered any more).
func (r *renewer) loop(c *Crawler, stop, exited chan struct{}) {
	defer close(exited)
	for {
		r.mu.Lock()
		select {
		case <-stop:
			r.mu.Unlock()
			return
		default:
		}
		now := c.clk.Now()
		for len(r.queue) > 0 && !r.queue[0].renewal.at.After(now) {
			p := heap.Pop(&r.queue).(*pass)
			p.renewal.busy.Add(1)
			go r.renew(c, p)
		}
		var next time.Time
		if len(r.queue) > 0 {
			next = r.queue[0].renewal.at
		}
		r.mu.Unlock()
		var due <-chan time.Time
		if !next.IsZero() {
			due = clock.Until(c.clk, next)
		}
		select {
		case <-due:
		case <-r.wake:
		case <-stop:
			return
		}
	}
}

// renew renews p's lease once and, unless the pass is over or its lease
// lost, queues the next renewal a third of the TTL later.
func (r *renewer) renew(c *Crawler, p *pass) {
	defer p.renewal.busy.Done()
	ctx := p.ctx
	l, err := c.state.RenewLease(ctx, p.src.ID, c.owner, c.clk.Now(), p.ttl)
	switch {
	case err == nil:
		p.held.renewed(l.Expires)
	case ctx.Err() != nil:
		return // the pass is ending
	case !errors.Is(err, ErrLeaseLost) && p.held.valid(c.clk.Now()):
		c.emit(Event{Kind: EventStoreError, Source: p.src.ID, Err: err})
	default:
		c.emit(Event{Kind: EventLeaseLost, Source: p.src.ID, Err: err})
		p.held.cancel()
		return
	}
	r.mu.Lock()
	if !p.renewal.gone {
		r.push(p, c.clk.Now().Add(p.ttl/3))
	}
	r.mu.Unlock()
}

// renewQueue is a heap of passes by their next renewal.
type renewQueue []*pass

func (q renewQueue) Len() int           { return len(q) }
func (q renewQueue) Less(i, j int) bool { return q[i].renewal.at.Before(q[j].renewal.at) }
func (q renewQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].renewal.idx, q[j].renewal.idx = i, j
}

func (q *renewQueue) Push(x any) {
	p := x.(*pass)
	p.renewal.idx = len(*q)
	*q = append(*q, p)
}

func (q *renewQueue) Pop() any {
	old := *q
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	p.renewal.idx = -1
	return p
}
