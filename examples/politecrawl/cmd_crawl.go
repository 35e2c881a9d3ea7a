package main

// politecrawl crawl -config FILE [-store FILE] [-once]: the crawler an
// operator leaves running. Ctrl-C (SIGINT) or SIGTERM ends it cleanly: the
// crawler's context ends, in-flight reads finish or are abandoned, and what
// was settled stays in the store.

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/sharecheck"
)

func runCrawl(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("crawl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "the configuration file (required)")
	storePath := fs.String("store", "", "the SQLite state file (default: the config's store.path, else the config's name with .db, beside it)")
	once := fs.Bool("once", false, "one pass of every active source, then exit")
	metricsAddr := fs.String("metrics", "", "serve Prometheus metrics on this address, e.g. :9090 (default: none)")
	feedsPath := fs.String("feeds", "", "crawl the feed URLs in this file (one a line) instead of the config's sources, each a source of its own")
	fullText := fs.Bool("full-text", false, "with -feeds: read and keep each listed feed's articles in full (say so only where your licence allows it); otherwise each story is kept as the feed describes it")
	live := fs.String("live", "auto", `the live status line: "auto" (on a terminal only), "on" or "off"`)
	var nf netFlags
	nf.register(fs)
	var lf logFlags
	lf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("crawl: unexpected arguments %q", fs.Args())
	}
	if *configPath == "" {
		return errors.New("crawl: -config FILE is required")
	}
	if *live != "auto" && *live != "on" && *live != "off" {
		return fmt.Errorf("crawl: -live must be auto, on or off, not %q", *live)
	}
	if *metricsAddr != "" {
		if _, _, err := net.SplitHostPort(*metricsAddr); err != nil {
			return fmt.Errorf("crawl: -metrics %q: want host:port or :port, such as :9090", *metricsAddr)
		}
	}
	for _, check := range []func() error{nf.check, lf.check} {
		if err := check(); err != nil {
			return fmt.Errorf("crawl: %w", err)
		}
	}
	// The system's roots (tens of milliseconds to read), while the
	// configuration is parsed and the store opened: every first TLS
	// handshake waits for them otherwise, and -ca adds to them.
	go x509.SystemCertPool()
	cfg, err := LoadConfig(*configPath)
	if err != nil {
		return err
	}
	if *feedsPath != "" {
		if cfg.Sources, err = readFeedList(*feedsPath, cfg, *fullText); err != nil {
			return fmt.Errorf("crawl: %w", err)
		}
	} else if *fullText {
		return errors.New("crawl: -full-text applies to the sources of -feeds only")
	}
	fp, err := cfg.FetchPolicy()
	if err != nil {
		return err
	}
	if *storePath == "" {
		*storePath = cfg.StorePath()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// What the operator sees: a live line on a terminal, else log lines.
	liveOn := *live == "on" || (*live == "auto" && isTerminalWriter(stderr))
	var logger *slog.Logger
	if liveOn {
		// The live line owns the terminal: only warnings and errors are logged.
		logger = slog.New(quiet{lf.handler(stderr)})
	} else {
		logger = slog.New(lf.handler(stderr))
	}
	obs := newObserver(fp.Interval, nil)
	if *metricsAddr != "" {
		obs.m = newPromMetrics()
		ln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			return fmt.Errorf("crawl: -metrics %s: %w", *metricsAddr, err)
		}
		srv := &http.Server{Handler: obs.handler(), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		logger.Info("metrics", "addr", "http://"+ln.Addr().String()+"/metrics")
	}

	client, db, err := openClient(ctx, cfg, *storePath, &nf,
		fetch.WithLedgerEvents(obs.ledgerEvent), fetch.WithObserver(obs.requestEvent), fetch.WithLogger(logger))
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	defer db.Close()
	defer client.Close()
	// The crawl's companions, under one errgroup, all ended by endBg once
	// the crawl returns: the backend's watch (says when a state server
	// stops answering), the due-sources watch and the live line. The
	// counters need none: the crawl state keeps them as it goes.
	bgCtx, endBg := context.WithCancel(context.Background())
	var bg errgroup.Group
	defer func() { endBg(); bg.Wait() }()
	bg.Go(func() error { db.watch(bgCtx, logger); return nil })
	state, deposits := db.Crawl().State, db.Crawl().Deposits

	if out := cfg.JSONLPath(); out != "" {
		jw, err := openJSONLOutput(out, deposits)
		if err != nil {
			return fmt.Errorf("crawl: outputs.jsonl: %w", err)
		}
		defer jw.Close()
		deposits = jw
	}
	if out := cfg.WARCPath(); out != "" {
		ww, err := openWARCOutput(out, deposits)
		if err != nil {
			return fmt.Errorf("crawl: outputs.warc: %w", err)
		}
		defer ww.Close()
		deposits = ww
	}

	outs := newOutcomes(cfg.Sources)
	c := &crawl.Crawler{
		Client:          client,
		Sources:         cfg.Sources,
		State:           state,
		Deposits:        deposits,
		BacklogInterval: time.Duration(cfg.Crawl.BacklogInterval),
		RefreshGuard:    time.Duration(cfg.Crawl.RefreshGuard),
		MaxReads:        cfg.Crawl.MaxReads,
		MaxFailures:     cfg.Crawl.MaxFailures,
		OnEvent:         func(e crawl.Event) { obs.crawlEvent(e); outs.event(e) },
		Logger:          logger,
	}
	if cfg.Crawl.ShareImages != "skip" {
		// S7: each story's share image checked once, through the same
		// client; crawl checks only strict news sources' (never digest's
		// or vault's).
		c.Images = &sharecheck.Checker{Client: client}
	}

	start := time.Now()
	logger.Info("crawl starting", "config", cfg.Path(), "store", db.where(), "sources", len(cfg.Sources),
		"policy", string(cfg.Policy.Preset), "user_agent", fp.UserAgent(), "once", *once)
	if liveOn || *metricsAddr != "" {
		// The sources due, for the live line and the gauge: a read of every
		// source's schedule each second, so only when someone looks.
		bg.Go(func() error { obs.watchDue(bgCtx, state, cfg.Sources); return nil })
	}
	if liveOn {
		bg.Go(func() error { runLive(bgCtx, stderr, obs, start); return nil })
	}
	var passErrs, passIDs []string
	if *once {
		var reps []*crawl.PassReport
		reps, err = c.RunOnce(ctx)
		for _, r := range reps {
			if r == nil {
				continue
			}
			outs.pass(r)
			if r.Err != nil && ctx.Err() == nil {
				// A lease held elsewhere, a store that could not answer: the
				// crawl could not run this source's pass (exit 2).
				logger.Warn("pass could not run", "source", r.Source, "err", r.Err)
				passErrs = append(passErrs, r.Source+": "+passCause(r.Err, time.Now()))
				passIDs = append(passIDs, r.Source)
			}
		}
	} else {
		err = c.Run(ctx)
	}
	endBg()
	bg.Wait()
	interrupted := ctx.Err() != nil
	if errors.Is(err, context.Canceled) && interrupted {
		err = nil // Ctrl-C: the operator's choice, not a failure
	}
	now := time.Now()
	settleCtx, endSettle := context.WithTimeout(context.Background(), 5*time.Second)
	outs.settle(settleCtx, state, db.Fetch().Robots, now)
	endSettle()
	s := obs.snapshot()
	robotsReads := db.robotsFetches.Load()
	logger.Info("crawl ended", "interrupted", interrupted, "elapsed", time.Since(start).Round(time.Millisecond).String(),
		"requests", s.Requests, "robots_txt", robotsReads, "deposited", s.Deposited, "excerpts", s.Excerpted, "failed", s.Failed,
		"abandoned", s.Abandoned, "refused", s.Refused, "not_modified", s.NotModified, "cooling", s.Cooling, "suspended", s.Suspended)
	fmt.Fprintf(stdout, "crawl: %d reads, %d deposited, %d excerpts, %d failed, %d refused, %d answered 304; %d hosts cooling down, %d suspended; robots.txt read %d times\n",
		s.Requests, s.Deposited, s.Excerpted, s.Failed, s.Refused, s.NotModified, s.Cooling, s.Suspended, robotsReads)
	if interrupted {
		fmt.Fprintf(stdout, "crawl: interrupted; %d reads abandoned (they stay due)\n", s.Abandoned)
	}
	failed := outs.failed()
	if len(failed) > 0 || len(outs.notDue()) > 0 {
		if len(failed) > 0 {
			fmt.Fprintf(stdout, "crawl: %d of %d sources could not be read:\n", len(failed), len(outs.order))
		}
		outs.print(stdout, now)
	}
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	if len(passErrs) > 0 {
		fmt.Fprintf(stdout, "crawl: the pass of %s could not run:\n", plural(len(passErrs), "source"))
		for _, p := range passErrs {
			fmt.Fprintln(stdout, "  "+p)
		}
		return fmt.Errorf("crawl: the pass of %s could not run: %s (why: in the summary above)", plural(len(passErrs), "source"), strings.Join(passIDs, ", "))
	}
	if len(failed) > 0 {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("crawl: %d of %d sources could not be read", len(failed), len(outs.order))}
	}
	return nil
}
