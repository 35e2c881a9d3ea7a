package crawl

import (
	"errors"
	"fmt"
	"time"
)

// The bounds of a Crawler's limits: a Crawler set beyond one refuses every
// call with a *LimitError. Each bound keeps the crawl at least as polite,
// and as bounded, as its default.
const (
	// MinBacklogInterval is the shortest BacklogInterval: a backlog is
	// walked at most once an hour.
	MinBacklogInterval = time.Hour
	// MinRefreshGuard is the shortest RefreshGuard: a site is never asked
	// for its trigger again within a minute of its last read (S2).
	MinRefreshGuard = time.Minute
	// MinLeaseTTL is the shortest LeaseTTL: a lease renewed every third of
	// it asks the State at most three times a second.
	MinLeaseTTL = time.Second
)

// ErrInvalidLimit is matched (errors.Is) by every *LimitError.
var ErrInvalidLimit = errors.New("crawl: invalid crawler limit")

// LimitError is a Crawler field set beyond its bound: the field, by its Go
// name ("RefreshGuard"), and the rule it breaks, in words. It matches
// ErrInvalidLimit.
type LimitError struct {
	Field  string
	Reason string
}

func (e *LimitError) Error() string {
	return "crawl: invalid crawler limit: " + e.Field + ": " + e.Reason
}

// Is matches ErrInvalidLimit.
func (e *LimitError) Is(target error) bool { return target == ErrInvalidLimit }

// CheckLimits returns a *LimitError for the first of the Crawler's limits
// beyond its bound, or nil; it needs no Client, so a program can check a
// configuration's limits before it builds one. Zero is every limit's
// default, and always valid. Every method of the Crawler refuses to run
// with the same error.
func (c *Crawler) CheckLimits() error {
	atLeast := func(field string, d, least, def time.Duration) error {
		if d != 0 && d < least {
			return &LimitError{Field: field, Reason: fmt.Sprintf("%v is shorter than %v (0: the default, %v)", d, least, def)}
		}
		return nil
	}
	upTo := func(field string, n, most int, what string) error {
		if n < 0 || n > most {
			return &LimitError{Field: field, Reason: fmt.Sprintf("%d: from 1 to %d %s (0: %d)", n, most, what, most)}
		}
		return nil
	}
	positive := func(field string, n, def int) error {
		if n < 0 {
			return &LimitError{Field: field, Reason: fmt.Sprintf("%d is negative (0: the default, %d)", n, def)}
		}
		return nil
	}
	for _, err := range []error{
		atLeast("BacklogInterval", c.BacklogInterval, MinBacklogInterval, DefaultBacklogInterval),
		atLeast("RefreshGuard", c.RefreshGuard, MinRefreshGuard, DefaultRefreshGuard),
		atLeast("LeaseTTL", c.LeaseTTL, MinLeaseTTL, DefaultLeaseTTL),
		upTo("MaxReads", c.MaxReads, DefaultMaxReads, "reads of an article per pass"),
		upTo("MaxFailures", c.MaxFailures, DefaultMaxFailures, "consecutive deposit failures before a pass stops"),
		positive("HostQueue", c.HostQueue, DefaultHostQueue),
		positive("QueueSize", c.QueueSize, DefaultQueueSize),
		positive("Extractors", c.Extractors, DefaultExtractors),
		positive("Starting", c.Starting, DefaultStarting),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// limits returns the Crawler's limits, each its default when zero.
func (c *Crawler) limits() (ttl time.Duration, reads, failures, hostQ, q, ex int) {
	ttl, reads, failures, hostQ, q, ex = c.LeaseTTL, c.MaxReads, c.MaxFailures, c.HostQueue, c.QueueSize, c.Extractors
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	if reads <= 0 {
		reads = DefaultMaxReads
	}
	if failures <= 0 {
		failures = DefaultMaxFailures
	}
	if hostQ <= 0 {
		hostQ = DefaultHostQueue
	}
	if q <= 0 {
		q = DefaultQueueSize
	}
	if ex <= 0 {
		ex = DefaultExtractors
	}
	return
}
