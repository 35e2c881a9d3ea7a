// Package sniff decides what a body is from its bytes, never from what its
// Content-Type header claims. It is the one place politefetch sniffs
// content.
//
// [Image] accepts exactly the four image formats a share image may be (JPEG,
// PNG, WebP and GIF): first the format's magic number at the start of the
// body, then the format's own header decoder for the dimensions, which reads
// the header only and never the pixels. Each decoder is called directly, not
// through the image package's format registry, so nothing here depends on
// which decoders some other package registered.
package sniff
