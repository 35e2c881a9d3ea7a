package crawl

import "context"

// Tally is what was done for one source, over every process that crawled
// it with the same State: the counters an operator's report shows.
//
// A [Tallier] counts some fields itself, in the same atomic operation as
// what they count: Reads in Attempt, the outcomes (Deposits, Excerpts,
// Excluded, Mismatches) when Settle — or a Deposits store sharing the
// State's file — settles a pending reference, DepositFailures in Failure.
// RobotsReads are counted by the robots store [CountRobots] wraps, with the
// record of each fetch (in one transaction where that store is a
// [RobotsTallier]). The Crawler adds the others through AddTally: they have
// no write of their own to share.
type Tally struct {
	Reads        int // article reads asked of the chain (State.Attempt); Refusals of them were never sent
	TriggerReads int // trigger reads answered (a feed's 304 included)
	NotModified  int // of them, feeds answered 304
	RobotsReads  int // robots.txt fetches made for the source's reads, counted by the Client's robots store wrapped in CountRobots; 0 without it
	ImageReads   int // share images checked (S7), one per story checked
	Deposits     int // articles deposited in full
	Excerpts     int // stories kept as their feed's excerpt
	Excluded     int // gated, or nothing that may be kept
	Mismatches   int // identifiers disagreed
	Refusals     int // article reads the chain refused before sending (robots.txt, a cool-down, …)
	// Failures are article reads that reached the publisher, or were
	// meant to, and brought nothing to deposit: not a complete 200, or
	// failed in transport. A read cut short by its context's end (a
	// Ctrl-C, a lost lease) is not one.
	Failures int
	// DepositFailures are our own failures to deposit: the Deposits store
	// failing or refusing a write.
	DepositFailures int
}

// Add adds d to t.
func (t *Tally) Add(d Tally) {
	t.Reads += d.Reads
	t.TriggerReads += d.TriggerReads
	t.NotModified += d.NotModified
	t.RobotsReads += d.RobotsReads
	t.ImageReads += d.ImageReads
	t.Deposits += d.Deposits
	t.Excerpts += d.Excerpts
	t.Excluded += d.Excluded
	t.Mismatches += d.Mismatches
	t.Refusals += d.Refusals
	t.Failures += d.Failures
	t.DepositFailures += d.DepositFailures
}

// Tallier is a State that keeps each source's [Tally], so that a report
// read after the crawl (or after a kill -9) counts what every process did.
// It is optional: a Crawler whose State is not one keeps no tally in it
// (SourceCounts still counts what this Crawler did). MemoryState and
// store/sqlite's CrawlState are Talliers.
type Tallier interface {
	// AddTally adds d to the source's tally, in one atomic operation.
	AddTally(ctx context.Context, source string, d Tally) error
	// Tally returns the source's tally; the zero Tally for a source never
	// crawled or forgotten.
	Tally(ctx context.Context, source string) (Tally, error)
}

// outcomeTally is the tally of one reference settled as o.
func outcomeTally(o Outcome) Tally {
	switch o {
	case Deposited:
		return Tally{Deposits: 1}
	case Excerpted:
		return Tally{Excerpts: 1}
	case Excluded:
		return Tally{Excluded: 1}
	case Mismatch:
		return Tally{Mismatches: 1}
	}
	return Tally{}
}

// addTally adds d to src's tally when the State is a Tallier; a failure
// to is an EventStoreError, not the pass's.
func (c *Crawler) addTally(ctx context.Context, src string, d Tally) {
	t, ok := c.state.(Tallier)
	if !ok || d == (Tally{}) {
		return
	}
	if err := t.AddTally(context.WithoutCancel(ctx), src, d); err != nil {
		c.emit(Event{Kind: EventStoreError, Source: src, Err: err})
	}
}
