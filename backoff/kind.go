package backoff

import "strconv"

// Kind says what a request is for. A suspended host refuses articles but
// still lets feeds and robots.txt keep their own schedule, so the ledger
// needs to know which is which. It is the one Kind of politefetch: package
// fetch names it too (fetch.Kind is this type).
//
// Kinds weigh differently: a refusal of an article (or image) is cleared
// only by a successful article, a refusal of a feed (or sitemap, or API
// list) by a successful feed or article (see [Ledger.Observe]); robots.txt
// weighs least. Suspension binds the article kinds only.
//
// The zero Kind is [Article], the most restricted.
type Kind uint8

const (
	// Article is a page or an API document: anything not named below. It
	// is the zero Kind.
	Article Kind = iota
	// Feed is an RSS, Atom or JSON feed.
	Feed
	// Robots is a robots.txt file.
	Robots
	// Image is a share image: an article for the ledger.
	Image
	// Sitemap is a sitemap or sitemap index: a feed for the ledger.
	Sitemap
	// API is a list from a publisher's API (a WordPress REST page, a JSON
	// backlog): a feed for the ledger.
	API
)

// weight orders kinds by how much a refusal of them weighs.
func (k Kind) weight() int {
	switch k {
	case Robots:
		return 0
	case Feed, Sitemap, API:
		return 1
	default:
		return 2
	}
}

// article reports whether k is read as an article: the kinds a suspension
// refuses.
func (k Kind) article() bool { return k.weight() == 2 }

// String returns "article", "feed", "robots", "image", "sitemap" or "api".
func (k Kind) String() string {
	switch k {
	case Article:
		return "article"
	case Feed:
		return "feed"
	case Robots:
		return "robots"
	case Image:
		return "image"
	case Sitemap:
		return "sitemap"
	case API:
		return "api"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Reason says why [Ledger.Check] refused a request, or, for an allowed one,
// whether it was the daily re-check of a suspended host.
type Reason uint8

const (
	// None: nothing stands in the way.
	None Reason = iota
	// Cooldown: the host refused us or asked us to wait, and its
	// cool-down has not ended.
	Cooldown
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
	case Cooldown:
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
