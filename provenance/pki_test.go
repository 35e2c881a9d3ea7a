package provenance_test

import "github.com/politefetch/politefetch/provenance/internal/testpki"

// The test PKI and fixed proof live in internal/testpki, shared with
// package provenance/warc's tests.

type pki = testpki.PKI

var (
	newPKI         = testpki.New
	sha256Hex      = testpki.SHA256Hex
	fixture        = testpki.Fixture
	readAt         = testpki.ReadAt
	afterExpiry    = testpki.AfterExpiry
	beforeValidity = testpki.BeforeValidity
	envelope       = testpki.Envelope
)
