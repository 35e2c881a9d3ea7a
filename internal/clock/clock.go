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
