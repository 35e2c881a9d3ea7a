package provenance_test

import (
	"errors"
	"fmt"

	"github.com/politefetch/politefetch/provenance"
)

// Verify a proof offline against a root pool, then see a tampered envelope
// refused with its own reason. (The proof comes from the test PKI; in
// production, leave VerifyOptions.Roots nil to use the pinned bundle.)
func ExampleVerify() {
	proof, env, opts := fixture(newPKI())

	v, err := provenance.Verify(proof, env, opts)
	if err != nil {
		fmt.Println("refused:", err)
		return
	}
	fmt.Println(v.FinalURL, "read at", v.ReadAt.Format(provenance.TimeFormat))
	fmt.Println("host:", v.Host, "anchor:", v.Anchor.Subject)
	fmt.Println(provenance.Scope)

	env[0] ^= 1
	_, err = provenance.Verify(proof, env, opts)
	fmt.Println("tampered:", errors.Is(err, provenance.ErrDigestMismatch))
	// Output:
	// https://news.example/article read at 2026-02-14T10:30:00.123456789Z
	// host: news.example anchor: CN=Politefetch Test Root,O=politefetch
	// This attests control of the domain at that instant and nothing more: no revocation check was made, and it is not a signature by the publisher.
	// tampered: true
}

func ExampleDigestOf() {
	fmt.Println(provenance.DigestOf([]byte("hello\n")))
	// Output:
	// sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03
}
