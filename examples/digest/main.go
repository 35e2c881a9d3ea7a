// Command digest makes the daily digest of a crawl: two-sentence summaries
// on cards by category, each linking to its publisher, as a page and a
// JSON Feed.
//
//	digest build -store crawl.db [-config sources.yaml] -out digest.html [-feed digest.json]
//	digest serve -store crawl.db [-config sources.yaml] [-addr 127.0.0.1:8080]
//	digest build -demo -out digest.html     (a crawl of a simulated web, in this process)
//	digest serve -demo
//
// The stories are the deposits of the store (store/sqlite) read in the
// last day. -config names a crawl configuration whose sources: list gives
// each source's brand, category and, under logo:, its logo address; without
// it every source found in the store is shown under its ID. -demo crawls
// ten simulated publishers on a politetest web through the digest
// engine's fetch policy (its interval scaled down) and digests what was
// deposited; with -store, the demo's deposits are written to that file, so
// a later run without -demo reads them.
//
// Reader preferences: -categories Tech,World (only these, in this order),
// -exclude-categories, -sources, -exclude-sources (IDs or names), -max (per
// category). -summarizer URL has each article summarized by a service of
// yours (digest.HTTP: a JSON POST per article) instead of the local
// extractive summarizer; its answers are bounded to two sentences all the
// same. serve answers / with the page and /feed.json with the feed,
// each built afresh on every request so that ages are current.
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

	"github.com/politefetch/politefetch/digest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// options are the flags both commands share.
type options struct {
	store, config, title string
	summarizer           string
	demo                 bool
	cats, exCats         string
	srcs, exSrcs         string
	max                  int
	window               time.Duration // how far back the day's stories go
	// build
	out, feed string
	// serve
	addr string
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "build" && args[0] != "serve") {
		fmt.Fprintln(stderr, "usage: digest build|serve [-store crawl.db] [-config sources.yaml] [-demo] [flags]; digest build -h for the flags")
		return 2
	}
	cmd := args[0]
	fs := flag.NewFlagSet("digest "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.store, "store", "", "the crawl's SQLite store (store/sqlite)")
	fs.StringVar(&o.config, "config", "", "a crawl configuration whose sources: give brands, categories and logos")
	fs.BoolVar(&o.demo, "demo", false, "crawl a simulated web in this process and digest it (with -store, write its deposits there)")
	fs.StringVar(&o.title, "title", "", "the digest's title")
	fs.DurationVar(&o.window, "window", digest.DefaultWindow, "how far back the digest's stories go, by their publication time")
	fs.StringVar(&o.cats, "categories", "", "only these categories, in this order (comma-separated)")
	fs.StringVar(&o.exCats, "exclude-categories", "", "categories never shown (comma-separated)")
	fs.StringVar(&o.srcs, "sources", "", "only these sources, by ID or name (comma-separated)")
	fs.StringVar(&o.exSrcs, "exclude-sources", "", "sources never shown (comma-separated)")
	fs.IntVar(&o.max, "max", 0, "at most this many stories per category (0: the default, 8)")
	fs.StringVar(&o.summarizer, "summarizer", "", "summarize through this HTTP endpoint of yours (digest.HTTP) instead of locally")
	if cmd == "build" {
		fs.StringVar(&o.out, "out", "digest.html", "the page to write")
		fs.StringVar(&o.feed, "feed", "", "also write the JSON Feed here")
	} else {
		fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "the address to serve on")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if o.window <= 0 {
		fmt.Fprintf(stderr, "digest: -window %v: want a positive duration, such as 24h\n", o.window)
		return 2
	}
	if !o.demo && o.store == "" && o.config == "" {
		fmt.Fprintln(stderr, "digest: -store or -demo is required")
		return 2
	}
	src, err := open(ctx, o, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "digest:", err)
		return 1
	}
	defer src.Close()
	switch cmd {
	case "build":
		err = build(ctx, src, o, time.Now(), stdout)
	case "serve":
		err = serve(ctx, src, o, stdout)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "digest:", err)
		return 1
	}
	return 0
}

func list(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
