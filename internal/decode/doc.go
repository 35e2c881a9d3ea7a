// Package decode reads a response body within bounds and removes its
// content-codings: every response's size is bounded, and only a body
// received in full, with a known coding and a media type, is deposited.
//
// [Read] caps the bytes read off the wire and the bytes decoded separately,
// detects truncation, and decodes gzip, deflate, br and zstd (window capped
// at 8 MiB), last applied first; anything else is an [*UnknownCodingError].
// [MediaType] reads the Content-Type a deposit requires.
//
// Work is bounded as well as memory: at most [MaxCodings] codings are removed
// from one body (a longer Content-Encoding is refused before the body is read),
// every stage of decoding stops at MaxDecoded (so a gzip bomb costs about twice
// the caps, not what it inflates to), and [ReadContext] stops decoding when its
// context ends, since inflating is CPU work no connection deadline interrupts.
package decode
