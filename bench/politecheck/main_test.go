package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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
	case "ours":
		if err := execOurs(os.Getenv("POLITECHECK_BENCH_POLITECRAWL"), true); err != nil {
			os.Exit(2)
		}
		os.Exit(0) // measured as a child (POLITECHECK_BENCH_IO), and it succeeded
	}
	dir, err := os.MkdirTemp("", "politecheck-bench-test-")
	if err != nil {
		os.Exit(2)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binDir holds the commands the tests build, each once.
var (
	binDir string
	builds sync.Map // package → *build
)

type build struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// binary builds the library module's package pkg (once for all the tests)
// and returns its path.
func binary(t *testing.T, pkg string) string {
	t.Helper()
	v, _ := builds.LoadOrStore(pkg, &build{})
	b := v.(*build)
	b.once.Do(func() {
		b.path = filepath.Join(binDir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", b.path, pkg)
		cmd.Dir = "../.."
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, b.err, b.out)
	}
	return b.path
}

// checkCrawler runs this test binary under politecheck as the named
// crawler, with env added to its environment.
func checkCrawler(t *testing.T, mode string, env []string, args ...string) (int, result) {
	t.Helper()
	checker := binary(t, "./examples/politecheck")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	crawler := append(append([]string{"env", "POLITECHECK_BENCH_CRAWLER=" + mode}, env...), self)
	cmd := exec.Command(checker, append(append(append([]string{"-json", "-q"}, args...), "--"), crawler...)...)
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
	t.Parallel()
	code, r := checkCrawler(t, "colly-default", nil, "-hosts", "3", "-articles", "2", "-latency", "0-5ms")
	if code != 1 || r.ByRule["robots-first"] == 0 || r.ByRule["interval"] == 0 {
		t.Errorf("exit %d, violations %v; want 1 with robots-first and interval", code, r.ByRule)
	}
}

// The careful net/http crawler passes at the interval it keeps, on a web
// with every robots.txt kind and rude sites.
func TestPolitecheckCertifiesHand(t *testing.T) {
	t.Parallel()
	code, r := checkCrawler(t, "hand", nil, "-hosts", "10", "-articles", "2", "-latency", "0-5ms", "-interval", "100ms",
		"-rude", "0.3", "-disallow", "0.2", "-robots-redirect", "0.2", "-robots-missing", "0.2")
	if code != 0 || r.Pages.Fetched != r.Pages.Expected {
		t.Errorf("exit %d, violations %v, pages %+v", code, r.ByRule, r.Pages)
	}
}

// Ours, politecrawl crawl -once as the side-by-side runs it (the strict
// news preset at 1 s per host, share images checked), is certified on a
// web with a disallowed section, every article fetched, and exits 0.
func TestPolitecheckCertifiesOurs(t *testing.T) {
	t.Parallel()
	crawl := binary(t, "./examples/politecrawl")
	code, r := checkCrawler(t, "ours", []string{"POLITECHECK_BENCH_POLITECRAWL=" + crawl},
		"-hosts", "4", "-articles", "2", "-latency", "0-5ms", "-disallow", "0.25")
	if code != 0 || r.Pages.Fetched != r.Pages.Expected || r.Pages.Expected == 0 {
		t.Errorf("exit %d (crawler %d), violations %v, pages %+v", code, r.Crawler.ExitCode, r.ByRule, r.Pages)
	}
	t.Logf("wall %.2f s, ideal %.2f s, %d requests", r.WallSeconds, r.IdealSeconds, r.Requests)
}

// On a web with a rude site (429, 503, a 5xx robots.txt), ours commits no
// violation and fetches every page the well-behaved sites expect, and says
// with its exit status that some sources could not be read (1, see
// docs/exit-codes.md), so politecheck reports the crawler's failure (3)
// rather than a clean certificate.
func TestPolitecheckOursOnARudeWeb(t *testing.T) {
	t.Parallel()
	crawl := binary(t, "./examples/politecrawl")
	code, r := checkCrawler(t, "ours", []string{"POLITECHECK_BENCH_POLITECRAWL=" + crawl},
		"-hosts", "4", "-articles", "2", "-latency", "0-5ms", "-rude", "0.25", "-disallow", "0.25")
	if code != 3 || r.Crawler.ExitCode != 1 || len(r.ByRule) != 0 || r.Pages.Fetched != r.Pages.Expected || r.Pages.Expected == 0 {
		t.Errorf("exit %d (crawler %d), violations %v, pages %+v; want 3 (crawler 1), none, every expected page",
			code, r.Crawler.ExitCode, r.ByRule, r.Pages)
	}
}

// With POLITECHECK_BENCH_IO the wrapper runs politecrawl as its child and
// writes what it wrote to disk; with POLITECHECK_BENCH_STORE the store is
// left where the table reads what was deposited, after politecheck is done;
// politecheck still certifies the run.
func TestPolitecheckMeasuresOursWrites(t *testing.T) {
	t.Parallel()
	crawl := binary(t, "./examples/politecrawl")
	dir := t.TempDir()
	out, store := filepath.Join(dir, "io.json"), filepath.Join(dir, "ours.db")
	code, r := checkCrawler(t, "ours", []string{"POLITECHECK_BENCH_POLITECRAWL=" + crawl, "POLITECHECK_BENCH_IO=" + out, "POLITECHECK_BENCH_STORE=" + store},
		"-hosts", "3", "-articles", "2", "-latency", "0-5ms")
	if code != 0 || r.Pages.Fetched != r.Pages.Expected || r.Pages.Expected == 0 {
		t.Errorf("exit %d (crawler %d), violations %v, pages %+v", code, r.Crawler.ExitCode, r.ByRule, r.Pages)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var st ioStats
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if err := st.readStore(store); err != nil {
		t.Fatal(err)
	}
	if st.Deposits != int64(r.Pages.Expected) || st.DepositBytes <= 0 || st.StoreBytes <= 0 || st.WriteBytes <= 0 {
		t.Errorf("%+v; want %d deposits, their bytes, the store's size and the bytes written", st, r.Pages.Expected)
	}
}
