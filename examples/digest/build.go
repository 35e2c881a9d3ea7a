package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/politefetch/politefetch/digest"
)

func (o options) prefs() digest.Preferences {
	return digest.Preferences{
		Categories: list(o.cats), ExcludeCategories: list(o.exCats),
		Sources: list(o.srcs), ExcludeSources: list(o.exSrcs),
		MaxPerCategory: o.max,
	}
}

// make builds the digest at now.
func (l *library) make(ctx context.Context, o options, now time.Time) (*digest.Digest, error) {
	stories, err := l.stories(ctx, now)
	if err != nil {
		return nil, err
	}
	b := digest.Builder{Title: o.title, Summarizer: l.summaries}
	return b.Build(ctx, now, stories, o.prefs())
}

func build(ctx context.Context, l *library, o options, now time.Time, stdout io.Writer) error {
	d, err := l.make(ctx, o, now)
	if err != nil {
		return err
	}
	var page bytes.Buffer
	po := digest.PageOptions{}
	if o.feed != "" {
		po.FeedURL = o.feed
	}
	if err := d.WriteHTML(&page, po); err != nil {
		return err
	}
	if err := os.WriteFile(o.out, page.Bytes(), 0o644); err != nil {
		return err
	}
	if o.feed != "" {
		var f bytes.Buffer
		if err := d.WriteJSONFeed(&f, "", ""); err != nil {
			return err
		}
		if err := os.WriteFile(o.feed, f.Bytes(), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "wrote %s: %d stories in %d categories\n", o.out, d.Cards(), len(d.Sections))
	return nil
}

// handler serves the page at / and the JSON Feed at /feed.json, each built
// at the request's instant.
func handler(l *library, o options, now func() time.Time) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		d, err := l.make(r.Context(), o, now())
		if err != nil {
			http.Error(w, "digest unavailable", http.StatusInternalServerError)
			return
		}
		var b bytes.Buffer
		if err := d.WriteHTML(&b, digest.PageOptions{FeedURL: "/feed.json"}); err != nil {
			http.Error(w, "digest unavailable", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src https: http:")
		_, _ = w.Write(b.Bytes())
	})
	mux.HandleFunc("GET /feed.json", func(w http.ResponseWriter, r *http.Request) {
		d, err := l.make(r.Context(), o, now())
		if err != nil {
			http.Error(w, "digest unavailable", http.StatusInternalServerError)
			return
		}
		var b bytes.Buffer
		home := "http://" + r.Host + "/"
		if err := d.WriteJSONFeed(&b, home, home+"feed.json"); err != nil {
			http.Error(w, "digest unavailable", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/feed+json")
		_, _ = w.Write(b.Bytes())
	})
	return mux
}

func serve(ctx context.Context, l *library, o options, stdout io.Writer) error {
	srv := &http.Server{
		Addr:              o.addr,
		Handler:           handler(l, o, time.Now),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		MaxHeaderBytes:    1 << 16,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	fmt.Fprintf(stdout, "serving the digest on http://%s/ (and /feed.json)\n", o.addr)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}
