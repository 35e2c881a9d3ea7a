package warc_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestWARC_FetchCompilesNoWARCLibrary: the WARC library and what it pulls
// in (gowarc, uuid, whatwg-url, bitset) are this package's alone; the fetch
// chain, and so every program that imports it, compiles none of them.
func TestWARC_FetchCompilesNoWARCLibrary(t *testing.T) {
	t.Parallel()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies with")
	}
	for _, pkg := range []string{"github.com/politefetch/politefetch/fetch", "github.com/politefetch/politefetch/provenance"} {
		out, err := exec.Command(gobin, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, lib := range []string{"github.com/nlnwa/", "github.com/google/uuid", "github.com/bits-and-blooms/"} {
				if strings.HasPrefix(dep, lib) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
	// And the check can fail: this package does depend on them.
	out, err := exec.Command(gobin, "list", "-deps", "github.com/politefetch/politefetch/provenance/warc").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "github.com/nlnwa/gowarc") {
		t.Fatalf("go list -deps provenance/warc does not list gowarc: %v\n%s", err, out)
	}
}
