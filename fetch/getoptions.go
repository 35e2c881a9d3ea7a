package fetch

// GetOption sets one Get's particulars (or those of every read of a
// [Client.Doer], and of an [Client.Explain] or a [Client.SaveValidators]
// standing for such a read). The options are gathered here; each says
// what it changes.
type GetOption func(*callInfo)

// AsKind says what the Get is for (default KindArticle).
func AsKind(k Kind) GetOption { return func(c *callInfo) { c.kind = k } }

// WithReferer sends page as the Referer (an image's article page). It is sent
// on every hop of this Get, and by nothing else.
func WithReferer(page string) GetOption { return func(c *callInfo) { c.referer = page } }

// WithSource applies a source's admitted hosts, declared parameters and
// credential to this Get instead of the policy's. The option may be used by
// any number of Gets at once: s is copied and read only.
func WithSource(s Source) GetOption {
	s.Admitted = normalizeList(s.Admitted)
	s.Credential.Hosts = normalizeList(s.Credential.Hosts)
	return func(c *callInfo) { c.source = &s }
}

// WithMaxBody lowers the policy's MaxWire and MaxDecoded to n bytes for this
// Get, for a read that must stay small whatever the policy allows (a share
// image checked before a story links to it). It never raises them; n <= 0
// leaves the policy's caps. A body past the cap fails as the policy's caps do,
// with ErrWireTooLarge or ErrDecodedTooLarge, once n bytes have been read.
func WithMaxBody(n int64) GetOption { return func(c *callInfo) { c.maxBody = n } }

// DeferValidators makes a Get, or every Do of a [Client.Doer], conditional
// as usual but keeps none of the validators of its answer: the validators
// kept for the URL are sent, so an unchanged resource still answers 304, but
// a 200's ETag and Last-Modified are left in its header for the caller, who
// keeps them with [Client.SaveValidators] once it has recorded what it learnt
// from the body.
//
// It is for a caller whose record of a resource's content is written after
// the read: were the chain to keep the validators as soon as the body is
// read, a process that stopped between the read and the record would, after
// a restart, be answered 304 for content it never recorded, and would not
// learn it until the resource changed. Package crawl reads its feeds and
// backlog lists this way. With [Unconditional] it changes nothing (no
// validator is sent or kept); under a policy with NoConditional neither.
func DeferValidators() GetOption { return func(c *callInfo) { c.deferred = true } }

// Unconditional makes this Get unconditional: it carries no If-None-Match or
// If-Modified-Since from the validators the chain keeps for its URL, so the
// answer is never a 304, and it keeps no validators from its answer. It is
// for a caller that does not hold the resource, and keeps nothing the chain
// could make a later read conditional on: package crawl reads an article only
// while it is not yet deposited, so a 304 there would stand for nothing it
// has (a deposit that failed, or a process that stopped before depositing).
// A Get without it is conditional as the policy says.
func Unconditional() GetOption { return func(c *callInfo) { c.unconditional = true } }
