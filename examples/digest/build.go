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
		MaxPerCategory: o.max, Window: o.window,
	}
}

// make builds the digest at now.
func (l *library) make(ctx context.Context, o options, now time.Time) (*digest.Digest, []digest.Story, error) {
	stories, err := l.stories(ctx, now, o.window)
	if err != nil {
		return nil, nil, err
	}
	b := digest.Builder{Title: o.title, Summarizer: l.summaries}
	d, err := b.Build(ctx, now, stories, o.prefs())
	return d, stories, err
}

// emptyReason says why a digest holds no story: nothing read in the
// window, or the newest story's age against the window.
func emptyReason(stories []digest.Story, window time.Duration, now time.Time) string {
	if len(stories) == 0 {
		return "the store holds no story of these sources (crawl first, or check -config's sources)"
	}
	var newest time.Time
	for _, s := range stories {
		if s.Published.After(newest) {
			newest = s.Published
		}
	}
	if newest.IsZero() {
		return fmt.Sprintf("%d deposits read, none with a date", len(stories))
	}
	return fmt.Sprintf("%d stories in the store, but the newest was published %v ago (%s), beyond -window %v",
		len(stories), now.Sub(newest).Round(time.Second), newest.Format(time.RFC3339), window)
}

func build(ctx context.Context, l *library, o options, now time.Time, stdout io.Writer) error {
	d, stories, err := l.make(ctx, o, now)
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
	if d.Cards() == 0 {
		if len(stories) == 0 { // nothing read in the window: what is there at all?
			if all, err := digest.Stories(ctx, l.deps, l.pubs, time.Time{}); err == nil {
				stories = all
			}
		}
		fmt.Fprintf(stdout, "the digest is empty: %s\n", emptyReason(stories, o.window, now))
	}
	return nil
}

// handler serves the page at / and the JSON Feed at /feed.json, each built
// at the request's instant.
func handler(l *library, o options, now func() time.Time) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		d, _, err := l.make(r.Context(), o, now())
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
		d, _, err := l.make(r.Context(), o, now())
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
