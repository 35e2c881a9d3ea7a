// Command politecrawl is the example CLI of politefetch.
//
// Usage:
//
//	politecrawl demo [flags]
//
// demo starts a simulated web of publishers (politetest: one loopback HTTPS
// server, a few dozen virtual sites, some of them rude), prints what it
// serves, one line per site, crawls it politely and prints the auditor's
// verdict. Nothing leaves the machine. With -client=plain it makes one
// polite request per site (robots.txt first, then the feed) with a plain
// net/http client instead of the fetch chain. With -store FILE the crawl
// keeps its state and deposits in that SQLite file: run it again with the
// same seed and it knows the first run's articles (nothing is deposited
// twice) and its feeds answer 304 to the validators kept.
//
// The other commands crawl an operator's own sources, described in a YAML
// configuration (docs/config.md; three ready ones in configs/ reproduce the
// project's three policy documents): sources check, crawl, explain, fetch,
// verify, report, export, withdraw, and serve, a simulated web to try them
// on. "politecrawl -h" lists them with what each does, from the one table
// of commands below (commands), and "politecrawl COMMAND -h" its flags.
//
// A live status line is drawn on a terminal; elsewhere crawl writes slog
// lines (-log-format text or json), and -metrics serves Prometheus metrics.
// The test flags -connect-to, -ca and -admit-private reach a simulated web;
// they are never read from the environment.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "politecrawl:", err)
		}
		var ee *ExitError
		if errors.As(err, &ee) {
			os.Exit(ee.Code) // an answer that is "no": refused, or failed verification
		}
		os.Exit(2)
	}
}

// commands is the one table of politecrawl's commands: the usage text and
// the dispatch are both read from it. Adding a command is a line here and
// its cmd_NAME.go.
var commands = []struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) error
}{
	{"demo", "serve a simulated web of publishers, crawl it politely, print the audit", runDemo},
	{"crawl", "crawl the sources of a configuration (until Ctrl-C, or one pass with -once)", runCrawl},
	{"explain", "say whether a URL may be read now, and why", runExplain},
	{"fetch", "read one URL politely, as a crawl would; print status, headers and proof (-o: the body)", runFetch},
	{"verify", "re-check every deposit's proof of fetch offline: a store, several workers' stores as one, or a WARC", runVerify},
	{"report", "what the crawl did, per source and per host (what holds each host back, and why)", runReport},
	{"export", "deposits as JSON Lines or WARC, several workers' stores as one archive", runExport},
	{"sources", "sources check: validate a configuration and print each source's effective policy", runSources},
	{"withdraw", "remove an excluded source's deposits and crawl state from the store", runWithdraw},
	{"serve", "serve a simulated web for the other commands to crawl, audit it on Ctrl-C", runServe},
}

func usage() string {
	var b strings.Builder
	b.WriteString("usage: politecrawl <command> [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	b.WriteString("\nrun \"politecrawl <command> -h\" for a command's flags; the configuration is\ndescribed in docs/config.md, the exit codes in docs/exit-codes.md\n")
	return b.String()
}

// errImpolite is returned when the auditor found violations.
var errImpolite = errors.New("the auditor found violations")

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return flag.ErrHelp
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage())
		return nil
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		// Help asked for is an answer: the usage on stdout, exit 0.
		help := wantsHelp(args[1:])
		if help {
			stderr = stdout
		}
		err := c.run(args[1:], stdout, stderr)
		if help && errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	fmt.Fprint(stderr, usage())
	return fmt.Errorf("unknown command %q", args[0])
}

// demoConfig is the demo's flags.
type demoConfig struct {
	sites    int
	articles int
	rude     float64
	seed     int64
	latency  time.Duration
	client   string
	interval time.Duration
	timeout  time.Duration
	store    string
}

func runDemo(args []string, stdout, stderr io.Writer) error {
	var cfg demoConfig
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.sites, "sites", 50, "number of simulated sites")
	fs.IntVar(&cfg.articles, "articles", 5, "articles per site")
	fs.Float64Var(&cfg.rude, "rude", 0.3, "share of rude sites (429, 503, challenge pages, 5xx robots.txt, disallowed sections)")
	fs.Int64Var(&cfg.seed, "seed", 4, "scenario seed: the same seed builds the same web")
	fs.DurationVar(&cfg.latency, "latency", 20*time.Millisecond, "maximum added latency per answer (the minimum is a fifth of it)")
	fs.StringVar(&cfg.client, "client", "chain", `"chain": crawl through the fetch chain; "plain": one polite request per site with a plain net/http client`)
	fs.DurationVar(&cfg.interval, "interval", 0, "per-site interval (0: the crawl's default, the policy's 1 s scaled down)")
	fs.DurationVar(&cfg.timeout, "timeout", 2*time.Minute, "give up after this long")
	fs.StringVar(&cfg.store, "store", "", "keep the crawl's state and deposits in this SQLite file (default: in memory); a second run with the same -seed resumes from it")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("demo: unexpected arguments %q", fs.Args())
	}
	if cfg.client != "chain" && cfg.client != "plain" {
		return fmt.Errorf("demo: -client must be chain or plain, not %q", cfg.client)
	}
	if cfg.store != "" && cfg.client != "chain" {
		return errors.New("demo: -store needs -client=chain (the plain client keeps no state)")
	}
	if cfg.latency < 0 {
		return fmt.Errorf("demo: -latency %v: a latency cannot be negative", cfg.latency)
	}
	if cfg.interval < 0 {
		return fmt.Errorf("demo: -interval %v: want a positive duration, or 0 for the default", cfg.interval)
	}
	if cfg.timeout <= 0 {
		return fmt.Errorf("demo: -timeout %v: want a positive duration", cfg.timeout)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	sc := demoScenario(cfg)
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	var st *stores // nil: the crawl's state and deposits in memory
	if cfg.store != "" {
		var err error
		if st, err = openDemoStore(ctx, cfg.store); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		defer st.Close()
	}
	web, err := politetest.Start()
	if err != nil {
		return err
	}
	defer web.Close()
	info, err := sc.Build(web)
	if err != nil {
		return err
	}

	fmt.Fprintf(stdout, "politetest web on %s: %d sites, %d articles each, %d rude (seed %d)\n",
		web.Addr(), len(info.Sites), cfg.articles, len(info.Rude()), cfg.seed)
	fmt.Fprintln(stdout, "each serves /robots.txt, /feed.xml, /atom.xml, /sitemap_index.xml, /sitemap.xml, /news-sitemap.xml,")
	fmt.Fprintln(stdout, "/wp-json/wp/v2/posts, its article pages and /images/; the rude ones misbehave as marked:")
	fmt.Fprint(stdout, info)
	fmt.Fprintln(stdout)

	var report *politetest.Report
	switch cfg.client {
	case "chain":
		sum, err := RunCrawl(ctx, web, info, CrawlConfig{Interval: cfg.interval, Store: st}, stdout)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		report = sum.Audit
	case "plain":
		report, err = plainCrawl(ctx, web, info, cfg.interval, stdout)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout)
		fmt.Fprint(stdout, report)
	}
	if !report.OK() {
		return errImpolite
	}
	return nil
}

// demoScenario is the web the demo serves: a few dozen sites, a mix of
// robots.txt files, some rude sites. No Crawl-delay, so that the demo takes
// seconds.
func demoScenario(cfg demoConfig) politetest.Scenario {
	return politetest.Scenario{
		Hosts:           cfg.sites,
		ArticlesPerHost: cfg.articles,
		Latency:         [2]time.Duration{cfg.latency / 5, cfg.latency},
		RudeShare:       cfg.rude,
		Seed:            cfg.seed,
		RobotsMix:       politetest.RobotsMix{Disallow: 0.25, Missing: 0.25},
	}
}
