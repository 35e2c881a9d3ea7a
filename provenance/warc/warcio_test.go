package warc_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWARC_IndependentReader checks the golden WARC files with an
// independent reader, webrecorder's warcio (npm), through
// testdata/warcio-check.mjs. It needs node and an installed warcio, named by
// PROVENANCE_WARCIO (the package's directory, e.g. DIR/node_modules/warcio
// after `npm install --prefix DIR warcio@2.4.11`); without them it is skipped.
func TestWARC_IndependentReader(t *testing.T) {
	dir := os.Getenv("PROVENANCE_WARCIO")
	if dir == "" {
		t.Skip("PROVENANCE_WARCIO not set: no independent WARC reader to run")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	cmd := exec.Command(node, filepath.Join("testdata", "warcio-check.mjs"), dir,
		filepath.Join("testdata", "fixture.warc"), filepath.Join("testdata", "fixture.warc.gz"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("warcio-check: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "warcio-check: all records valid") {
		t.Errorf("warcio-check did not report all records valid:\n%s", out)
	}
}
