package main

// The commands that ask about one URL (explain, fetch) share their flags
// and their set-up: the configuration, the client over its stores, and the
// Get options a crawl would give that URL (its kind, the source admitting
// its host).

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
)

// urlFlags are the flags of a command that asks about one URL.
type urlFlags struct {
	config, store, kind string
	nf                  netFlags
}

func (f *urlFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "the configuration file: the crawler's identity, its policy and sources (default: "+defaultConfig+" when it exists here)")
	fs.StringVar(&f.store, "store", "", "the SQLite state file (default: the config's)")
	fs.StringVar(&f.kind, "kind", "article", "read the URL as: article, feed, sitemap, api or image")
	f.nf.register(fs)
}

// urlCall is one URL asked about, with what a crawl would read it with.
type urlCall struct {
	cfg    *Config
	client *fetch.Client
	db     *stores
	url    string
	src    *crawl.Source // the source admitting the URL's host; nil: none
	opts   []fetch.GetOptions
}

// open checks the parsed flags and the one URL of fs's arguments, loads the
// configuration and opens the client over its stores, logging warnings to
// stderr. cmd names the command in errors; why says what the configuration
// is needed for.
func (f *urlFlags) open(ctx context.Context, cmd, why string, fs *flag.FlagSet, stderr io.Writer) (*urlCall, error) {
	if fs.NArg() != 1 {
		return nil, fmt.Errorf("%s: one URL expected: politecrawl %s -config FILE URL", cmd, cmd)
	}
	if f.config = configOrDefault(f.config); f.config == "" {
		return nil, fmt.Errorf("%s: -config FILE is required (no %s here): %s", cmd, defaultConfig, why)
	}
	kind, ok := kinds[f.kind]
	if !ok {
		return nil, fmt.Errorf("%s: -kind must be article, feed, sitemap, api or image, not %q", cmd, f.kind)
	}
	raw := fs.Arg(0)
	if u, err := url.Parse(raw); err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s: %q is not an absolute URL", cmd, raw)
	}
	if err := f.nf.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	cfg, err := LoadConfig(f.config)
	if err != nil {
		return nil, err
	}
	if f.store == "" {
		f.store = cfg.StorePath()
	}
	client, db, err := openClient(ctx, cfg, f.store, &f.nf, fetch.WithLogger(slog.New(quiet{slog.NewTextHandler(stderr, nil)})))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	c := &urlCall{cfg: cfg, client: client, db: db, url: raw, src: sourceFor(cfg, raw), opts: []fetch.GetOptions{{Kind: kind}}}
	if c.src != nil {
		c.opts = append(c.opts, fetch.GetOptions{Source: &fetch.Source{Admitted: c.src.Admitted, Params: c.src.Params}})
	}
	return c, nil
}

// Close closes the client, then its stores.
func (c *urlCall) Close() {
	c.client.Close()
	c.db.Close()
}

var kinds = map[string]fetch.Kind{
	"article": fetch.KindArticle, "feed": fetch.KindFeed, "sitemap": fetch.KindSitemap,
	"api": fetch.KindAPI, "image": fetch.KindImage,
}

func kindName(k fetch.Kind) string {
	for n, v := range kinds {
		if v == k {
			return n
		}
	}
	return "article"
}

// sourceFor returns the config's source whose admitted hosts hold raw's
// host (the first), or nil.
func sourceFor(cfg *Config, raw string) *crawl.Source {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	h := strings.ToLower(u.Hostname())
	for i := range cfg.Sources {
		for _, a := range cfg.Sources[i].Admitted {
			if d, ok := strings.CutPrefix(a, "*."); ok && (h == d || strings.HasSuffix(h, "."+d)) || h == a {
				return &cfg.Sources[i]
			}
		}
	}
	return nil
}
