package fetch

import (
	"context"
	"net/url"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
)

// markOpen records that t's response body is now the caller's to read
// (and close).
func (p *pacer) markOpen(t *turn) {
	now := clock.Or(p.Clock).Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.hosts[t.key]
	if st == nil || t.opened {
		return
	}
	t.opened, t.openAt = true, now
	t.openPrev = st.openTail
	if st.openTail != nil {
		st.openTail.openNext = t
	} else {
		st.open = t
	}
	st.openTail = t
}

// unlinkOpen forgets t's open body, if it is listed. Called with p.mu held.
func (st *paceState) unlinkOpen(t *turn) {
	if !t.opened {
		return
	}
	t.opened = false
	if t.openPrev != nil {
		t.openPrev.openNext = t.openNext
	} else {
		st.open = t.openNext
	}
	if t.openNext != nil {
		t.openNext.openPrev = t.openPrev
	} else {
		st.openTail = t.openPrev
	}
	t.openPrev, t.openNext = nil, nil
}

// OpenSince is openSince for u's host (or site): for explanations.
func (p *pacer) OpenSince(u *url.URL) time.Time {
	key, err := pacingKey(context.Background(), u, p.PerSite)
	if err != nil {
		return time.Time{}
	}
	return p.openSince(key)
}

// openSince returns when the oldest response body from key's host still
// open was handed to its caller; zero when none is.
func (p *pacer) openSince(key string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.hosts[key]; st != nil && st.open != nil {
		return st.open.openAt
	}
	return time.Time{}
}

// openBodyError is a deadline met waiting for a host's turn while a
// response body from that host was still open: the body holds the turn
// until it is read to its end or closed. It matches ErrPacingDeadline and
// the context's error, as the wait's error does.
type openBodyError struct {
	host  string
	since time.Time
	err   error
}

func (e *openBodyError) Error() string {
	return "fetch: deadline reached while waiting for " + e.host + "'s turn: a response body from " + e.host +
		" is still open (since " + e.since.UTC().Format(time.RFC3339) + "), and holds the turn until it is closed: nothing was sent"
}

func (e *openBodyError) Unwrap() []error { return []error{ErrPacingDeadline, e.err} }
