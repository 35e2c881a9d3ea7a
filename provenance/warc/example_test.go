package warc_test

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/provenance/internal/testpki"
	"github.com/politefetch/politefetch/provenance/warc"
)

// Archive a deposit as WARC 1.1, read it back, and verify it again.
func ExampleWrite() {
	proof, env, opts := testpki.Fixture(testpki.New())
	var file bytes.Buffer
	err := warc.Write(&file, warc.Deposit{
		Proof:          proof,
		Envelope:       env,
		Status:         200,
		RequestHeader:  http.Header{"User-Agent": {"example/1"}, "Accept": {"text/html"}, "Accept-Encoding": {"identity"}},
		ResponseHeader: http.Header{"Content-Type": {"text/html; charset=utf-8"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for d, err := range warc.Read(&file) {
		if err != nil {
			fmt.Println(err)
			return
		}
		_, err := provenance.Verify(d.Proof, d.Envelope, opts)
		fmt.Println(d.Status, d.Proof.FinalURL, len(d.Envelope), "bytes, verifies:", err == nil)
	}
	// Output:
	// 200 https://news.example/article 78 bytes, verifies: true
}
