package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// build -store with a bare file name and no -config reads the store (its
// SQLite URI is built by store/sqlite, escaped); a window too short for any
// story gives an empty digest that says why; a config with a mistyped key
// is refused at its line.
func TestBuild_BareStoreNameWindowAndStrictConfig(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"build", "-demo", "-store", filepath.Join(dir, "demo.db"), "-out", filepath.Join(dir, "d.html")}, &out, &errOut); code != 0 {
		t.Fatalf("build -demo: exit %d: %s%s", code, out.String(), errOut.String())
	}
	t.Chdir(dir)
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), []string{"build", "-store", "demo.db", "-out", "d2.html"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "24 stories") {
		t.Fatalf("build -store demo.db: exit %d: %s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"build", "-store", "demo.db", "-out", "d3.html", "-window", "1ms"}, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "0 stories") || !strings.Contains(out.String(), "the digest is empty: 24 stories in the store, but the newest was published") ||
		!strings.Contains(out.String(), "beyond -window 1ms") {
		t.Errorf("build -window 1ms: exit %d: %s%s", code, out.String(), errOut.String())
	}
	cfg := "store:\n  path: demo.db\nsources:\n  - id: s1\n    nmae: Typo\n"
	if err := os.WriteFile("sources.yaml", []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	errOut.Reset()
	if code := run(context.Background(), []string{"build", "-config", "sources.yaml", "-out", "d4.html"}, &out, &errOut); code == 0 ||
		!strings.Contains(errOut.String(), "line 5") || !strings.Contains(errOut.String(), "nmae") {
		t.Errorf("a mistyped key: exit %d: %s", code, errOut.String())
	}
	errOut.Reset()
	if code := run(context.Background(), []string{"build", "-store", "demo.db", "-window", "-1h"}, &out, &errOut); code != 2 {
		t.Errorf("-window -1h: exit %d, want 2: %s", code, errOut.String())
	}
}
