package provenance_test

import (
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/politefetch/politefetch/provenance"
)

// FuzzVerify feeds arbitrary proof JSON and envelopes to Verify: it must
// never panic, and it returns either a verdict or a *CheckError.
func FuzzVerify(f *testing.F) {
	k := newPKI()
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, envelope)
	}
	f.Add([]byte(`{"schema":"provenance/v1","hops":[{}]}`), []byte{})
	f.Add([]byte(`{"schema":"provenance/v1","requested_url":"https://a.example/","final_url":"https://a.example/","read_at":"2026-01-01T00:00:00Z","hops":[{"url":"https://a.example/","status":200,"connected_ip":"1.1.1.1","chain":["AAAA"]}],"digest":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}`), []byte{})
	pools := []provenance.VerifyOptions{
		{Roots: k.Pool},
		{Roots: k.Pool, MaxHops: 2, AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		{}, // the pinned bundle
	}
	f.Fuzz(func(t *testing.T, proofJSON, env []byte) {
		var p provenance.Proof
		if err := json.Unmarshal(proofJSON, &p); err != nil {
			return
		}
		for _, opts := range pools {
			v, err := provenance.Verify(&p, env, opts)
			if (v == nil) == (err == nil) {
				t.Fatalf("Verify returned verdict %v and error %v", v, err)
			}
			var ce *provenance.CheckError
			if err != nil && !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *CheckError: %v", err, err)
			}
		}
	})
}
