// Package decode reads a response body within bounds and removes its
// content-codings (V10: every response's size is bounded; V12: only a body
// received in full, with a known coding and a media type, is deposited).
//
// [Read] caps the bytes read off the wire and the bytes decoded separately,
// detects truncation, and decodes gzip, deflate, br and zstd, last applied
// first; anything else is an [*UnknownCodingError]. [MediaType] reads the
// Content-Type a deposit requires.
package decode
