package provenance

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// DigestPrefix begins every digest this package produces.
const DigestPrefix = "sha256:"

// DigestOf returns "sha256:<lower hex>" of envelope.
func DigestOf(envelope []byte) string {
	sum := sha256.Sum256(envelope)
	return DigestPrefix + hex.EncodeToString(sum[:])
}

// Digest hashes an envelope as it streams. Write to it, then read [Digest.Sum]
// and [Digest.Len]. Use [NewDigest]; a Digest is not safe for concurrent use.
type Digest struct {
	h hash.Hash
	n int64
}

// NewDigest returns an empty Digest.
func NewDigest() *Digest { return &Digest{h: sha256.New()} }

// Write adds p to the digest. It never returns an error.
func (d *Digest) Write(p []byte) (int, error) {
	d.n += int64(len(p))
	return d.h.Write(p)
}

// Sum returns "sha256:<lower hex>" of the bytes written so far.
func (d *Digest) Sum() string { return DigestPrefix + hex.EncodeToString(d.h.Sum(nil)) }

// Len returns the number of bytes written so far.
func (d *Digest) Len() int64 { return d.n }
