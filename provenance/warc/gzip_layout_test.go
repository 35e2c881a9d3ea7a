package warc_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"testing"

	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/provenance/internal/testpki"
	"github.com/politefetch/politefetch/provenance/warc"
)

// regzip is what `zcat f.warc.gz | gzip` makes: the whole file as one gzip
// member instead of one member per record.
func regzip(t *testing.T, perRecord []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(perRecord))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(plain)
	zw.Close()
	return out.Bytes()
}

// Every valid gzip layout reads the same: one member per record (as the
// Writer writes), and the whole file re-compressed as a single member.
// Tampering inside a single-member file is still found.
func TestWARC_V5_SingleGzipMemberReadsAndTamperingIsFound(t *testing.T) {
	t.Parallel()
	deps, opts := fixtureDeposits(testpki.New())
	var perRecord bytes.Buffer
	w := &warc.Writer{W: &perRecord, Gzip: true}
	for _, d := range deps {
		if err := w.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	one := regzip(t, perRecord.Bytes())
	n := 0
	for d, err := range warc.Read(bytes.NewReader(one)) {
		if err != nil {
			t.Fatalf("single-member gzip: %v", err)
		}
		if _, err := provenance.Verify(d.Proof, d.Envelope, opts); err != nil {
			t.Errorf("deposit %d read from a single member does not verify: %v", n, err)
		}
		n++
	}
	if n != len(deps) {
		t.Fatalf("single-member gzip: read %d deposits, want %d", n, len(deps))
	}

	// The same file with a word of the envelope changed, re-compressed.
	zr, _ := gzip.NewReader(bytes.NewReader(one))
	plain, _ := io.ReadAll(zr)
	i := bytes.Index(plain, []byte("The council"))
	if i < 0 {
		t.Fatal("the fixture's text is not in the WARC")
	}
	plain[i] = 't'
	var tampered bytes.Buffer
	zw := gzip.NewWriter(&tampered)
	zw.Write(plain)
	zw.Close()
	var readErr error
	good := 0
	for d, err := range warc.Read(bytes.NewReader(tampered.Bytes())) {
		if err != nil {
			readErr = err
			continue
		}
		if _, err := provenance.Verify(d.Proof, d.Envelope, opts); err == nil {
			good++
		}
	}
	if !errors.Is(readErr, warc.ErrInvalid) {
		t.Fatalf("a tampered single-member WARC: %v (%d deposits verified), want ErrInvalid", readErr, good)
	}
}

// An empty input holds no deposit: Read yields nothing, and no error.
func TestWARC_EmptyYieldsNothing(t *testing.T) {
	t.Parallel()
	for d, err := range warc.Read(bytes.NewReader(nil)) {
		t.Fatalf("empty input yielded %+v, %v", d, err)
	}
}
