package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The test binary is also the crawlers, as the command is.
func TestMain(m *testing.M) {
	switch os.Getenv("POLITECHECK_BENCH_CRAWLER") {
	case "colly-default":
		if err := runColly(false); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	case "hand":
		if err := runHand(100e6); err != nil { // 100 ms, to keep the test short
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// checkCrawler builds politecheck and runs this test binary under it as
// the named crawler.
func checkCrawler(t *testing.T, mode string, args ...string) (int, result) {
	t.Helper()
	dir := t.TempDir()
	checker := filepath.Join(dir, "politecheck")
	build := exec.Command("go", "build", "-o", checker, "./examples/politecheck")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building politecheck: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(checker, append(append([]string{"-json", "-q"}, args...), "--", "env", "POLITECHECK_BENCH_CRAWLER="+mode, self)...)
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	return code, r
}

// politecheck flags colly's default configuration: robots.txt never read,
// requests back to back.
func TestPolitecheckFlagsCollyDefault(t *testing.T) {
	code, r := checkCrawler(t, "colly-default", "-hosts", "3", "-articles", "2", "-latency", "0-5ms")
	if code != 1 || r.ByRule["robots-first"] == 0 || r.ByRule["interval"] == 0 {
		t.Errorf("exit %d, violations %v; want 1 with robots-first and interval", code, r.ByRule)
	}
}

// The careful net/http crawler passes at the interval it keeps, on a web
// with every robots.txt kind and rude sites.
func TestPolitecheckCertifiesHand(t *testing.T) {
	code, r := checkCrawler(t, "hand", "-hosts", "10", "-articles", "2", "-latency", "0-5ms", "-interval", "100ms",
		"-rude", "0.3", "-disallow", "0.2", "-robots-redirect", "0.2", "-robots-missing", "0.2")
	if code != 0 || r.Pages.Fetched != r.Pages.Expected {
		t.Errorf("exit %d, violations %v, pages %+v", code, r.ByRule, r.Pages)
	}
}
