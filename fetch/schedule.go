package fetch

import (
	"context"
	"sync"
	"time"
)

// Schedule is per-host pacing state shared by several processes, so that
// politeness holds across all of them (P1): each process's [Pacer] keeps its own
// queue and in-flight slots, and claims every start in the Schedule, then reports
// when the request really left. A store shared by several processes (Redis, a
// database) must make Claim atomic across them. fetchtest.RunSchedule checks an
// implementation.
//
// A claim is for now, never for a future instant: a process that may not start
// yet learns when to ask again. So the start recorded is the real one as soon as
// Started reports it, and no other process holds a reservation made from an
// earlier guess. Spacing is exact as long as a request leaves less than one
// interval after its claim.
type Schedule interface {
	// Claim asks to start a request to key at now. If key has no start
	// recorded, or its latest start is at least gap before now, Claim
	// records now as key's latest start and returns ok. Otherwise it records
	// nothing and returns the earliest instant a claim can succeed: the
	// latest start plus gap.
	Claim(ctx context.Context, key string, now time.Time, gap time.Duration) (next time.Time, ok bool, err error)
	// Started moves key's latest start to at, if at is later: the request
	// claimed earlier reached the wire at at. It is called from the
	// connection's writer once the request's bytes are written, so an
	// implementation doing I/O should bound its own time.
	Started(ctx context.Context, key string, at time.Time) error
}

// MemorySchedule is a [Schedule] in memory: it shares pacing between Pacers in
// one process (a test stand-in for a shared store). Entries whose start lies
// more than Retain in the past are dropped. The zero value is ready to use, with
// Retain one hour. It is safe for concurrent use.
type MemorySchedule struct {
	Retain time.Duration // 0: one hour

	mu   sync.Mutex
	last map[string]time.Time
	ops  int
}

// Claim implements [Schedule].
func (s *MemorySchedule) Claim(_ context.Context, key string, now time.Time, gap time.Duration) (time.Time, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = make(map[string]time.Time)
	}
	if prev, ok := s.last[key]; ok && prev.Add(gap).After(now) {
		return prev.Add(gap), false, nil
	}
	s.last[key] = now
	s.sweepLocked(now)
	return now, true, nil
}

// Started implements [Schedule].
func (s *MemorySchedule) Started(_ context.Context, key string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.last[key]; ok && at.After(prev) {
		s.last[key] = at
	}
	return nil
}

// sweepLocked drops entries older than Retain, once per len(last) claims.
func (s *MemorySchedule) sweepLocked(now time.Time) {
	s.ops++
	if s.ops <= len(s.last)+64 {
		return
	}
	s.ops = 0
	retain := s.Retain
	if retain <= 0 {
		retain = time.Hour
	}
	for k, t := range s.last {
		if now.Sub(t) > retain {
			delete(s.last, k)
		}
	}
}
