// Package clock is the time source politefetch's packages are given: any
// [Clock] will do, nil meaning real time. A test of code that uses the
// library injects a [Manual] clock (fetch.WithClock, crawl's and the stores'
// Clock fields), so that a six-hour back-off or a day's pacing is tested in
// microseconds, without sleeping.
//
//	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
//	c, err := fetch.New(pol, fetch.WithClock(clk))
//	...
//	clk.Advance(6 * time.Hour) // the cool-down is over
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
