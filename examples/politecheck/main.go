// Command politecheck certifies any crawler's politeness: it serves a
// simulated web of publishers (a politetest.Scenario on loopback), runs the
// crawler given after "--" against it, and reports what the politeness
// referee saw.
//
// Usage:
//
//	politecheck [flags] -- crawler [args...]
//	politecheck [flags] -serve
//
// The web is one loopback HTTPS server with a throwaway certificate
// authority, answering for every virtual host (news-1.example, …). The
// crawler learns how to reach it from its environment and from placeholders
// in its arguments:
//
//	POLITECHECK_ADDR  {addr}   the server's ip:port; every host is reached there
//	POLITECHECK_SEEDS {seeds}  a file of the feed URLs to crawl, one a line
//	POLITECHECK_CA    {ca}     the CA certificate (PEM) every site's certificate chains to
//	SSL_CERT_FILE              the same CA file, for crawlers that read their trust store from it
//
// With -proxy, politecheck also serves an HTTP CONNECT proxy that tunnels
// each connection to the web (one upstream connection per tunnel), and
// names it in HTTPS_PROXY and https_proxy (and POLITECHECK_PROXY, {proxy}),
// for crawlers that honour a proxy but cannot be told where to connect.
// Request starts are then when the tunnel passed the bytes on, so -slack
// must absorb the proxy's scheduling as well.
//
// politecheck waits for the crawler to exit (or for -timeout, when it is
// asked to stop with an interrupt and killed ten seconds later), audits
// every request the web received against the stated policy (one request
// every -interval to a host, or the host's Crawl-delay when longer; one
// request in flight and one connection per host; robots.txt first and
// obeyed; cool-downs announced by 429, 503 and challenge pages honoured; no
// cookies; an identifying User-Agent), and reports each violation by rule
// with examples, the pages expected, fetched and missing, duplicate and
// conditional requests, the crawl's wall time against its politeness bound,
// and the crawler process's CPU seconds and peak resident memory.
//
// The politeness bound (the ideal) is the shortest time any crawler keeping
// the policy could take: for each host, the requests a minimal crawl needs
// (robots.txt and its redirects, the feed, every article robots.txt allows
// on a well-behaved host), one interval apart; the ideal is the longest of
// these per-host chains. The report also gives the bound for the requests
// the crawler actually made.
//
// The exit status is 0 when the audit found nothing, the crawler exited 0
// and every page the web expected was fetched; 1 when the audit found a
// violation; 3 when the audit found nothing but the crawler failed or ran
// out of time; 4 when the audit found nothing and the crawler exited 0 but
// pages the web expected (allowed by robots.txt, on well-behaved hosts) were
// never fetched; 2 when politecheck itself could not run.
//
// With -serve, politecheck starts the web, prints the variables as shell
// assignments, and waits for an interrupt (Ctrl-C); then it prints the
// audit of whatever reached the web meanwhile.
//
// With -scheme http, the seeds are http:// URLs and POLITECHECK_ADDR is a
// plain-HTTP listener that relays each connection to the web's own
// plain-HTTP twin, one upstream connection per crawler connection. Request
// starts are then when the relay passed the bytes on, so -slack must absorb
// the relay's scheduling as well.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

func main() {
	code, err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "politecheck:", err)
	}
	os.Exit(code)
}

// The exit statuses.
const (
	exitOK        = 0
	exitViolation = 1
	exitUsage     = 2
	exitCrawler   = 3
	// exitIncomplete: polite, the crawler exited 0, but pages the web
	// expected (allowed, on well-behaved hosts) were never fetched: a
	// crawler that reads nothing is not certified.
	exitIncomplete = 4
)

// config is politecheck's flags.
type config struct {
	sc         politetest.Scenario
	scheme     string
	policy     politetest.Policy
	userAgent  string
	timeout    time.Duration
	jsonOut    bool
	serve      bool
	quiet      bool
	dir        string
	examples   int
	requests   string
	proxy      bool
	command    []string
	latencyArg string
	hostile    bool
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{}
	fs := flag.NewFlagSet("politecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: politecheck [flags] -- crawler [args...]\n       politecheck [flags] -serve\n\nflags:\n")
		fs.PrintDefaults()
	}
	fs.IntVar(&cfg.sc.Hosts, "hosts", 20, "number of simulated sites (news-1.example …)")
	fs.IntVar(&cfg.sc.ArticlesPerHost, "articles", 5, "articles per site")
	pageKB := fs.Int("page-kb", 0, "KiB of page furniture (navigation, inline scripts) on each article page beyond its story; 0: pages of about 1.2 KB (real news pages weigh 50 to 200 KB)")
	fs.Float64Var(&cfg.sc.RudeShare, "rude", 0, "share of rude sites (429, 503, challenge pages, 5xx robots.txt, disallowed articles)")
	fs.Float64Var(&cfg.sc.RobotsMix.CrawlDelay, "crawl-delay", 0, "share of well-behaved sites whose robots.txt asks for a Crawl-delay (-crawl-delay-seconds)")
	fs.IntVar(&cfg.sc.RobotsMix.CrawlDelaySeconds, "crawl-delay-seconds", 1, "the Crawl-delay those sites ask for, in seconds (1 to 60)")
	fs.Float64Var(&cfg.sc.RobotsMix.Disallow, "disallow", 0, "share of well-behaved sites whose robots.txt disallows /private/ and /search")
	fs.Float64Var(&cfg.sc.RobotsMix.Missing, "robots-missing", 0, "share of well-behaved sites whose robots.txt answers 404")
	fs.Float64Var(&cfg.sc.RobotsMix.Redirect, "robots-redirect", 0, "share of well-behaved sites whose robots.txt is reached through two redirects")
	fs.StringVar(&cfg.latencyArg, "latency", "20ms-200ms", "added latency of every answer: MIN-MAX, or one duration for both")
	fs.Int64Var(&cfg.sc.Seed, "seed", 1, "scenario seed: the same seed builds the same web")
	fs.StringVar(&cfg.scheme, "scheme", "https", `"https", or "http" for plain-HTTP seeds through a relay`)
	fs.DurationVar(&cfg.policy.Interval, "interval", time.Second, "the policy: least time between two request starts to one host (a longer Crawl-delay wins)")
	fs.IntVar(&cfg.policy.MaxConnsPerHost, "max-conns", 1, "the policy: most connections open to one host at once")
	fs.IntVar(&cfg.policy.MaxInFlight, "max-in-flight", 1, "the policy: most requests in flight to one host at once")
	fs.BoolVar(&cfg.policy.StrictRobots, "strict-robots", false, "the policy: a robots.txt answering 401, 403 or 429 disallows the site")
	fs.BoolVar(&cfg.policy.HTTPSOnly, "https-only", false, "the policy: every plain-HTTP request is a violation")
	fs.StringVar(&cfg.userAgent, "user-agent", "", "the policy: a regular expression every User-Agent must match (default: any that identifies the crawler)")
	fs.DurationVar(&cfg.policy.Slack, "slack", politetest.Slack(50*time.Millisecond), "tolerance taken off every required gap (the default is 2ms where the kernel stamps request arrivals)")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "stop the crawler (interrupt, then kill 10 s later) after this long")
	fs.BoolVar(&cfg.jsonOut, "json", false, "print the report as JSON")
	fs.BoolVar(&cfg.serve, "serve", false, "keep the web up and print its variables until interrupted; then print the audit")
	fs.BoolVar(&cfg.quiet, "q", false, "discard the crawler's output (by default it goes to politecheck's standard error)")
	fs.StringVar(&cfg.dir, "dir", "", "write the seed list and CA file here and keep them (default: a temporary directory, removed at exit)")
	fs.IntVar(&cfg.examples, "examples", 3, "violations shown per rule")
	fs.BoolVar(&cfg.proxy, "proxy", false, "also serve an HTTP CONNECT proxy in front of the web and name it in HTTPS_PROXY, for crawlers that cannot be told where to connect")
	fs.StringVar(&cfg.requests, "requests", "", "also write every request the web received to this file, as JSON lines")
	fs.BoolVar(&cfg.hostile, "hostile", false, "serve politetest's hostile web: every trait of politetest.HostileTraits dealt over the rude sites (-rude 0.8 unless given; all traits are on some site from about 60 -hosts)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	cfg.command = fs.Args()
	cfg.sc.Furniture = *pageKB << 10
	if cfg.hostile {
		h := politetest.Hostile(cfg.sc.Seed, cfg.sc.Hosts)
		cfg.sc.Traits = h.Traits
		rudeSet := false
		fs.Visit(func(f *flag.Flag) { rudeSet = rudeSet || f.Name == "rude" })
		if !rudeSet {
			cfg.sc.RudeShare = h.RudeShare
		}
	}
	lat, err := parseLatency(cfg.latencyArg)
	if err != nil {
		return nil, err
	}
	cfg.sc.Latency = lat
	if err := cfg.sc.Validate(); err != nil {
		return nil, err
	}
	switch {
	case cfg.scheme != "https" && cfg.scheme != "http":
		return nil, fmt.Errorf("-scheme must be https or http, not %q", cfg.scheme)
	case cfg.policy.Interval < 0 || cfg.policy.Slack < 0 || cfg.timeout <= 0:
		return nil, errors.New("-interval and -slack must not be negative, -timeout must be positive")
	case cfg.policy.MaxConnsPerHost < 1 || cfg.policy.MaxInFlight < 1:
		return nil, errors.New("-max-conns and -max-in-flight must be at least 1")
	case cfg.proxy && cfg.scheme == "http":
		return nil, errors.New("-proxy tunnels HTTPS only: not with -scheme http")
	case cfg.serve && len(cfg.command) > 0:
		return nil, errors.New("-serve takes no crawler command")
	case !cfg.serve && len(cfg.command) == 0:
		return nil, errors.New("no crawler command: give it after --, or use -serve")
	}
	if cfg.userAgent != "" {
		re, err := regexp.Compile(cfg.userAgent)
		if err != nil {
			return nil, fmt.Errorf("-user-agent: %w", err)
		}
		cfg.policy.UserAgent = re
	}
	return cfg, nil
}

// parseLatency reads "MIN-MAX" or a single duration.
func parseLatency(s string) ([2]time.Duration, error) {
	var lat [2]time.Duration
	lo, hi, found := strings.Cut(s, "-")
	if !found {
		hi = lo
	}
	var err error
	if lat[0], err = time.ParseDuration(strings.TrimSpace(lo)); err != nil {
		return lat, fmt.Errorf("-latency %q: want MIN-MAX such as 20ms-200ms", s)
	}
	if lat[1], err = time.ParseDuration(strings.TrimSpace(hi)); err != nil {
		return lat, fmt.Errorf("-latency %q: want MIN-MAX such as 20ms-200ms", s)
	}
	return lat, nil
}

// run is politecheck; it returns the exit status and, for status 2, why.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return exitUsage, err
	}
	env, err := startEnv(cfg)
	if err != nil {
		return exitUsage, err
	}
	defer env.close()

	if cfg.serve {
		fmt.Fprint(stdout, env.shellVars())
		fmt.Fprintf(stdout, "# %d sites, %d articles each; interrupt (Ctrl-C) for the audit\n", cfg.sc.Hosts, cfg.sc.ArticlesPerHost)
		if cfg.scheme == "https" {
			fmt.Fprintf(stdout, "# for instance: curl --connect-to ::%s --cacert %s -A 'MyBot/1 (+https://bot.example)' https://%s/robots.txt\n",
				env.addr, env.ca, env.info.Sites[0].Name)
		}
		sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		<-sctx.Done()
		stop()
		rep := buildReport(cfg, env, nil)
		if err := writeRequests(cfg.requests, env); err != nil {
			return exitUsage, err
		}
		return rep.exitCode(), rep.write(stdout, cfg.jsonOut)
	}

	res, err := runCrawler(ctx, cfg, env, stderr)
	if err != nil {
		return exitUsage, err
	}
	rep := buildReport(cfg, env, res)
	if err := writeRequests(cfg.requests, env); err != nil {
		return exitUsage, err
	}
	if err := rep.write(stdout, cfg.jsonOut); err != nil {
		return exitUsage, err
	}
	return rep.exitCode(), nil
}
