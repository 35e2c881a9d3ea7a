package main

// politecrawl sources check -config FILE: the configuration validated and
// each source's effective policy printed, without fetching anything.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/robots"
)

func runSources(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprintln(stderr, "usage: politecrawl sources check -config FILE")
		if len(args) > 0 && wantsHelp(args[:1]) {
			return flag.ErrHelp // help asked for is an answer: exit 0
		}
		return errors.New("sources: the only subcommand is check")
	}
	fs := flag.NewFlagSet("sources check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "the configuration file (required)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("sources check: unexpected arguments %q", fs.Args())
	}
	if *configPath == "" {
		return errors.New("sources check: -config FILE is required")
	}
	cfg, err := LoadConfig(*configPath)
	if err != nil {
		return err
	}
	fp, err := cfg.FetchPolicy()
	if err != nil {
		return err
	}
	printPolicy(stdout, cfg, fp)
	for i := range cfg.Sources {
		fmt.Fprintln(stdout)
		printSource(stdout, &cfg.Sources[i])
	}
	return nil
}

// printPolicy prints the policy every source is read under, as it takes
// effect: each value read from the fetch policy itself, not restated.
func printPolicy(w io.Writer, cfg *Config, fp fetch.Policy) {
	fmt.Fprintf(w, "config %s: %d sources, store %s\n", cfg.Path(), len(cfg.Sources), cfg.storeLine())
	fmt.Fprintf(w, "policy %s\n", cfg.Policy.Preset)
	for _, r := range policyRows(cfg, fp) {
		row(w, r[0], r[1])
	}
}

// policyRows are the effective policy's settings, one per row of the
// design's "Policies are data" table and the rules beside it.
func policyRows(cfg *Config, fp fetch.Policy) [][2]string {
	dur := func(d time.Duration) string { return fmtDuration(d) }
	var rows [][2]string
	add := func(k, v string) { rows = append(rows, [2]string{k, v}) }
	add("user-agent", fp.UserAgent())

	st := fp.Robots.Status
	outcome := func(o robots.Outcome) string {
		switch o {
		case robots.DisallowAll:
			return "disallow site"
		case robots.AllowAll:
			return "allow (as absent)"
		}
		return "parse"
	}
	four := []string{}
	for _, code := range []int{401, 403, 429} {
		four = append(four, outcome(st.Decide(code, nil)))
	}
	if four[0] == four[1] && four[1] == four[2] {
		add("robots.txt 401/403/429", four[0])
	} else {
		add("robots.txt 401/403/429", strings.Join(four, " / "))
	}
	add("robots.txt other 4xx", outcome(st.Decide(404, nil)))
	five, unreachable := outcome(st.Decide(503, nil)), outcome(st.Decide(0, &net.OpError{Op: "dial", Err: errors.New("unreachable")}))
	if five == unreachable {
		add("robots.txt 5xx/unreachable", five)
	} else {
		add("robots.txt 5xx/unreachable", five+" / "+unreachable)
	}
	retry := fp.Robots.RetryInterval
	if retry == 0 {
		retry = fetch.DefaultRobotsRetry
	}
	add("robots.txt retry", dur(retry))
	ttl := fp.Robots.TTL
	if ttl == 0 {
		ttl = fetch.DefaultRobotsTTL
	}
	add("robots.txt cache", dur(ttl))

	iv := dur(fp.Interval)
	if fp.IntervalMax > fp.Interval {
		iv += "-" + dur(fp.IntervalMax) + " (random)"
	}
	add("interval", iv+", or Crawl-delay if longer")
	if fp.PerSite {
		add("paced per", "site (registrable domain)")
	} else {
		add("paced per", "host")
	}
	add("in flight per host", strconv.Itoa(max(fp.InFlight, 1)))

	b := fp.Backoff
	switch {
	case b.RefuseNon200:
		add("refusals", "any non-200, challenge")
	default:
		var codes []string
		for _, c := range b.RefuseStatus {
			codes = append(codes, strconv.Itoa(c))
		}
		add("refusals", strings.Join(append(codes, "challenge"), " "))
	}
	switch {
	case b.NoCooldown:
		add("back-off", "none")
	case b.RetryAfterOnly:
		add("back-off", "none of its own; Retry-After honoured")
	default:
		s := fmt.Sprintf("%s x%g up to %s", dur(b.Base), max(b.Factor, 2), dur(b.Ceiling))
		if b.Jitter > 0 {
			s += ", random jitter"
		}
		add("back-off", s+"; Retry-After honoured")
	}
	if b.Min429 > 0 {
		add("429 cool-down at least", dur(b.Min429))
	}
	if b.StrikeLimit > 0 && !b.NoCooldown && !b.RetryAfterOnly {
		add("suspension", fmt.Sprintf("after %d refusals in a row, articles off, re-check every %s", b.StrikeLimit, dur(b.RecheckEvery)))
	} else {
		add("suspension", "never")
	}
	hdr := "User-Agent, Accept, Accept-Encoding: identity"
	if !fp.NoConditional {
		hdr += ", If-None-Match, If-Modified-Since"
	}
	add("headers", hdr+" (+ a source's credential header)")
	if fp.NoConditional {
		add("conditional GET", "off")
	} else {
		add("conditional GET", "on")
	}
	red := strconv.Itoa(fp.MaxRedirects)
	if fp.ImageMaxRedirects > 0 {
		red += ", images " + strconv.Itoa(fp.ImageMaxRedirects)
	}
	add("redirects", red)
	if fp.AllowHTTP {
		add("scheme", "http and https")
	} else {
		add("scheme", "https only")
	}
	timeout := fp.Timeout
	if timeout == 0 {
		timeout = fetch.DefaultTimeout
	}
	add("read time-out", dur(timeout))
	wire := fp.MaxWire
	if wire == 0 {
		wire = fetch.DefaultMaxWire
	}
	add("read size cap", strconv.FormatInt(wire, 10)+" bytes")

	cs := cfg.Crawl
	bl := time.Duration(cs.BacklogInterval)
	if bl == 0 {
		bl = crawl.DefaultBacklogInterval
	}
	add("backlog walk", "at start-up, then every "+dur(bl)+"; one pass per source at a time")
	rg := time.Duration(cs.RefreshGuard)
	if rg == 0 {
		rg = crawl.DefaultRefreshGuard
	}
	add("fresh read guard", dur(rg))
	mr, mf := cs.MaxReads, cs.MaxFailures
	if mr == 0 {
		mr = crawl.DefaultMaxReads
	}
	if mf == 0 {
		mf = crawl.DefaultMaxFailures
	}
	add("reads per article", fmt.Sprintf("at most %d per pass", mr))
	add("failures stopping a pass", strconv.Itoa(mf)+" in a row")
	if cfg.Policy.Preset == crawl.Vault {
		add("kept when not read", "nothing")
	} else {
		add("kept when not read", "the feed's excerpt, labelled")
	}
	return rows
}

// printSource prints one source as the crawler reads it.
func printSource(w io.Writer, s *crawl.Source) {
	state := "active"
	if !s.Active {
		state = "inactive: never fetched"
	}
	fmt.Fprintf(w, "source %s (%s): %s\n", s.ID, s.Name, state)
	if len(s.Trigger.Feeds) > 0 {
		row(w, "trigger", "feeds "+strings.Join(s.Trigger.Feeds, " "))
	} else if s.Trigger.API != nil {
		row(w, "trigger", "api "+s.Trigger.API.URL)
	}
	if b := s.Backlog; b != nil {
		where := strings.Join(b.URLs, " ")
		if where == "" {
			where = b.Site
		}
		if b.API != nil {
			where = b.API.URL
		}
		v := string(b.Kind) + " " + where
		if !b.Floor.IsZero() {
			v += ", floor " + b.Floor.Format(time.DateOnly)
		}
		row(w, "backlog", v)
	} else {
		row(w, "backlog", "none")
	}
	method := s.Read.Method
	if method == "" {
		method = crawl.ReadPage
	}
	rd := string(method)
	if s.Read.URL != "" {
		rd += " " + s.Read.URL
	}
	row(w, "read", rd)
	if c := s.Read.Credential; c != nil {
		status := "resolves"
		if _, err := c.Resolve(); err != nil {
			status = "does not resolve here"
			if kind, ref, _ := strings.Cut(c.Value, ":"); kind == "env" {
				status = "environment variable " + ref + " not set here"
			} else if _, err := os.Stat(ref); err != nil {
				status = "file " + ref + " not readable here"
			}
		}
		row(w, "credential", c.Header+" from "+c.Value+" ("+status+")")
	}
	if s.FullText {
		row(w, "full text", "yes")
	} else {
		row(w, "full text", "no: the feed's excerpt only")
	}
	iv := time.Duration(s.Interval)
	if iv == 0 {
		iv = crawl.MinInterval
	}
	row(w, "feed interval", fmtDuration(iv))
	if s.Embargo {
		row(w, "embargo", "the trigger's date is an embargo: read once it has passed")
	}
	row(w, "admitted", strings.Join(s.Admitted, " "))
	if len(s.Params) > 0 {
		row(w, "declared params", strings.Join(s.Params, " "))
	}
	id := s.Identifier
	if id == "" {
		id = crawl.IDFromCMS
	}
	row(w, "identifier", string(id))
}
