// Package netguard keeps politefetch's connections on the public Internet
// (V10: never connect to a non-public IP address) and caches DNS answers
// locally (D8).
//
// [IsPublic] judges one address against a table of special-purpose ranges
// (see [Ranges]); a [Guard] adds an explicit allow-list for tests and private
// deployments; a [Dialer] resolves a name, drops the blocked addresses, dials
// a checked IP (never the name, so a second lookup cannot rebind it) and
// checks the address again at connect time. A [DNSCache] answers repeated
// lookups from memory, with one lookup in flight per name.
package netguard
