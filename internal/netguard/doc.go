// Package netguard keeps politefetch's connections on the public Internet
// (never connect to a non-public IP address) and caches DNS answers
// locally.
//
// [IsPublic] judges one address against a table of special-purpose ranges
// (see [Ranges]); a [Guard] adds an explicit allow-list for tests and private
// deployments; a [Dialer] resolves a name, drops the blocked addresses, dials
// a checked IP (never the name, so a second lookup cannot rebind it) and
// checks the address again at connect time. A [DNSCache] answers repeated
// lookups from memory, with one lookup in flight per name.
//
// The table covers every range of the fetch issue and everything
// code.dny.dev/ssrf v0.3.0 denies (a test checks both), as plain data with
// a name per range, so a refusal says which range it hit. The package has
// no mutable global state. IsPublic allocates nothing, so the check costs
// nothing measurable beside a connection; a cached answer is a map lookup.
package netguard
