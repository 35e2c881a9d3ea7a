package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// defaultAnswerGrace is a pacer's AnswerGrace when unset.
const defaultAnswerGrace = 5 * time.Second

func (p *pacer) answerGrace() time.Duration {
	if p.AnswerGrace == 0 {
		return defaultAnswerGrace
	}
	return max(p.AnswerGrace, 0)
}

// await sends req with a context of its own, which keeps req's values but
// not its cancellation, from a goroutine of its own, and waits for the
// answer while req's context lives. If that context ends first:
//
//   - a request not yet written is stopped, and ends as it would have;
//   - one written whose status the ledger gate below has not yet seen is
//     left to finish in the background, for grace at most, holding the
//     turn (see AnswerGrace), and the caller gets its context's error at
//     once: the gate still observes the answer when it comes, so that a
//     refusal is recorded. This holds whether or not the answer has begun:
//     a deadline may end between a 429's first byte and its parsed headers
//     (a 1xx before it, or a process descheduled in between);
//   - one whose status the gate has (it is reading the start of the body,
//     see ledgerGate) is stopped, and the caller gets what the layers below
//     made of it; the gate shows the ledger what it has.
//
// Once the answer has come, the same goroutine ends the request's own
// context when the caller's ends, so that the caller's context still ends
// the body at once, or when the body is done. Nothing else is made per
// request: no timer (the grace's is armed only when a caller gives up on a
// written request), no trace (the turn learns of the answer's first byte
// from the layers below, see turn.answered), no second deadline.
func (p *pacer) await(nextRT http.RoundTripper, req *http.Request, rb *releaseBody, grace time.Duration) (*http.Response, error) {
	ctx := req.Context()
	t := &rb.turn
	inner, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	rb.caller, rb.inner, rb.stop = ctx, inner, stop
	rb.done = make(chan struct{})
	// The goroutine is counted under the lock close takes, so that close
	// awaits every one it let start, and none starts once it has.
	p.life.mu.Lock()
	if p.life.closed {
		p.life.mu.Unlock()
		stop(errClosed)
		t.end(true)
		return nil, errClosed
	}
	p.life.wg.Add(1)
	jobs := p.life.takeIdle()
	p.life.mu.Unlock()
	j := answerJob{nextRT, req.WithContext(inner), rb}
	if jobs != nil {
		jobs <- j
	} else {
		go p.answerLoop(j)
	}
	select {
	case <-rb.done:
	case <-ctx.Done():
		if t.written() && !t.observed() && p.abandon(rb, grace) {
			return nil, ctx.Err()
		}
		stop(ctx.Err())
		<-rb.done
	case <-p.life.closing:
		stop(errClosed)
		<-rb.done
	}
	if rb.err != nil {
		stop(nil)
		t.end(true)
		if ctx.Err() != nil && (errors.Is(rb.err, context.Canceled) || errors.Is(rb.err, ctx.Err())) {
			return nil, ctx.Err() // stopped for the caller: the caller's reason
		}
		return nil, rb.err
	}
	resp := rb.resp
	rb.resp = nil
	rb.rc = resp.Body
	rb.status = resp.StatusCode
	resp.Body = rb
	p.markOpen(t)
	return resp, nil
}

// Where an awaited request stands (releaseBody.state).
const (
	awaiting  int32 = iota // the caller waits for the answer
	answered               // the answer (or the failure) was handed to the caller
	abandoned              // the caller gave up on the written request: the grace holds it
)

// errClosed ends the requests of a Client being closed.
var errClosed = errors.New("fetch: the client was closed")

// errGraceOver ends a written request whose answer did not come within the grace.
var errGraceOver = errors.New("fetch: no answer within the answer grace")

// abandon hands rb's written request over to the background, for grace at
// most, if its answer has not been handed to the caller meanwhile (then it
// reports false, and the caller takes the answer as usual).
func (p *pacer) abandon(rb *releaseBody, grace time.Duration) bool {
	p.life.mu.Lock()
	defer p.life.mu.Unlock()
	if p.life.closed || !rb.state.CompareAndSwap(awaiting, abandoned) {
		return false
	}
	rb.grace = time.AfterFunc(grace, func() { rb.stop(errGraceOver) })
	if p.life.held == nil {
		p.life.held = make(map[*releaseBody]struct{})
	}
	p.life.held[rb] = struct{}{}
	return true
}

// answer runs on await's goroutine (see answerLoop): it sends req below
// and hands the answer to the caller, then ends the request's own context
// when the caller's context ends, the Client closes, or the body is done
// (which stops it). An answer the caller gave up on is closed, once the
// layers below have observed it, and the turn goes back.
func (p *pacer) answer(nextRT http.RoundTripper, req *http.Request, rb *releaseBody) {
	defer p.life.wg.Done()
	resp, err := next(nextRT).RoundTrip(req)
	rb.resp, rb.err = resp, err
	if rb.state.CompareAndSwap(awaiting, answered) {
		close(rb.done)
		if err != nil {
			return
		}
		select {
		case <-rb.caller.Done():
			rb.stop(rb.caller.Err())
		case <-rb.inner.Done():
		case <-p.life.closing:
			rb.stop(errClosed)
		}
		return
	}
	// Abandoned: the grace's timer is set (see abandon).
	p.life.mu.Lock()
	delete(p.life.held, rb)
	p.life.mu.Unlock()
	rb.grace.Stop()
	if err == nil {
		resp.Body.Close() // the layers below have observed the answer
	}
	rb.stop(nil)
	rb.turn.end(true)
	if p.observe != nil {
		if err == nil {
			p.answered(&rb.turn, resp.StatusCode, 0, nil)
		} else {
			p.ended(rb.turn.ctx, rb.turn.req, err)
		}
	}
}

// answerJob is one awaited request for an answer goroutine.
type answerJob struct {
	nextRT http.RoundTripper
	req    *http.Request
	rb     *releaseBody
}

// maxIdleAnswerers bounds the answer goroutines a Client keeps waiting for
// requests. A goroutine kept keeps the stack that sending a request through
// the layers below grew, which a new one would grow again, copying it on
// the way.
const maxIdleAnswerers = 64

// answerLoop runs j, then, while the pacer belongs to a Client that is not
// closed and keeps fewer than maxIdleAnswerers idle, waits for the next job.
func (p *pacer) answerLoop(j answerJob) {
	var jobs chan answerJob // while idle, its next job; a zero job ends it
	for {
		p.answer(j.nextRT, j.req, j.rb)
		j = answerJob{}
		if p.life.closing == nil {
			return // a pacer alone has no Close to end an idle goroutine
		}
		if jobs == nil {
			jobs = make(chan answerJob, 1)
		}
		if !p.life.putIdle(jobs) {
			return
		}
		j = <-jobs
		p.life.wg.Done() // its wait as an idle goroutine (see putIdle)
		if j.rb == nil {
			return
		}
	}
}

// lifecycle is what a pacer keeps of the goroutines it starts, so that a
// Client's Close ends and awaits them.
type lifecycle struct {
	closing chan struct{} // closed by close; nil (never closed) for a pacer alone
	wg      sync.WaitGroup
	mu      sync.Mutex
	closed  bool
	held    map[*releaseBody]struct{} // requests abandoned to their grace
	idle    []chan answerJob          // the job channels of the answer goroutines waiting for a request
}

// takeIdle returns an idle answer goroutine's job channel, or nil; l.mu is held.
func (l *lifecycle) takeIdle() chan answerJob {
	n := len(l.idle)
	if n == 0 {
		return nil
	}
	a := l.idle[n-1]
	l.idle[n-1] = nil
	l.idle = l.idle[:n-1]
	return a
}

// putIdle keeps the goroutine of jobs as idle, unless the Client is closed or keeps enough. An
// idle goroutine is counted in l.wg until it takes its next job, so that
// close awaits its end too.
func (l *lifecycle) putIdle(jobs chan answerJob) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || len(l.idle) >= maxIdleAnswerers {
		return false
	}
	l.wg.Add(1)
	l.idle = append(l.idle, jobs)
	return true
}

// closeWait bounds how long close awaits the pacer's goroutines once it has
// ended their requests.
const closeWait = 5 * time.Second

// close ends every request the pacer awaits (the answers in their grace, the
// bodies still open) and waits, closeWait at most, for their goroutines to
// return. It reports whether they all did.
func (p *pacer) close() bool {
	p.life.mu.Lock()
	if p.life.closed {
		p.life.mu.Unlock()
		return true
	}
	p.life.closed = true
	if p.life.closing != nil {
		close(p.life.closing)
	}
	for rb := range p.life.held {
		rb.stop(errClosed)
	}
	for _, jobs := range p.life.idle {
		jobs <- answerJob{} // ends it
	}
	p.life.idle = nil
	p.life.mu.Unlock()
	done := make(chan struct{})
	go func() { p.life.wg.Wait(); close(done) }()
	timer := time.NewTimer(closeWait)
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	}
}

// releaseBody ends its turn at EOF, at the first read error, or at Close,
// whichever comes first. It also holds what await shares with its
// goroutine (one allocation for all of it).
type releaseBody struct {
	rc   io.ReadCloser
	turn turn
	// Set by await: the caller's context, the request's own context and its
	// cancel; the answer, handed over by closing done; where the request
	// stands (awaiting, answered, abandoned) and the grace's timer.
	caller context.Context
	inner  context.Context
	stop   context.CancelCauseFunc
	done   chan struct{}
	resp   *http.Response
	err    error
	state  atomic.Int32
	grace  *time.Timer
	// For the observer (see pacer.answered): the answer's status, the body
	// bytes read, and whether its end was shown.
	status int
	bytes  atomic.Int64
	shown  atomic.Bool
}

func (b *releaseBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	obs := b.turn.p.observe != nil
	if obs {
		b.bytes.Add(int64(n))
	}
	if err != nil {
		if b.caller != nil && b.caller.Err() != nil && (errors.Is(err, context.Canceled) || err == io.EOF && b.inner.Err() != nil) {
			// The caller's reason, not the link's. An end of body that
			// comes once the caller's context has stopped the request is
			// no proof the body was whole: a server that saw the
			// connection go may end the body it was sending, and net/http
			// passes that end on as io.EOF.
			err = b.caller.Err()
		}
		b.turn.end(false)
		if obs {
			b.show(err)
		}
	} else {
		b.turn.renew()
	}
	return n, err
}

// show shows the observer the end of the answer, once; err is the body's
// read error (io.EOF: it was read to its end).
func (b *releaseBody) show(err error) {
	if !b.shown.CompareAndSwap(false, true) {
		return
	}
	if err == io.EOF {
		err = nil
	}
	b.turn.p.answered(&b.turn, b.status, b.bytes.Load(), err)
}

// Close gives the turn back, and ends the request's own context (after the
// last read: what reads the body may still be decoding what it has).
func (b *releaseBody) Close() error {
	err := b.rc.Close()
	b.turn.end(false)
	if b.turn.p.observe != nil {
		b.show(nil)
	}
	if b.stop != nil {
		b.stop(nil)
	}
	return err
}
