// Package provenance records and checks proofs of fetch: which https address
// was read, when, over which TLS connection, with which certificate chain as
// the server presented it, and the SHA-256 digest of the envelope (the body
// after removing its content-codings).
//
// A [Proof] is filled by the fetch chain, one [Hop] per request (built with
// [HopFromTLS] from each hop's [tls.ConnectionState]), and serialised as the
// stable JSON schema "provenance/v1".
//
// [Verify] is a pure function of the proof, the envelope bytes and a root
// pool. By default the pool is the pinned bundle from
// golang.org/x/crypto/x509roots/fallback/bundle ([PinnedRoots]), never the
// system store, so a verification gives the same answer on any machine and
// years later. Every failed check returns a [*CheckError] naming the hop and
// the check, wrapping one sentinel error (such as [ErrExpired] or
// [ErrNameMismatch]) that [errors.Is] can match.
//
// A proof attests that a server holding a certificate for the domain, valid at
// the read instant and chaining to a recognised root, served those bytes at
// that instant. It attests control of the domain at that instant and nothing
// more: no revocation status is checked, and it is not a signature by the
// publisher.
//
// Package provenance/warc exports deposits (envelope, headers and proof) as
// WARC 1.1 files; it lives apart so that importers of the fetch chain do not
// compile a WARC library.
package provenance
