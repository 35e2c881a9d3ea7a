package decode_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"net/http"

	"github.com/politefetch/politefetch/internal/decode"
)

func Example() {
	var wire bytes.Buffer
	zw := gzip.NewWriter(&wire)
	zw.Write([]byte("<p>Hello, polite world.</p>"))
	zw.Close()

	b, err := decode.Read(&wire, int64(wire.Len()), []string{"gzip"}, decode.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s (%d bytes decoded, removed %v)\n", b.Envelope, b.Decoded, b.Removed)

	_, err = decode.Read(bytes.NewReader([]byte("...")), 3, []string{"compress"}, decode.Limits{})
	fmt.Println(errors.Is(err, decode.ErrUnknownCoding), err)

	fmt.Println(decode.MediaType(http.Header{"Content-Type": {"text/html; charset=utf-8"}}))
	fmt.Println(decode.MediaType(http.Header{}))
	// Output:
	// <p>Hello, polite world.</p> (27 bytes decoded, removed [gzip])
	// true decode: unknown content-coding "compress"
	// text/html true
	//  false
}
