package warc_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/politefetch/politefetch/provenance/warc"
)

// FuzzRead feeds arbitrary bytes to Read: it must never panic, and
// every deposit it yields has a proof.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"fixture.warc", "fixture.warc.gz"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("WARC/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for d, err := range warc.Read(bytes.NewReader(b)) {
			if err == nil && d.Proof == nil {
				t.Fatal("deposit without proof and without error")
			}
		}
	})
}
