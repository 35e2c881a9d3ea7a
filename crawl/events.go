package crawl

import (
	"context"
	"log/slog"
	"maps"
)

// EventKind says what happened.
type EventKind uint8

// The kinds of event.
const (
	EventPassStarted     EventKind = iota + 1 // Count: the pass number
	EventPassEnded                            // Pass: the report; Err: why it ended early
	EventPassStopped                          // MaxFailures consecutive deposit failures; Count: them
	EventLeaseLost                            // the lease could not be renewed: the pass stops
	EventTriggerRead                          // Count: references read
	EventNotModified                          // a feed answered 304
	EventTriggerFailed                        // Err, Reason
	EventBacklogWalked                        // Count: references read
	EventBacklogFailed                        // Err, Reason
	EventRefDropped                           // a reference without identifier or on a host not admitted
	EventDeposited                            // Bytes: the envelope's length
	EventExcerpted                            // the feed's excerpt was kept
	EventExcluded                             // gated, or nothing may be kept
	EventMismatch                             // IDs: the trigger's, the list's, the article's
	EventRefused                              // the chain refused to send; Reason
	EventFailed                               // read but not deposited; Status, Err
	EventSkipped                              // MaxReads reached in this pass
	EventRefreshDeclined                      // Reason
	EventWithdrawn                            // Count: deposits removed
	EventStoreError                           // the state store could not answer; Err
	EventEmbargoed                            // an article's embargo has not lifted; Reason
	EventLeaseTakenOver                       // the lease of an owner on this machine whose process is gone was taken; Reason: whose
)

var eventNames = [...]string{"", "pass-started", "pass-ended", "pass-stopped", "lease-lost", "trigger-read", "not-modified",
	"trigger-failed", "backlog-walked", "backlog-failed", "ref-dropped", "deposited", "excerpted", "excluded", "mismatch",
	"refused", "failed", "skipped", "refresh-declined", "withdrawn", "store-error", "embargoed", "lease-taken-over"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && k > 0 {
		return eventNames[k]
	}
	return "event"
}

// Event is one thing a Crawler did. Fields that do not apply are zero.
type Event struct {
	Kind   EventKind
	Source string
	Host   string
	URL    string
	Key    string // the article's identifier
	Status int
	Reason string
	Count  int
	Bytes  int64
	IDs    [3]string // EventMismatch: the trigger's, the list's and the article's identifiers
	Pass   *PassReport
	Err    error
}

// Counts are a source's or a host's tallies since the Crawler started.
type Counts struct {
	TriggerReads int
	NotModified  int
	Deposits     int
	Excerpts     int
	Excluded     int
	Mismatches   int
	Failures     int
	Bytes        int64          // envelope bytes deposited
	Refusals     map[string]int // by reason: the chain's (robots, cooldown, …), and the publisher's statuses
	Passes       int
	Stopped      int // passes stopped by MaxFailures
}

type counts struct {
	sources map[string]*Counts
	hosts   map[string]*Counts
}

func (cs *counts) add(e *Event) {
	if cs.sources == nil {
		cs.sources, cs.hosts = map[string]*Counts{}, map[string]*Counts{}
	}
	for _, m := range []struct {
		m   map[string]*Counts
		key string
	}{{cs.sources, e.Source}, {cs.hosts, e.Host}} {
		if m.key == "" {
			continue
		}
		n := m.m[m.key]
		if n == nil {
			n = &Counts{Refusals: map[string]int{}}
			m.m[m.key] = n
		}
		switch e.Kind {
		case EventTriggerRead:
			n.TriggerReads++
		case EventNotModified:
			n.TriggerReads++
			n.NotModified++
		case EventDeposited:
			n.Deposits++
			n.Bytes += e.Bytes
		case EventExcerpted:
			n.Excerpts++
		case EventExcluded:
			n.Excluded++
		case EventMismatch:
			n.Mismatches++
		case EventRefused:
			n.Refusals[e.Reason]++
		case EventFailed:
			n.Failures++
			if e.Reason != "" {
				n.Refusals[e.Reason]++
			}
		case EventTriggerFailed:
			if e.Reason != "" && e.Reason != "error" {
				n.Refusals[e.Reason]++
			}
		case EventPassEnded:
			n.Passes++
		case EventPassStopped:
			n.Stopped++
		}
	}
}

// SourceCounts returns a copy of the tallies per source.
func (c *Crawler) SourceCounts() map[string]Counts { return c.copyCounts(true) }

// HostCounts returns a copy of the tallies per host.
func (c *Crawler) HostCounts() map[string]Counts { return c.copyCounts(false) }

func (c *Crawler) copyCounts(sources bool) map[string]Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.counts.hosts
	if sources {
		m = c.counts.sources
	}
	out := make(map[string]Counts, len(m))
	for k, v := range m {
		cv := *v
		cv.Refusals = maps.Clone(v.Refusals)
		out[k] = cv
	}
	return out
}

func (c *Crawler) emit(e Event) {
	c.mu.Lock()
	c.counts.add(&e)
	c.mu.Unlock()
	if c.OnEvent != nil {
		c.OnEvent(e)
	}
	if c.Logger == nil {
		return
	}
	level := slog.LevelDebug
	switch e.Kind {
	case EventPassEnded, EventTriggerRead, EventBacklogWalked, EventRefreshDeclined, EventWithdrawn, EventLeaseTakenOver:
		level = slog.LevelInfo
	case EventPassStopped, EventLeaseLost, EventMismatch, EventStoreError, EventTriggerFailed, EventBacklogFailed:
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{slog.String("source", e.Source)}
	add := func(k, v string) {
		if v != "" {
			attrs = append(attrs, slog.String(k, v))
		}
	}
	add("host", e.Host)
	add("url", e.URL)
	add("key", e.Key)
	add("reason", e.Reason)
	if e.Status != 0 {
		attrs = append(attrs, slog.Int("status", e.Status))
	}
	if e.Count != 0 {
		attrs = append(attrs, slog.Int("count", e.Count))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String("err", e.Err.Error()))
	}
	if p := e.Pass; p != nil {
		attrs = append(attrs, slog.Int("deposited", p.Deposited), slog.Int("excerpted", p.Excerpted),
			slog.Int("failed", p.Failed), slog.Int("refused", p.Refused))
	}
	c.Logger.LogAttrs(context.Background(), level, "crawl: "+e.Kind.String(), attrs...)
}
