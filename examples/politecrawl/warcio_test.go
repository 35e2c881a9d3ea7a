package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A WARC file export writes is read by an independent reader, webrecorder's
// warcio, through provenance/warc's checker script. Like that package's
// test it needs node and warcio, named by PROVENANCE_WARCIO; without them it
// is skipped.
func TestExport_WARCIndependentReader(t *testing.T) {
	dir := os.Getenv("PROVENANCE_WARCIO")
	if dir == "" {
		t.Skip("PROVENANCE_WARCIO not set: no independent WARC reader to run")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	sw := newSimWeb(t, 2, 2)
	tmp := t.TempDir()
	store := filepath.Join(tmp, "vault.db")
	cfg := readyConfig("vault")
	if r := politecrawl(t, nil, append([]string{"crawl", "-config", cfg, "-store", store, "-once"}, sw.flags...)...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var files []string
	for _, name := range []string{"deposits.warc", "deposits.warc.gz"} {
		f := filepath.Join(tmp, name)
		if r := politecrawl(t, nil, "export", "-config", cfg, "-store", store, "-format", "warc", "-o", f); r.code != 0 {
			t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
		}
		files = append(files, f)
	}
	script := filepath.Join("..", "..", "provenance", "warc", "testdata", "warcio-check.mjs")
	out, err := exec.Command(node, append([]string{script, dir}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("warcio-check: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "warcio-check: all records valid") {
		t.Errorf("warcio-check did not report all records valid:\n%s", out)
	}
}
