package main

// politecrawl explain -config FILE [-store FILE] [-kind KIND] URL: may this
// URL be read now, and why, from the same state the crawl uses (the store's
// ledger, robots.txt records and pacing). Exit status 0: allowed; 1:
// refused; 2: the question could not be answered.

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
	"strings"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/robots"
)

// ExitError is a command's failure with its exit status: 1 for an answer
// that is "no" (a refused URL, a failed verification), where 2 means the
// command could not run.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

var kinds = map[string]fetch.Kind{
	"article": fetch.KindArticle, "feed": fetch.KindFeed, "sitemap": fetch.KindSitemap,
	"api": fetch.KindAPI, "image": fetch.KindImage,
}

func runExplain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "the configuration file: the crawler's identity, its policy and sources (default: "+defaultConfig+" when it exists here)")
	storePath := fs.String("store", "", "the SQLite state file (default: the config's)")
	kindName := fs.String("kind", "article", "read the URL as: article, feed, sitemap, api or image")
	var nf netFlags
	nf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("explain: one URL expected: politecrawl explain -config FILE URL")
	}
	if *configPath = configOrDefault(*configPath); *configPath == "" {
		return errors.New("explain: -config FILE is required (no " + defaultConfig + " here): the crawler's identity and policy decide the answer")
	}
	kind, ok := kinds[*kindName]
	if !ok {
		return fmt.Errorf("explain: -kind must be article, feed, sitemap, api or image, not %q", *kindName)
	}
	raw := fs.Arg(0)
	if u, err := url.Parse(raw); err != nil || u.Host == "" {
		return fmt.Errorf("explain: %q is not an absolute URL", raw)
	}
	if err := nf.check(); err != nil {
		return fmt.Errorf("explain: %w", err)
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
		return fmt.Errorf("explain: %w", err)
	}
	defer db.Close()
	defer client.Close()

	opts := []fetch.GetOption{fetch.AsKind(kind)}
	src := sourceFor(cfg, raw)
	if src != nil {
		opts = append(opts, fetch.WithSource(fetch.Source{Admitted: src.Admitted, Params: src.Params}))
	}
	e, err := client.Explain(ctx, raw, opts...)
	if err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	printExplanation(stdout, cfg, src, e, time.Now())
	if !e.Allowed {
		return &ExitError{Code: 1, Msg: "explain: refused: " + strings.TrimPrefix(e.Refusal.Error(), "fetch: refused ")}
	}
	return nil
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

func printExplanation(w io.Writer, cfg *Config, src *crawl.Source, e fetch.Explanation, now time.Time) {
	at := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	if e.Allowed {
		row(w, "verdict", "allowed")
	} else {
		row(w, "verdict", "refused: "+strings.TrimPrefix(e.Refusal.Error(), "fetch: refused "))
	}
	row(w, "url", e.URL+" (as it would be requested: tracking parameters removed)")
	if e.Host != "" {
		row(w, "host", e.Host+", paced and ledgered as "+e.Key)
	}
	row(w, "kind", kindName(e.Kind))
	if src != nil {
		state := "active"
		if !src.Active {
			state = "inactive: never fetched"
		}
		row(w, "source", fmt.Sprintf("%s (%s), %s, policy %s", src.ID, src.Name, state, src.Policy.Preset))
		if !src.FullText && e.Kind == fetch.KindArticle {
			row(w, "licence", "no full text: the crawl keeps the feed's excerpt and does not read this source's articles")
		}
	} else {
		row(w, "source", "none of the config's sources admits this host")
	}
	d := e.Robots
	switch {
	case d.Site == "" && e.Host == "":
		row(w, "robots.txt", "not asked: refused before it")
	case d.Site == "":
		row(w, "robots.txt", "no record")
	default:
		rec := "fetched " + at(d.FetchedAt)
		if d.Status != 0 {
			rec += fmt.Sprintf(", status %d", d.Status)
		}
		if d.Failure != "" {
			rec += ", failed: " + d.Failure
		}
		if d.Stale {
			rec += ", a last good copy"
		}
		rec += ", stands until " + at(d.Expires)
		row(w, "robots.txt", rec)
		switch d.Outcome {
		case robots.DisallowAll:
			row(w, "robots.txt rule", "the whole site is disallowed by the answer to robots.txt")
		case robots.AllowAll:
			row(w, "robots.txt rule", "everything allowed (no robots.txt to obey)")
		default:
			grp := "no group applies"
			if d.Group != "" {
				grp = fmt.Sprintf("group %q (line %d)", d.Group, d.AgentLine)
			}
			rule := "no rule matches: allowed by default"
			if d.Rule != "" {
				rule = fmt.Sprintf("%q (line %d)", d.Rule, d.Line)
			}
			row(w, "robots.txt rule", grp+"; "+rule+" for "+d.Path)
		}
	}
	if e.CrawlDelay > 0 {
		row(w, "crawl-delay", fmtDuration(e.CrawlDelay))
	} else {
		row(w, "crawl-delay", "none")
	}
	l := e.Ledger
	switch {
	case l.Host == "":
		row(w, "ledger", "not asked")
	case !l.Allowed && l.Reason == backoff.Suspended:
		row(w, "ledger", fmt.Sprintf("suspended until %s (%d refusals in a row, last %s at %s)", at(l.Until), l.Strikes, l.Cause, at(l.LastAt)))
	case !l.Allowed && l.Reason == backoff.Unavailable:
		row(w, "ledger", "the ledger's store could not be read: refused (fail closed)")
	case !l.Allowed:
		row(w, "ledger", fmt.Sprintf("cooling down until %s (%d refusals in a row, last %s at %s)", at(l.Until), l.Strikes, l.Cause, at(l.LastAt)))
	case l.Reason == backoff.Recheck:
		row(w, "ledger", "suspended, its re-check is due: the next read is that re-check")
	case l.Strikes > 0:
		row(w, "ledger", fmt.Sprintf("clear (%d refusals in a row, last %s at %s)", l.Strikes, l.Cause, at(l.LastAt)))
	default:
		row(w, "ledger", "clear")
	}
	if e.NextSlot.IsZero() || !e.NextSlot.After(now) {
		row(w, "next slot", "now")
	} else {
		row(w, "next slot", at(e.NextSlot))
	}
}

func kindName(k fetch.Kind) string {
	for n, v := range kinds {
		if v == k {
			return n
		}
	}
	return "article"
}
