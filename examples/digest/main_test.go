package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// build -demo crawls the simulated web, writes its deposits to a SQLite
// store, and writes the page and the feed, where the stories of the source
// without a full-text licence (S6) and of the one whose robots.txt refuses
// its articles (S5) are labelled excerpts; build -store then reads the same
// stories back from the file alone.
func TestBuild_S5_S6_DemoThenStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "crawl.db")
	page, feedPath := filepath.Join(dir, "d.html"), filepath.Join(dir, "d.json")
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"build", "-demo", "-store", db, "-out", page, "-feed", feedPath}, &out, &errOut); code != 0 {
		t.Fatalf("build -demo: exit %d: %s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "the auditor found 0 violations") {
		t.Errorf("output lacks the audit: %s", out.String())
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2 id=\"cat-tech-h\">Tech</h2>", "Read full story on Bytes Daily", "Excerpt from the publisher"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
	var f struct {
		Items []struct {
			URL     string   `json:"url"`
			Tags    []string `json:"tags"`
			Authors []struct {
				Name string `json:"name"`
			} `json:"authors"`
		} `json:"items"`
	}
	b, err := os.ReadFile(feedPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil || len(f.Items) != 24 {
		t.Fatalf("feed: %d items, %v; want 24", len(f.Items), err)
	}
	excerpts := map[string]int{}
	for _, it := range f.Items {
		if slices.Contains(it.Tags, "excerpt") {
			excerpts[it.Authors[0].Name]++
		}
	}
	if len(excerpts) != 2 || excerpts["Le Quotidien du Port"] != 2 || excerpts["Rundschau Nord"] != 2 {
		t.Errorf("excerpts by publisher: %v, want both stories of Le Quotidien du Port (no licence) and Rundschau Nord (refused)", excerpts)
	}

	// From the store alone: the same stories, each source under its ID.
	out.Reset()
	page2 := filepath.Join(dir, "d2.html")
	if code := run(context.Background(), []string{"build", "-store", db, "-out", page2, "-categories", "Sports,Tech", "-max", "2"}, &out, &errOut); code != 0 {
		t.Fatalf("build -store: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "4 stories in 2 categories") {
		t.Errorf("build -store: %s", out.String())
	}
	html, _ = os.ReadFile(page2)
	if !bytes.Contains(html, []byte("Read full story on matchday.example")) {
		t.Errorf("a source without a configuration shows under its ID")
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), nil, &out, &errOut); code != 2 {
		t.Errorf("no command: exit %d", code)
	}
	if code := run(context.Background(), []string{"build"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "-store or -demo") {
		t.Errorf("build without a store: exit %d, %s", code, errOut.String())
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	if code := run(context.Background(), []string{"build", "-store", missing}, &out, &errOut); code != 1 {
		t.Errorf("build from a missing store: exit %d", code)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("reading a missing store created it")
	}
}

// -summarizer sends each article to the user's endpoint, once, and the page
// shows at most two of the sentences it answers.
func TestBuild_D6_HTTPSummarizer(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct{ Headline string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		_ = json.NewEncoder(w).Encode(map[string]string{"summary": "Model says: " + req.Headline + ". Second line. Third line never shows."})
	}))
	defer srv.Close()
	dir := t.TempDir()
	page := filepath.Join(dir, "d.html")
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"build", "-demo", "-summarizer", srv.URL, "-out", page}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if n := calls.Load(); n != 20 {
		t.Errorf("%d calls to the summarizer, want one per article read in full (20)", n)
	}
	html, _ := os.ReadFile(page)
	if !bytes.Contains(html, []byte("Model says: ")) || bytes.Contains(html, []byte("Third line")) {
		t.Errorf("the page does not show the endpoint's summaries bounded to two sentences")
	}
}
