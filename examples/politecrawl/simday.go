package main

import (
	"sync"
	"time"
)

// simDay is the demo's simulated day: the crawler's clock, moved forward by
// the demo between passes and never by the wall clock. Waiters fire once
// the day reaches their time.
type simDay struct {
	mu      sync.Mutex
	now     time.Time
	waiters []dayWaiter
}

type dayWaiter struct {
	at time.Time
	ch chan time.Time
}

func newSimDay(start time.Time) *simDay { return &simDay{now: start} }

func (d *simDay) Now() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.now
}

func (d *simDay) After(wait time.Duration) <-chan time.Time { return d.At(d.Now().Add(wait)) }

// At fires once the day reads t or later: at once if it already does.
func (d *simDay) At(t time.Time) <-chan time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(d.now) {
		ch <- d.now
		return ch
	}
	d.waiters = append(d.waiters, dayWaiter{at: t, ch: ch})
	return ch
}

// Set moves the day to t (never backwards) and fires every waiter due.
func (d *simDay) Set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t.After(d.now) {
		d.now = t
	}
	kept := d.waiters[:0]
	for _, w := range d.waiters {
		if w.at.After(d.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- d.now
	}
	d.waiters = kept
}
