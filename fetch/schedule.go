package fetch

import (
	"context"
	"sync"
	"time"
)

// Schedule is per-host pacing state shared by several processes, so that
// politeness holds across all of them (P1): each process's [Pacer] keeps its own
// queue and in-flight slots, and reserves every start in the Schedule. A store
// shared by several processes (Redis, a database) must make Reserve atomic across
// them. fetchtest.RunSchedule checks an implementation.
type Schedule interface {
	// Reserve takes, for key, the earliest start at or after now that is at
	// least gap after the start reserved last for key, records it as the
	// latest start, and returns it. The caller waits until that instant.
	Reserve(ctx context.Context, key string, now time.Time, gap time.Duration) (time.Time, error)
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

// Reserve implements [Schedule].
func (s *MemorySchedule) Reserve(_ context.Context, key string, now time.Time, gap time.Duration) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = make(map[string]time.Time)
	}
	start := now
	if prev, ok := s.last[key]; ok && prev.Add(gap).After(start) {
		start = prev.Add(gap)
	}
	s.last[key] = start
	s.ops++
	if s.ops > len(s.last)+64 {
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
	return start, nil
}
