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
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"time"

	"github.com/politefetch/politefetch/fetch"
)

func runFetch(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fetch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "the configuration file: the crawler's identity, its policy and sources (default: "+defaultConfig+" when it exists here)")
	storePath := fs.String("store", "", "the SQLite state file (default: the config's)")
	kindName := fs.String("kind", "article", "read the URL as: article, feed, sitemap, api or image")
	out := fs.String("o", "", "write the body (the envelope, decoded) to this file")
	var nf netFlags
	nf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("fetch: one URL expected: politecrawl fetch -config FILE URL")
	}
	if *configPath = configOrDefault(*configPath); *configPath == "" {
		return errors.New("fetch: -config FILE is required (no " + defaultConfig + " here): the crawler's identity and policy")
	}
	kind, ok := kinds[*kindName]
	if !ok {
		return fmt.Errorf("fetch: -kind must be article, feed, sitemap, api or image, not %q", *kindName)
	}
	raw := fs.Arg(0)
	if u, err := url.Parse(raw); err != nil || u.Host == "" {
		return fmt.Errorf("fetch: %q is not an absolute URL", raw)
	}
	if err := nf.check(); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	cfg, err := LoadConfig(*configPath)
	if err != nil {
		return err
	}
	if *storePath == "" {
		*storePath = cfg.StorePath()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	client, db, err := openClient(ctx, cfg, *storePath, &nf, fetch.WithLogger(slog.New(quiet{slog.NewTextHandler(stderr, nil)})))
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	defer db.Close()
	defer client.Close()

	opts := []fetch.GetOption{fetch.AsKind(kind)}
	src := sourceFor(cfg, raw)
	if src != nil {
		opts = append(opts, fetch.WithSource(fetch.Source{Admitted: src.Admitted, Params: src.Params}))
	}
	res, err := client.Get(ctx, raw, opts...)
	var re *fetch.RefusedError
	if errors.As(err, &re) {
		// Refused by us: nothing was sent. Why, layer by layer.
		if e, xerr := client.Explain(ctx, raw, opts...); xerr == nil {
			printExplanation(stdout, cfg, src, e, time.Now())
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
