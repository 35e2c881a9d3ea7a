package main

// politecrawl export -config FILE [-store FILE]... -format jsonl|warc
// [-since WHEN] [-source ID] [-o FILE]: the store's deposits for other
// tools, as JSON Lines (one deposit a line: the article with each metadata
// field's source, or the feed's excerpt, and the proof) or as WARC 1.1 with
// the proof records. Several workers' stores (-store repeated, or a glob)
// export as one: each deposit once, the earliest read of its digest.

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/politefetch/politefetch/provenance/warc"
)

// parseSince reads -since: an RFC 3339 instant, a date (UTC midnight), or
// a duration back from now ("24h").
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("-since %q: want an instant (2026-12-01T08:00:00Z), a date (2026-12-01) or a duration back from now (24h)", s)
}

func runExport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf storeFlags
	sf.register(fs, true)
	format := fs.String("format", "", "jsonl or warc (required)")
	since := fs.String("since", "", "only deposits read at or after: an instant, a date, or a duration back from now")
	source := fs.String("source", "", "only this source's deposits (its id)")
	outPath := fs.String("o", "", "write to this file (default: standard output; a WARC is gzipped per record when it ends in .gz)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return argsError("export", fs.Args())
	}
	if *format != "jsonl" && *format != "warc" {
		return fmt.Errorf("export: -format must be jsonl or warc, not %q", *format)
	}
	from, err := parseSince(*since, time.Now())
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if latest := time.Unix(0, math.MaxInt64); from.After(latest) {
		from = latest // the store keeps instants as Unix nanoseconds: nothing is later
	}
	ctx := context.Background()
	cfg, set, err := sf.openSet(ctx, "export")
	if err != nil {
		return err
	}
	defer set.Close()
	deps := set.Deposits()
	ids := []string{}
	for _, s := range cfg.Sources {
		if *source == "" || s.ID == *source {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) == 0 {
		return fmt.Errorf("export: no source %q in %s", *source, cfg.Path())
	}

	var out io.Writer = stdout
	gz := false
	if *outPath != "" {
		f, err := os.Create(*outPath)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		defer f.Close()
		out = f
		gz = len(*outPath) > 3 && (*outPath)[len(*outPath)-3:] == ".gz"
	}
	bw := bufio.NewWriter(out)
	ww := &warc.Writer{W: bw, Gzip: gz}
	enc := json.NewEncoder(bw)
	n, skipped := 0, 0
	for _, id := range ids {
		list, err := deps.List(ctx, id, from)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		for _, d := range list {
			switch *format {
			case "jsonl":
				err = enc.Encode(depositLineOf(d))
			case "warc":
				if d.Proof == nil || d.Envelope == nil {
					skipped++ // an excerpt is not a read: nothing to archive
					continue
				}
				err = ww.Write(warcDeposit(d))
			}
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			n++
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	msg := fmt.Sprintf("export: %d deposits", n)
	if m, ok := deps.(*mergedDeposits); ok {
		msg += fmt.Sprintf(" from %d stores (%d copies held by more than one store written once)", len(m.files), m.copies.Load())
	}
	if skipped > 0 {
		msg += fmt.Sprintf(" (%d excerpts left out of the WARC: they are not reads)", skipped)
	}
	fmt.Fprintln(stderr, msg)
	return nil
}
