// Package hostkey turns host names into the one key every per-host decision
// uses: pacing, the back-off ledger, robots.txt and validators.
//
// Host names are normalised before any per-host decision: lower case, IDNA
// A-labels (golang.org/x/net/idna, Lookup profile), the scheme's default port
// dropped, a trailing dot removed and IPv6 literals bracketed in their
// canonical form, so "Example.COM:443", "example.com." and "example.com" share
// one budget. [Site] groups hosts by registrable domain (eTLD+1) for policies
// that pace "per site".
//
// A host that is already its own key (a lower-case ASCII DNS name without
// port or trailing dot, or a canonical IPv4 literal) is returned as is
// without allocating, since the fetch chain normalises every request's host:
//
//	go test -run='^$' -bench=Normalize -benchmem ./internal/hostkey/
//
// Every function is pure and safe for concurrent use.
package hostkey
