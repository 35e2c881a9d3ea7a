package main

// The vault connector's document (policy 003), as configs/vault.yaml runs
// it: news-1 read through its public WordPress API with its WordPress
// backlog, news-2 through its pages with its sitemap backlog, news-3 (the
// CMS API with a credential) inactive.

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/provenance"
)

// V1, V2, V3: nothing of the trigger is kept (every deposit is an article
// read in full, none an excerpt); each article is read at its own address
// by its source's method: news-1's through the public API, as JSON,
// news-2's as its page; the CMS identifier agrees across feed, backlog and
// article, and is the deposit's key.
func TestVault_V1_V2_V3_ReadMethodsNothingOfTheTrigger(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "vault", 3, 2, nil)
	reps := s.runOnce()
	for i, id := range []string{"news-1", "news-2"} {
		r := reps[id]
		if r.Mismatched != 0 || r.Deposited != 2 {
			t.Errorf("%s: %+v, want both articles deposited, identifiers agreeing", id, r)
		}
		site := s.info.Sites[i]
		ids := map[string]bool{}
		for _, a := range site.Articles {
			ids[strconv.Itoa(a.ID)] = true
		}
		for _, d := range s.deposits(id) {
			if d.Excerpt != nil || len(d.Envelope) == 0 || d.Proof == nil {
				t.Errorf("%s %s: not an article read in full", id, d.Key)
			}
			if !ids[d.Key] {
				t.Errorf("%s: deposit key %q is not a CMS id of the site", id, d.Key)
			}
			switch id {
			case "news-1":
				if d.MediaType != "application/json" || !strings.Contains(d.URL, "/wp-json/wp/v2/posts/"+d.Key) {
					t.Errorf("news-1 %s: %s at %s, want the public API's JSON", d.Key, d.MediaType, d.URL)
				}
			case "news-2":
				if d.MediaType != "text/html" || !strings.HasPrefix(d.URL, "https://news-2.example/news/") {
					t.Errorf("news-2 %s: %s at %s, want the page", d.Key, d.MediaType, d.URL)
				}
			}
		}
	}
	if n := len(s.requests("news-3.example", "")); n != 0 {
		t.Errorf("the inactive source's host got %d requests", n)
	}
}

// V4, V7: the backlog is walked at start-up, then not again within 24
// hours while the feed is read every 15 minutes, then again a day later;
// and never two passes of a source at once, even from a second crawler
// sharing the store (another process).
func TestVault_V4_V7_BacklogDailyOnePassAtATime(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "vault", 2, 3, nil)
	started := make(chan struct{})
	var once sync.Once
	s.c.OnEvent = func(e crawl.Event) {
		if e.Kind == crawl.EventPassStarted && e.Source == "news-1" {
			once.Do(func() { close(started) })
		}
	}
	ctx := context.Background()
	var first *crawl.PassReport
	var firstErr error
	done := make(chan struct{})
	go func() { defer close(done); first, firstErr = s.c.Pass(ctx, "news-1") }()
	select {
	case <-started:
	case <-done:
		t.Fatalf("the first pass ended before it started: %v", firstErr)
	}
	other := &crawl.Crawler{Client: s.client, Sources: s.cfg.Sources, State: s.c.State, Deposits: s.c.Deposits, Clock: s.clk, Owner: "another-process"}
	if _, err := other.Pass(ctx, "news-1"); !errors.Is(err, crawl.ErrLeaseHeld) {
		t.Errorf("a second pass while the first runs: %v, want ErrLeaseHeld", err)
	}
	<-done
	if firstErr != nil || !first.BacklogRead || first.Backlog.Refs != 3 || !first.TriggerRead {
		t.Fatalf("start-up: %v, %+v; want the backlog walked (3 references) and the feed read", firstErr, first)
	}
	s.later(15 * time.Minute)
	rep, err := s.c.Pass(ctx, "news-1")
	if err != nil || rep.BacklogRead || !rep.TriggerRead {
		t.Fatalf("15 min on: %v, %+v; want the feed read and not the backlog", err, rep)
	}
	lists := len(s.requests("news-1.example", "/wp-json/wp/v2/posts"))
	s.later(24 * time.Hour)
	rep, err = s.c.Pass(ctx, "news-1")
	if err != nil || !rep.BacklogRead {
		t.Fatalf("a day on: %v, %+v; want the backlog walked again", err, rep)
	}
	if n := len(s.requests("news-1.example", "/wp-json/wp/v2/posts")); n <= lists {
		t.Errorf("a day on, no backlog list requested")
	}
}

// V5, V6: each deposit's envelope is the bytes as received (no coding was
// asked for, so none is removed), its proof names the final URL, the read
// instant and the digest of those bytes, and verifies offline against the
// web's CA at that instant.
func TestVault_V5_V6_EnvelopeAndProof(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "vault", 2, 2, nil)
	s.runOnce()
	roots := x509.NewCertPool()
	roots.AddCert(s.web.CACert())
	opts := provenance.VerifyOptions{Roots: roots, AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	n := 0
	for _, id := range []string{"news-1", "news-2"} {
		for _, d := range s.deposits(id) {
			n++
			p := d.Proof
			if p.Digest != provenance.DigestOf(d.Envelope) || p.Length != int64(len(d.Envelope)) || p.FinalURL != d.URL || len(p.CodingsRemoved) != 0 {
				t.Errorf("%s %s: proof %+v does not describe the envelope", id, d.Key, p)
			}
			if _, err := provenance.Verify(p, d.Envelope, opts); err != nil {
				t.Errorf("%s %s: %v", id, d.Key, err)
			}
			if d.Article == nil || d.Article.Headline.Value == "" {
				t.Errorf("%s %s: no headline copied", id, d.Key)
			}
		}
	}
	if n != 4 {
		t.Fatalf("%d deposits, want 4", n)
	}
}

// V9, V10: every request carries exactly User-Agent, Accept and
// Accept-Encoding: identity (the sources have no credential), never a
// cookie though every answer sets one, and goes over https.
func TestVault_V9_V10_FourHeadersNoCookies(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "vault", 2, 1, nil)
	for _, h := range []string{"news-1.example", "news-2.example"} {
		s.site(h).Misbehave("*", politetest.Behaviour{Kind: politetest.SetCookie})
	}
	s.runOnce()
	reqs := s.web.Requests()
	if len(reqs) < 8 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, q := range reqs {
		var names []string
		for k := range q.Header {
			names = append(names, k)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"Accept", "Accept-Encoding", "User-Agent"}) || q.Header.Get("Accept-Encoding") != "identity" || !q.TLS {
			t.Errorf("%s%s: headers %v (Accept-Encoding %q), TLS %v", q.Host, q.Path, names, q.Header.Get("Accept-Encoding"), q.TLS)
		}
	}
}

// V11: robots.txt is read before any other request; news-1's answers 404,
// which is no robots.txt (everything allowed, everything read); news-2's
// answers 503: nothing else is asked of news-2.
func TestVault_V11_Robots4xxAbsent5xxNothing(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "vault", 2, 2, nil)
	s.site("news-1.example").SetRobots(politetest.Robots{Status: http.StatusNotFound})
	s.site("news-2.example").SetRobots(politetest.Robots{Status: http.StatusServiceUnavailable})
	reps := s.runOnce()
	if r := reps["news-1"]; r.Deposited != 2 {
		t.Errorf("news-1 (robots.txt 404): %+v, want both articles deposited", r)
	}
	for _, host := range []string{"news-1.example", "news-2.example"} {
		if reqs := s.requests(host, ""); len(reqs) == 0 || reqs[0].Path != "/robots.txt" {
			t.Errorf("%s: robots.txt not first", host)
		}
	}
	for _, q := range s.requests("news-2.example", "") {
		if q.Path != "/robots.txt" {
			t.Errorf("news-2 (robots.txt 503): %s requested", q.Path)
		}
	}
	if len(s.deposits("news-2")) != 0 {
		t.Errorf("news-2 deposited with its robots.txt answering 503")
	}
}

// V12: only a final 200 received in full is deposited: a 404 and a
// truncated body deposit nothing, each read at most three times in the
// pass; the complete article is deposited.
func TestVault_V12_OnlyACompleteFinal200(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "vault", 2, 3, func(s *suite) { s.cfg.Sources = s.cfg.Sources[1:2] })
	arts := s.info.Sites[1].Articles
	n2 := s.site("news-2.example")
	n2.Misbehave(arts[0].Path, politetest.Behaviour{Kind: politetest.ServerError, Status: http.StatusNotFound})
	n2.Misbehave(arts[1].Path, politetest.Behaviour{Kind: politetest.Truncate})
	r := s.runOnce()["news-2"]
	ds := s.deposits("news-2")
	if len(ds) != 1 || ds[0].Key != strconv.Itoa(arts[2].ID) {
		t.Fatalf("deposits %v (report %+v), want only the complete article", ds, r)
	}
	for _, a := range arts[:2] {
		if n := len(s.requests("news-2.example", a.Path)); n < 1 || n > 3 {
			t.Errorf("%s read %d times in the pass, want 1 to 3", a.Path, n)
		}
	}
}

// V13: a deactivated source is never fetched again, and what it deposited
// stays as it was.
func TestVault_V13_DeactivatedNeverFetched(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "vault", 2, 1, nil)
	s.runOnce()
	before := s.deposits("news-2")
	if len(before) == 0 {
		t.Fatal("nothing deposited")
	}
	if err := s.c.Deactivate("news-2"); err != nil {
		t.Fatal(err)
	}
	asked := len(s.requests("news-2.example", ""))
	s.later(24 * time.Hour)
	s.runOnce()
	if n := len(s.requests("news-2.example", "")); n != asked {
		t.Errorf("%d requests to the deactivated source", n-asked)
	}
	after := s.deposits("news-2")
	if len(after) != len(before) {
		t.Fatalf("deposits %d, were %d", len(after), len(before))
	}
	for i := range after {
		if after[i].Digest != before[i].Digest || !after[i].ReadAt.Equal(before[i].ReadAt) {
			t.Errorf("deposit %s changed", after[i].Key)
		}
	}
}

// V11: a robots.txt answering 5xx stops everything on the host until it
// answers: ten minutes on, an operator's refresh is declined and nothing
// is sent; once the 15-minute retry is due, robots.txt is read again
// first, and now that it answers the articles are read and deposited.
func TestVault_V11_5xxRobotsRetriedAfter15Minutes(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "vault", 2, 2, func(s *suite) {
		s.cfg.Sources = s.cfg.Sources[1:2]
		s.chainClock = true
	})
	n2 := s.site("news-2.example")
	n2.SetRobots(politetest.Robots{Status: http.StatusServiceUnavailable})
	s.runOnce()
	for _, q := range s.requests("news-2.example", "") {
		if q.Path != "/robots.txt" {
			t.Fatalf("robots.txt 503: %s requested", q.Path)
		}
	}
	ctx := context.Background()
	s.nextPhase(10 * time.Minute)
	if _, err := s.c.Refresh(ctx, "news-2"); !errors.Is(err, crawl.ErrRefreshDeclined) {
		t.Errorf("a refresh 10 min on: %v, want it declined", err)
	}
	if n := len(s.web.Requests()); n != 0 {
		t.Errorf("10 min on: %d requests, want none before the 15-minute retry", n)
	}
	n2.SetRobots(politetest.Robots{Body: "User-agent: *\nAllow: /\n"})
	s.nextPhase(6 * time.Minute)
	r := s.runOnce()["news-2"]
	reqs := s.requests("news-2.example", "")
	if len(reqs) == 0 || reqs[0].Path != "/robots.txt" || r.Deposited != 2 {
		t.Fatalf("16 min on: %d requests (first %v), %+v; want robots.txt first, then both articles deposited", len(reqs), reqs, r)
	}
}

// V2, V9, V9b: the third way to read an article, the CMS API, with the
// credential the config names by reference (env:NEWS3_CMS_TOKEN): the
// credential travels only in its header, only on the API's requests to the
// admitted host (never with robots.txt or the feed), never in the logs;
// each request carries exactly the four headers.
func TestVault_V2_V9_V9b_CMSAPICredential(t *testing.T) {
	// Not parallel: the credential is read from the environment, as configured.
	const token = "Bearer vault-suite-s3cret"
	t.Setenv("NEWS3_CMS_TOKEN", token)
	var logs strings.Builder
	var logMu sync.Mutex
	s := newSuite(t, "vault", 3, 2, func(s *suite) {
		src := s.source("news-3-cms")
		src.Active = true
		s.cfg.Sources = []crawl.Source{*src}
		s.allowHeaders = []string{"Authorization"}
	})
	s.c.Logger = slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	arts := s.info.Sites[2].Articles
	s.site("news-3.example").Handle("/api/articles/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id := strings.TrimPrefix(r.URL.Path, "/api/articles/")
		for _, a := range arts {
			if strconv.Itoa(a.ID) == id {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":%d,"link":%q,"date_gmt":"2026-01-01T00:00:00","title":{"rendered":%q},"content":{"rendered":"<p>The story as the CMS holds it.</p>"}}`,
					a.ID, "https://news-3.example"+a.Path, a.Title)
				return
			}
		}
		http.NotFound(w, r)
	}))
	r := s.runOnce()["news-3-cms"]
	if r.Deposited != 2 || r.Mismatched != 0 {
		t.Fatalf("report %+v, want both articles read through the CMS API", r)
	}
	for _, q := range s.web.Requests() {
		api := strings.HasPrefix(q.Path, "/api/articles/")
		if got := q.Header.Get("Authorization"); (got == token) != api || (got != "" && got != token) {
			t.Errorf("%s%s: Authorization %q", q.Host, q.Path, got)
		}
		want := 3
		if api {
			want = 4
		}
		if len(q.Header) != want || q.Header.Get("Cookie") != "" {
			t.Errorf("%s%s: %d headers %v, want %d", q.Host, q.Path, len(q.Header), q.Header, want)
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	if logs.Len() == 0 || strings.Contains(logs.String(), "s3cret") {
		t.Errorf("the log (%d bytes) is empty or names the credential", logs.Len())
	}
}

// lockedWriter serialises writes to a shared builder.
type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// V10: a redirect is followed only to https, to a host the source admits,
// within the limit, and never one that adds a parameter the source did not
// declare: each such read stops, nothing is deposited, and the place it
// pointed to is never asked for; the well-behaved article is deposited.
func TestVault_V10_RedirectsWithinTheRules(t *testing.T) {
	t.Parallel()
	s := newSuite(t, "vault", 2, 5, func(s *suite) { s.cfg.Sources = s.cfg.Sources[1:2] })
	arts := s.info.Sites[1].Articles
	n2 := s.site("news-2.example")
	s.site("elsewhere.example")
	n2.Misbehave(arts[0].Path, politetest.Behaviour{Kind: politetest.RedirectAddParam, Param: "edition=2"})
	n2.Misbehave(arts[1].Path, politetest.Behaviour{Kind: politetest.RedirectToHost, Host: "elsewhere.example"})
	n2.Misbehave(arts[2].Path, politetest.Behaviour{Kind: politetest.RedirectToHTTP})
	n2.Misbehave(arts[3].Path, politetest.Behaviour{Kind: politetest.RedirectLoop})
	s.runOnce()
	ds := s.deposits("news-2")
	if len(ds) != 1 || ds[0].Key != strconv.Itoa(arts[4].ID) {
		t.Fatalf("%d deposits, want only the article that did not redirect", len(ds))
	}
	loops := 0
	for _, q := range s.web.Requests() {
		switch {
		case strings.Contains(q.Query, "edition="):
			t.Errorf("the redirect adding an undeclared parameter was followed: %s", q.Target)
		case q.Host == "elsewhere.example":
			t.Errorf("the redirect to a host not admitted was followed: %s", q.Target)
		case !q.TLS:
			t.Errorf("the redirect to http was followed: %s", q.Target)
		case q.Path == arts[3].Path:
			loops++
		}
	}
	if limit := 3 * (s.fp.MaxRedirects + 1); loops == 0 || loops > limit {
		t.Errorf("the redirect loop: %d requests, want at most %d (3 reads within the limit)", loops, limit)
	}
}
