package fetch

// Unconditional makes this Get unconditional: it carries no If-None-Match or
// If-Modified-Since from the validators the chain keeps for its URL, so the
// answer is never a 304, and it keeps no validators from its answer. It is
// for a caller that does not hold the resource, and keeps nothing the chain
// could make a later read conditional on: package crawl reads an article only
// while it is not yet deposited, so a 304 there would stand for nothing it
// has (a deposit that failed, or a process that stopped before depositing).
// A Get without it is conditional as the policy says.
func Unconditional() GetOption { return func(c *callInfo) { c.unconditional = true } }
