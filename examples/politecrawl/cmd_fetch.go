package main

// politecrawl fetch -config FILE URL: the polite one-shot, as curl or
// scrapy fetch are for their users, with the identity, robots.txt, pacing,
// the ledger and the store exactly as a crawl would use them. It prints the
// status, the headers and the proof's summary, writes the body with -o, and
// on a refusal exits 1 with explain's reasons.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"time"

	"github.com/politefetch/politefetch/fetch"
)

func runFetch(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fetch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var uf urlFlags
	uf.register(fs)
	out := fs.String("o", "", "write the body (the envelope, decoded) to this file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	call, err := uf.open(ctx, "fetch", "the crawler's identity and policy", fs, stderr)
	if err != nil {
		return err
	}
	defer call.Close()
	client, raw, opts := call.client, call.url, call.opts

	res, err := client.Get(ctx, raw, opts...)
	var re *fetch.RefusedError
	if errors.As(err, &re) {
		// Refused by us: nothing was sent. Why, layer by layer.
		if e, xerr := client.Explain(ctx, raw, opts...); xerr == nil {
			printExplanation(stdout, call.src, e, time.Now())
		}
		return &ExitError{Code: 1, Msg: "fetch: refused: " + causeText(err)}
	}
	if res == nil {
		return &ExitError{Code: 1, Msg: "fetch: " + causeText(err)}
	}
	fmt.Fprintf(stdout, "%d %s\n", res.Status, res.FinalURL)
	names := make([]string, 0, len(res.Header))
	for k := range res.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range res.Header[k] {
			fmt.Fprintf(stdout, "%s: %s\n", k, v)
		}
	}
	fmt.Fprintf(stdout, "\nbody: %d bytes (%d on the wire)", res.Decoded, res.Wire)
	if res.NotModified {
		fmt.Fprint(stdout, "; 304: the validators kept still hold")
	}
	fmt.Fprintln(stdout)
	if p := res.Proof; p != nil {
		fmt.Fprintf(stdout, "proof: %s, %d hops, read at %s\n", p.Digest, len(p.Hops), p.ReadAt.UTC().Format(time.RFC3339))
	}
	if *out != "" && res.Body != nil {
		if werr := os.WriteFile(*out, res.Body, 0o644); werr != nil {
			return fmt.Errorf("fetch: -o: %w", werr)
		}
	}
	if err != nil {
		return &ExitError{Code: 1, Msg: "fetch: the body could not be read in full: " + err.Error()}
	}
	if res.Status != 200 && !res.NotModified {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("fetch: the server answered %d", res.Status)}
	}
	return nil
}
