package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// requirementNumbers are every number of the three documents (S, D, V),
// the rule shared by all of them (P1) and RFC 9309's (R1), in the
// mapping's order.
var requirementNumbers = []string{
	"S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8",
	"D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8", "D9", "D10", "D11", "D12", "D13",
	"V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8", "V9", "V9b", "V10", "V11", "V12", "V13",
	"P1", "R1",
}

// moduleRoot is the module's root, two folders up from this package.
const moduleRoot = "../.."

// requirement is one requirement of the mapping.
type requirement struct {
	number  string
	line    int
	tests   []string // "dir:TestName" or "dir:TestName/subtest"
	pending string   // why no test proves it yet
}

var (
	reqHeading = regexp.MustCompile(`^# ([SDVPR][0-9]+b?): \S`)
	testFunc   = regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(t \*testing\.T\)`)
)

// readMapping reads testdata/requirements.txt.
func readMapping(t *testing.T) []*requirement {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "requirements.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var reqs []*requirement
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case reqHeading.MatchString(line):
			reqs = append(reqs, &requirement{number: reqHeading.FindStringSubmatch(line)[1], line: n})
		case line == "" || strings.HasPrefix(line, "#"):
		case len(reqs) == 0:
			t.Errorf("requirements.txt:%d: %q before the first requirement", n, line)
		case strings.HasPrefix(line, "pending:"):
			reqs[len(reqs)-1].pending = strings.TrimSpace(strings.TrimPrefix(line, "pending:"))
		default:
			reqs[len(reqs)-1].tests = append(reqs[len(reqs)-1].tests, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return reqs
}

// testSources maps each folder of the module (relative to its root, with
// "/") to the text of its _test.go files, skipping the separate benchmark
// module and testdata.
func testSources(t *testing.T) map[string]string {
	t.Helper()
	src := map[string]string{}
	err := filepath.WalkDir(moduleRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(moduleRoot, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "bench" || d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		src[filepath.ToSlash(filepath.Dir(rel))] += string(b) + "\n"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestRequirements: the mapping names every requirement number once, in
// order; each has at least one test or says why it is pending; every test
// it names exists in the folder it names (and a subtest's name is written
// in that folder's tests); and a pending requirement has no test anywhere
// whose name carries its number (else it should be mapped); and every test
// whose name carries a number is mapped to that number (a test that says it
// proves a requirement and that the table does not list is a failure, not a
// note: the mutation script runs tests by the numbers their names carry).
func TestRequirements(t *testing.T) {
	t.Parallel()
	reqs := readMapping(t)
	var numbers []string
	for _, r := range reqs {
		numbers = append(numbers, r.number)
	}
	if !slices.Equal(numbers, requirementNumbers) {
		t.Fatalf("requirements.txt lists %v,\nwant %v", numbers, requirementNumbers)
	}
	src := testSources(t)
	funcs := map[string]map[string]bool{} // folder → test functions
	named := map[string][]string{}        // requirement number → "dir:Test" whose name carries it
	for dir, text := range src {
		funcs[dir] = map[string]bool{}
		for _, m := range testFunc.FindAllStringSubmatch(text, -1) {
			funcs[dir][m[1]] = true
			for _, part := range strings.Split(m[1], "_")[1:] {
				named[part] = append(named[part], dir+":"+m[1])
			}
		}
	}
	mapped := map[string]bool{}
	for _, r := range reqs {
		for _, entry := range r.tests {
			dir, name, _ := strings.Cut(entry, ":")
			fn, _, _ := strings.Cut(name, "/")
			mapped[r.number+" "+dir+":"+fn] = true
		}
	}
	for _, r := range reqs {
		for _, test := range named[r.number] {
			if !mapped[r.number+" "+test] {
				t.Errorf("%s: %s carries the number but is not mapped to it: add it under %s in testdata/requirements.txt", r.number, test, r.number)
			}
		}
		switch {
		case len(r.tests) == 0 && r.pending == "":
			t.Errorf("%s (line %d): no test proves it, and it is not marked pending", r.number, r.line)
		case len(r.tests) > 0 && r.pending != "":
			t.Errorf("%s (line %d): marked pending (%s) but maps tests", r.number, r.line, r.pending)
		case r.pending != "":
			if len(named[r.number]) > 0 {
				t.Errorf("%s is pending, but these tests carry its number: %v", r.number, named[r.number])
			} else {
				t.Logf("%s: pending: %s", r.number, r.pending)
			}
		}
		for _, entry := range r.tests {
			dir, name, ok := strings.Cut(entry, ":")
			if !ok {
				t.Errorf("%s: %q is not dir:TestName", r.number, entry)
				continue
			}
			fn, sub, _ := strings.Cut(name, "/")
			switch {
			case !funcs[dir][fn]:
				t.Errorf("%s: %s names a test that does not exist: no func %s in %s", r.number, entry, fn, dir)
			case sub != "" && !strings.Contains(src[dir], `"`+sub+`"`):
				t.Errorf("%s: %s names a subtest %q written nowhere in %s", r.number, entry, sub, dir)
			}
		}
	}
}
