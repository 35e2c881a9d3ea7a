package clock

import (
	"sort"
	"sync"
	"time"
)

// Manual is a Clock that moves only when told to. Its zero value is not
// usable: build one with NewManual. It is safe for concurrent use.
type Manual struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// NewManual returns a Manual clock reading start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now returns the clock's current reading.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// After returns a channel that receives the reading once the clock has been
// advanced by at least d. A d <= 0 fires at once.
func (m *Manual) After(d time.Duration) <-chan time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.atLocked(m.now.Add(d))
}

// At returns a channel that receives the clock's time once it reads t or
// later: at once if it already does.
func (m *Manual) At(t time.Time) <-chan time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.atLocked(t)
}

func (m *Manual) atLocked(t time.Time) <-chan time.Time {
	ch := make(chan time.Time, 1)
	if !t.After(m.now) {
		ch <- m.now
		return ch
	}
	m.waiters = append(m.waiters, waiter{at: t, ch: ch})
	return ch
}

// Advance moves the clock forward by d and fires every waiter that is due,
// earliest first.
func (m *Manual) Advance(d time.Duration) {
	m.Set(m.Now().Add(d))
}

// Set moves the clock to t (never backwards) and fires every waiter due.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.After(m.now) {
		m.now = t
	}
	sort.SliceStable(m.waiters, func(i, j int) bool { return m.waiters[i].at.Before(m.waiters[j].at) })
	kept := m.waiters[:0]
	for _, w := range m.waiters {
		if !w.at.After(m.now) {
			w.ch <- m.now
			continue
		}
		kept = append(kept, w)
	}
	m.waiters = kept
}

// Waiters reports how many After channels have not fired yet.
func (m *Manual) Waiters() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.waiters)
}
