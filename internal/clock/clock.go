// Package clock is the injectable time source shared by politefetch's
// packages. A nil Clock means real time; tests inject a Manual clock or run
// under testing/synctest, so a six-hour back-off is tested in microseconds.
package clock

import "time"

// Clock tells the time and waits. Implementations must be safe for
// concurrent use.
type Clock interface {
	Now() time.Time
	// After behaves like time.After.
	After(d time.Duration) <-chan time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Or returns c, or Real when c is nil.
func Or(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}

// At is the optional method of a Clock whose time another goroutine moves
// (Manual): it fires once the clock reads t or later. Until uses it, so a
// wait worked out from one reading of the clock is not pushed back by a
// move made before the wait was registered.
type At interface {
	At(t time.Time) <-chan time.Time
}

// Until returns a channel that fires once c reads t or later: c's At when
// it has one, else c.After(t.Sub(c.Now())).
func Until(c Clock, t time.Time) <-chan time.Time {
	if a, ok := c.(At); ok {
		return a.At(t)
	}
	return c.After(t.Sub(c.Now()))
}
