// Package clock holds the helpers politefetch's packages use with the public
// clock package's Clock: Or (nil means real time) and Until (a wait to an
// instant, exact on a Manual clock). The types are the public package's.
package clock

import (
	"time"

	"github.com/politefetch/politefetch/clock"
)

// Clock is the public clock.Clock.
type Clock = clock.Clock

// Real is the public clock.Real.
type Real = clock.Real

// Manual is the public clock.Manual.
type Manual = clock.Manual

// NewManual returns a Manual clock reading start.
func NewManual(start time.Time) *Manual { return clock.NewManual(start) }

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
