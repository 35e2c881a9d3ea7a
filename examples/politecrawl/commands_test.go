package main

import (
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// The commands are listed once, in the table commands: the usage lists
// every row with its summary, each row's help is an answer (stdout, exit
// 0), and the package documentation keeps no second list of usage lines
// to fall out of step with it.
func TestCommands_OneTable(t *testing.T) {
	t.Parallel()
	r := politecrawl(t, nil, "-h")
	if r.code != 0 {
		t.Fatalf("-h: exit %d\n%s", r.code, r.stderr)
	}
	for _, c := range commands {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(c.name) + ` +` + regexp.QuoteMeta(c.summary) + `$`).MatchString(r.stdout) {
			t.Errorf("usage lacks %s's row:\n%s", c.name, r.stdout)
		}
		h := politecrawl(t, nil, c.name, "-h")
		if h.code != 0 || !strings.Contains(h.stdout, "-") {
			t.Errorf("%s -h: exit %d, stdout %q", c.name, h.code, h.stdout)
		}
	}
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		if strings.Contains(f.Doc.Text(), "politecrawl "+c.name+" ") && c.name != "demo" {
			t.Errorf("the package doc lists %q again: the table is the one list", "politecrawl "+c.name)
		}
	}
}
