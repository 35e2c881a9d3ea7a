package main

// politecrawl serve: a simulated web of publishers (politetest) kept
// running for other commands to crawl, so that crawl, explain and the rest
// can be tried against it with the test flags it writes out. On Ctrl-C it
// prints the auditor's verdict on everything it served, judged by the
// policy -audit names, and exits 1 if it found a violation.

import (
	"context"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// auditPolicy is what the auditor holds a crawl under each preset to.
func auditPolicy(preset string) politetest.Policy {
	p := politetest.Policy{HTTPSOnly: true, Slack: 5 * time.Millisecond}
	switch preset {
	case "strict-news":
		p.Interval, p.StrictRobots = time.Second, true
	case "digest":
		p.Interval = 2 * time.Second
	case "vault":
		p.Interval = time.Second
		p.AllowedHeaders = []string{"User-Agent", "Accept", "Accept-Encoding"}
	}
	return p
}

func runServe(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sites := fs.Int("sites", 3, "number of simulated sites, news-1.example … (1 to 1000)")
	articles := fs.Int("articles", 5, "articles per site (0 to 1000)")
	rude := fs.Float64("rude", 0, "share of rude sites, 0 to 1 (429, 503, challenge pages, 5xx robots.txt, disallowed sections)")
	seed := fs.Int64("seed", 1, "scenario seed: the same seed builds the same web")
	flagsPath := fs.String("flags", "", "write the test flags that reach this web to this file (default: print them only)")
	audit := fs.String("audit", "strict-news", "the policy the auditor judges by: strict-news, digest or vault")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected arguments %q", fs.Args())
	}
	switch {
	case *sites < 1 || *sites > 1000:
		return fmt.Errorf("serve: -sites %d: 1 to 1000", *sites)
	case *articles < 0 || *articles > 1000:
		return fmt.Errorf("serve: -articles %d: 0 to 1000", *articles)
	case *rude < 0 || *rude > 1:
		return fmt.Errorf("serve: -rude %g: a share from 0 to 1", *rude)
	case *audit != "strict-news" && *audit != "digest" && *audit != "vault":
		return fmt.Errorf("serve: -audit must be strict-news, digest or vault, not %q", *audit)
	}
	sc := politetest.Scenario{Hosts: *sites, ArticlesPerHost: *articles, RudeShare: *rude, Seed: *seed, Now: time.Now()}
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	web, err := politetest.Start()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer web.Close()
	info, err := sc.Build(web)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}

	dir, err := os.MkdirTemp("", "politecrawl-web-")
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer os.RemoveAll(dir)
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: web.CACert().Raw}), 0o644); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	flags := fmt.Sprintf("-connect-to %s -ca %s -admit-private %s/32", web.Addr(), ca, web.IP())
	if *flagsPath != "" {
		if err := os.WriteFile(*flagsPath, []byte(flags+"\n"), 0o644); err != nil {
			return fmt.Errorf("serve: -flags: %w", err)
		}
		defer os.Remove(*flagsPath)
	}
	fmt.Fprintf(stdout, "politetest web on %s: %d sites (%s), %d articles each, %d rude\n", web.Addr(), len(info.Sites),
		strings.Join(abbrev(info.Names(), 4), ", "), *articles, len(info.Rude()))
	fmt.Fprint(stdout, info)
	fmt.Fprintf(stdout, "reach it with these flags (they exist for simulated webs only):\n  %s\n", flags)
	fmt.Fprintln(stdout, "serving until Ctrl-C, then the audit")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	rep := web.Audit(auditPolicy(*audit))
	fmt.Fprintf(stdout, "\naudited as %s:\n%s", *audit, rep)
	if !rep.OK() {
		return &ExitError{Code: 1, Msg: "serve: " + errors.New("the auditor found violations").Error()}
	}
	return nil
}

// abbrev shortens a list for one line.
func abbrev(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), "…")
}
