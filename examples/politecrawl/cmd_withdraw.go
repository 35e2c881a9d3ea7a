package main

// politecrawl withdraw -config FILE [-store FILE] -source ID: an excluded
// source's stored content withdrawn (S8): its deposits and its crawl state
// removed from the store. The source must already be out of the list
// (active: false in the config), and no pass of it may be running in any
// process: withdraw takes the source's pass lease first, as a crawl would.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/politefetch/politefetch/crawl"
)

func runWithdraw(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("withdraw", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs, false)
	id := fs.String("source", "", "the source whose content is withdrawn (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("withdraw: unexpected arguments %q", fs.Args())
	}
	if *id == "" {
		return errors.New("withdraw: -source ID is required")
	}
	ctx := context.Background()
	cfg, db, deps, err := sf.open(ctx, "withdraw")
	if err != nil {
		return err
	}
	defer db.Close()
	var src *crawl.Source
	for i := range cfg.Sources {
		if cfg.Sources[i].ID == *id {
			src = &cfg.Sources[i]
		}
	}
	switch {
	case src == nil:
		return fmt.Errorf("withdraw: no source %q in %s", *id, cfg.Path())
	case src.Active:
		return fmt.Errorf("withdraw: source %s is active in %s: set active: false first (an excluded source leaves the list), and restart any crawl running with the old config", *id, cfg.Path())
	}
	state := db.Crawl().State
	owner := fmt.Sprintf("politecrawl-withdraw-%d", os.Getpid())
	if _, err := state.AcquireLease(ctx, *id, owner, time.Now(), time.Minute); err != nil {
		var le *crawl.LeaseError
		if errors.As(err, &le) && errors.Is(err, crawl.ErrLeaseHeld) {
			return fmt.Errorf("withdraw: a pass of %s is running (%s holds it until %s): stop that crawl first", *id, le.Held.Owner, le.Held.Expires.UTC().Format(time.RFC3339))
		}
		return fmt.Errorf("withdraw: %w", err)
	}
	n, err := deps.Withdraw(ctx, *id)
	if err != nil {
		_ = state.ReleaseLease(ctx, *id, owner)
		return fmt.Errorf("withdraw: %w", err)
	}
	if err := state.Forget(ctx, *id); err != nil {
		return fmt.Errorf("withdraw: %d deposits removed, but the crawl state was not: %w", n, err)
	}
	_ = state.ReleaseLease(ctx, *id, owner) // Forget may already have removed it
	fmt.Fprintf(stdout, "withdraw: %d deposits of %s removed, and its crawl state\n", n, *id)
	return nil
}
