package fetch

// GetOptions are one Get's particulars (or those of every read of a
// [Client.Doer], and of an [Client.Explain] or a [Client.SaveValidators]
// standing for such a read). The zero GetOptions is a read as the policy
// says, and so is a call given none.
//
// A call given several merges them in order: each non-zero field of a later
// value replaces the earlier one's, and a zero field leaves it as it was, so
// a value kept for many calls (a source's) combines with one call's own. A
// field set to its zero value cannot undo an earlier value's.
type GetOptions struct {
	// Kind says what the call is for. Zero: KindArticle, the zero Kind (a
	// Doer's reads: the Doer's kind), which therefore never replaces an
	// earlier value's Kind.
	Kind Kind

	// Source applies a source's admitted hosts, declared parameters and
	// credential to the call instead of the policy's. nil: the policy's.
	// The Source is only read, by any number of calls at once; it must not
	// change while a call that uses it is in flight. Host lists already in
	// key form (lower case, IDNA A-labels, no default port) are used as
	// they are; any other list is normalised for each call, on a copy.
	Source *Source

	// Referer is sent as the Referer (an image's article page). It is sent
	// on every hop of this Get, and by nothing else. Empty: no Referer.
	Referer string

	// MaxBody lowers the policy's MaxWire and MaxDecoded to MaxBody bytes
	// for this Get, for a read that must stay small whatever the policy
	// allows (a share image checked before a story links to it). It never
	// raises them; zero or negative: the policy's caps. A body past the cap
	// fails as the policy's caps do, with ErrWireTooLarge or
	// ErrDecodedTooLarge, once MaxBody bytes have been read.
	MaxBody int64

	// Unconditional makes this Get unconditional: it carries no
	// If-None-Match or If-Modified-Since from the validators the chain
	// keeps for its URL, so the answer is never a 304, and it keeps no
	// validators from its answer. It is for a caller that does not hold
	// the resource, and keeps nothing the chain could make a later read
	// conditional on: package crawl reads an article only while it is not
	// yet deposited, so a 304 there would stand for nothing it has (a
	// deposit that failed, or a process that stopped before depositing).
	// False: the Get is conditional as the policy says.
	Unconditional bool

	// DeferValidators makes a Get, or every Do of a [Client.Doer],
	// conditional as usual but keeps none of the validators of its answer:
	// the validators kept for the URL are sent, so an unchanged resource
	// still answers 304, but a 200's ETag and Last-Modified are left in its
	// header for the caller, who keeps them with [Client.SaveValidators]
	// once it has recorded what it learnt from the body.
	//
	// It is for a caller whose record of a resource's content is written
	// after the read: were the chain to keep the validators as soon as the
	// body is read, a process that stopped between the read and the record
	// would, after a restart, be answered 304 for content it never
	// recorded, and would not learn it until the resource changed. Package
	// crawl reads its feeds and backlog lists this way. With Unconditional
	// it changes nothing (no validator is sent or kept); under a policy
	// with NoConditional neither. False: the chain keeps the validators of
	// a 200 as soon as its body is read.
	DeferValidators bool
}

// merge returns o with each non-zero field of later in its place.
func (o GetOptions) merge(later *GetOptions) GetOptions {
	if later.Kind != KindArticle {
		o.Kind = later.Kind
	}
	if later.Source != nil {
		o.Source = later.Source
	}
	if later.Referer != "" {
		o.Referer = later.Referer
	}
	if later.MaxBody != 0 {
		o.MaxBody = later.MaxBody
	}
	o.Unconditional = o.Unconditional || later.Unconditional
	o.DeferValidators = o.DeferValidators || later.DeferValidators
	return o
}

// keyedSource returns s if its host lists are in key form, else a copy of s
// with them normalised.
func keyedSource(s *Source) *Source {
	if keyedList(s.Admitted) && keyedList(s.Credential.Hosts) {
		return s
	}
	n := *s
	n.Admitted = normalizeList(s.Admitted)
	n.Credential.Hosts = normalizeList(s.Credential.Hosts)
	return &n
}

// keyedList reports whether normalizeList would return hosts unchanged.
func keyedList(hosts []string) bool {
	for _, h := range hosts {
		if hostPattern(h) != h {
			return false
		}
	}
	return true
}
