package provenance_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/politefetch/politefetch/provenance"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update to refresh):\n got: %s\nwant: %s", name, got, want)
	}
}

func indent(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestProofJSON_Golden fixes the "provenance/v1" encoding: field names, the
// instant format, and that decoding and re-encoding gives the same bytes.
func TestProofJSON_Golden(t *testing.T) {
	t.Parallel()
	p, _, _ := fixture(newPKI())
	got := indent(t, p)
	golden(t, "proof.golden.json", got)

	var back provenance.Proof
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, p) {
		t.Errorf("decoded proof differs:\n got %+v\nwant %+v", back, *p)
	}
	if again := indent(t, &back); !bytes.Equal(again, got) {
		t.Errorf("re-encoded proof differs:\n%s\n%s", again, got)
	}
	compact, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(compact, []byte(`"read_at":"2026-02-14T10:30:00.123456789Z"`)) {
		t.Errorf("read_at not in the fixed format: %s", compact)
	}
}

// TestVerdict_V6_Golden fixes what a successful verification states.
func TestVerdict_V6_Golden(t *testing.T) {
	t.Parallel()
	p, env, opts := fixture(newPKI())
	v, err := provenance.Verify(p, env, opts)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "verdict.golden.json", indent(t, v))
}

// TestVerify_V6_Fixture breaks the fixed proof one way at a time and records
// each reason in a golden file, so a change of message is seen in review.
func TestVerify_V6_Fixture(t *testing.T) {
	t.Parallel()
	k := newPKI()
	cases := []struct {
		name   string
		mutate func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions)
		want   error
	}{
		{"valid", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) {}, nil},
		{"bad schema", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { p.Schema = "provenance/v2" }, provenance.ErrSchema},
		{"no read instant", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { p.ReadAt = time.Time{} }, provenance.ErrSchema},
		{"digest in upper hex", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) {
			p.Digest = "sha256:" + "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"
		}, provenance.ErrSchema},
		{"no hops", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { p.Hops = nil }, provenance.ErrSchema},
		{"expired", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { p.ReadAt = afterExpiry }, provenance.ErrExpired},
		{"not yet valid", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) {
			p.ReadAt = beforeValidity
			for i := range p.Hops {
				p.Hops[i].HandshakeAt = beforeValidity
			}
		}, provenance.ErrNotYetValid},
		{"handshake after the read", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) {
			p.Hops[1].HandshakeAt = p.ReadAt.Add(time.Second)
		}, provenance.ErrHopsBroken},
		{"untrusted root", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { o.Roots = nil }, provenance.ErrChainUntrusted},
		{"missing intermediate", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) {
			p.Hops[2].Chain = p.Hops[2].Chain[:1]
		}, provenance.ErrMissingIntermediate},
		{"last hop a redirect", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { p.Hops[2].Status = 302 }, provenance.ErrHopsBroken},
		{"middle hop not a redirect", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { p.Hops[1].Status = 200 }, provenance.ErrHopsBroken},
		{"tampered envelope", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { (*env)[0] = 'X' }, provenance.ErrDigestMismatch},
		{"wrong length", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { p.Length++ }, provenance.ErrLengthMismatch},
		{"certificate not base64", func(p *provenance.Proof, env *[]byte, o *provenance.VerifyOptions) { p.Hops[0].Chain[0] = "%%%" }, provenance.ErrSchema},
	}
	var report bytes.Buffer
	for _, tc := range cases {
		p, env, opts := fixture(k)
		tc.mutate(p, &env, &opts)
		_, err := provenance.Verify(p, env, opts)
		if tc.want == nil && err != nil || !errors.Is(err, tc.want) {
			t.Errorf("%s: Verify = %v, want %v", tc.name, err, tc.want)
		}
		msg := "ok"
		if err != nil {
			msg = err.Error()
		}
		report.WriteString(tc.name + ": " + msg + "\n")
	}
	golden(t, "failures.golden.txt", report.Bytes())
}
