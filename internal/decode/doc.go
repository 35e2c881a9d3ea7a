// Package decode reads a response body within bounds and removes its
// content-codings (V10: every response's size is bounded; V12: only a body
// received in full, with a known coding and a media type, is deposited).
//
// [Read] caps the bytes read off the wire and the bytes decoded separately,
// detects truncation, and decodes gzip, deflate, br and zstd (window capped
// at 8 MiB), last applied first; anything else is an [*UnknownCodingError].
// [MediaType] reads the Content-Type a deposit requires.
//
// # Figures
//
// Measured with
//
//	go test -run XXX -bench . -benchmem ./internal/decode
//
// on a shared 2-core machine: refusing a 64 MiB gzip bomb (65 KiB on the
// wire) under a 1 MiB MaxDecoded allocates 1.17 MB in 15 allocations and
// takes about 1–2.5 ms; reading an 8.6 KB gzipped page allocates 74 KB in 11
// allocations (32 KiB of it is the inflater's window).
package decode
