package backoff

import "strconv"

// Kind says what a request is for. A suspended host refuses articles but
// still lets feeds and robots.txt keep their own schedule, so the ledger
// needs to know which is which.
//
// Kinds are ordered by how much a refusal of them weighs: a refusal of an
// article is cleared only by a successful article, while a refusal of a feed
// is cleared by a successful feed or article (see [Ledger.Observe]).
//
// The zero Kind is [Article], the most restricted.
type Kind uint8

const (
	// Article is a page, an API document, an image: anything that is not a
	// feed or robots.txt. It is the zero Kind.
	Article Kind = iota
	// Feed is an RSS or Atom feed, a sitemap or a backlog list.
	Feed
	// Robots is a robots.txt file.
	Robots
)

// weight orders kinds by how much a refusal of them weighs.
func (k Kind) weight() int {
	switch k {
	case Robots:
		return 0
	case Feed:
		return 1
	default:
		return 2
	}
}

// String returns "article", "feed" or "robots".
func (k Kind) String() string {
	switch k {
	case Article:
		return "article"
	case Feed:
		return "feed"
	case Robots:
		return "robots"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Reason says why [Ledger.Check] refused a request, or, for an allowed one,
// whether it was the daily re-check of a suspended host.
type Reason uint8

const (
	// None: nothing stands in the way.
	None Reason = iota
	// CoolingDown: the host refused us or asked us to wait, and its
	// cool-down has not ended.
	CoolingDown
	// Suspended: the host refused too many requests in a row; its articles
	// are off until the next daily re-check.
	Suspended
	// Recheck: the request is allowed as the suspended host's daily re-check
	// (only with Decision.Allowed true).
	Recheck
	// Unavailable: the Store could not answer, so the request is refused
	// (the ledger never fails open).
	Unavailable
)

// String returns a short lowercase name such as "cooling down".
func (r Reason) String() string {
	switch r {
	case None:
		return "none"
	case CoolingDown:
		return "cooling down"
	case Suspended:
		return "suspended"
	case Recheck:
		return "daily re-check"
	case Unavailable:
		return "ledger unavailable"
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}
