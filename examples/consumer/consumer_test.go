package consumer

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// notTheLibrarys are the modules a service importing fetch, crawl and
// store/sqlite must not find in its module graph: the CLI's (yaml,
// prometheus), the browser test's (chromedp, cdproto) and the test servers'
// and leak checker's (miniredis, gopher-lua, goleak).
var notTheLibrarys = []string{
	"github.com/chromedp/chromedp",
	"github.com/chromedp/cdproto",
	"github.com/prometheus/",
	"go.yaml.in/yaml",
	"github.com/alicebob/miniredis",
	"github.com/yuin/gopher-lua",
	"go.uber.org/goleak",
}

// TestServiceModuleGraphHoldsOnlyTheLibrarys writes a throwaway module whose
// main package imports fetch, crawl and store/sqlite (the library replaced
// by this repository), requires what its packages are built from as tidy
// would, and reads its module graph with `go list -m all`. Listing the graph
// reads the go.mod file of every module in it, which building the library
// does not fetch: on a fresh machine the go command downloads those through
// the module proxy, checked against the library's go.sum.
func TestServiceModuleGraphHoldsOnlyTheLibrarys(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/service\n\ngo 1.26.0\n\nrequire github.com/politefetch/politefetch v0.0.0\n\n"+
		"replace github.com/politefetch/politefetch => "+root+"\n")
	write("go.sum", string(sum))
	write("main.go", `package main

import (
	_ "github.com/politefetch/politefetch/crawl"
	_ "github.com/politefetch/politefetch/fetch"
	_ "github.com/politefetch/politefetch/store/sqlite"
)

func main() {}
`)
	gocmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.Output()
		if err != nil {
			msg := err.Error()
			if ee, ok := err.(*exec.ExitError); ok {
				msg = string(ee.Stderr)
			}
			t.Fatalf("go %s: %s", strings.Join(args, " "), msg)
		}
		return string(out)
	}
	// As tidy would: require every module a package of the build comes from,
	// at the version the library selects, so that their own requirements
	// join the graph too.
	mods := map[string]bool{}
	for _, m := range strings.Fields(gocmd("list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}@{{.Version}}{{end}}{{end}}", ".")) {
		if !strings.HasPrefix(m, "github.com/politefetch/politefetch@") {
			mods[m] = true
		}
	}
	if len(mods) == 0 {
		t.Fatal("the service's build comes from no module but the library's: the listing failed")
	}
	for m := range mods {
		gocmd("mod", "edit", "-require="+m)
	}
	all := gocmd("list", "-m", "all")
	var found []string
	for _, line := range strings.Split(all, "\n") {
		for _, bad := range notTheLibrarys {
			if strings.HasPrefix(line, bad) {
				found = append(found, line)
			}
		}
	}
	if !strings.Contains(all, "modernc.org/sqlite") {
		t.Fatalf("go list -m all lacks modernc.org/sqlite, which store/sqlite needs: not the graph wanted\n%s", all)
	}
	if len(found) > 0 {
		t.Errorf("a service importing fetch, crawl and store/sqlite gets modules that are not the library's:\n%s\n\nits whole graph:\n%s",
			strings.Join(found, "\n"), all)
	}
}
