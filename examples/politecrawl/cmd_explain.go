package main

// politecrawl explain -config FILE [-store FILE] [-kind KIND] URL: may this
// URL be read now, and why, from the same state the crawl uses (the store's
// ledger, robots.txt records and pacing). Exit status 0: allowed; 1:
// refused; 2: the question could not be answered.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"
)

func runExplain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var uf urlFlags
	uf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	call, err := uf.open(ctx, "explain", "the crawler's identity and policy decide the answer", fs, stderr)
	if err != nil {
		return err
	}
	defer call.Close()
	e, err := call.client.Explain(ctx, call.url, call.opts...)
	if err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	printExplanation(stdout, call.src, e, time.Now())
	if !e.Allowed {
		return &ExitError{Code: 1, Msg: "explain: refused: " + strings.TrimPrefix(e.Refusal.Error(), "fetch: refused ")}
	}
	return nil
}
