// Package aeb runs article extractors over a folder shaped like the public
// article-extraction benchmark (html/<id>.html.gz and ground-truth.json) and
// scores them by its protocol: 4-token shingles of word runs, counts
// normalised per page, precision averaged over pages with a prediction,
// recall over all pages, F1 the harmonic mean of the two means.
//
// The data never lives in this repository; commands take its folder as a
// flag. This package is for benchmark commands only.
package aeb

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
	"unicode"
)

// Page is one page of a benchmark folder.
type Page struct {
	ID       string
	URL      string // from the ground truth; "" when the page has none
	HTML     []byte // decompressed
	Truth    string
	HasTruth bool
}

// Load reads every html/<id>.html.gz (or .html) of dir and, when present,
// dir/ground-truth.json. Pages are sorted by id.
func Load(dir string) ([]Page, error) {
	truth := map[string]struct {
		ArticleBody string `json:"articleBody"`
		URL         string `json:"url"`
	}{}
	if b, err := os.ReadFile(filepath.Join(dir, "ground-truth.json")); err == nil {
		if err := json.Unmarshal(b, &truth); err != nil {
			return nil, fmt.Errorf("aeb: ground truth: %w", err)
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "html", "*.html*"))
	if err != nil {
		return nil, err
	}
	var pages []Page
	for _, f := range files {
		id := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".gz"), ".html")
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(f, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, fmt.Errorf("aeb: %s: %w", f, err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				return nil, fmt.Errorf("aeb: %s: %w", f, err)
			}
		}
		p := Page{ID: id, HTML: b}
		if t, ok := truth[id]; ok {
			p.URL, p.Truth, p.HasTruth = t.URL, t.ArticleBody, true
		}
		pages = append(pages, p)
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("aeb: no pages under %s", filepath.Join(dir, "html"))
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].ID < pages[j].ID })
	return pages, nil
}

// Extractor returns the article body of one page as plain text.
type Extractor func(p *Page) string

// Result is one extractor's run over a folder.
type Result struct {
	Name        string
	Score       Score
	PagesPerSec float64 // on one core, parse and extraction only, best of the rounds
	// CPUPagesPerSec is the same by the process's CPU time rather than the
	// wall clock, which a busy machine slows; 0 where the system does not
	// report it.
	CPUPagesPerSec float64
	Predictions    map[string]string // by page id
}

// Run runs f over every page rounds times with GOMAXPROCS set to 1 and
// scores the last round's output. Pages are read before the clock starts.
func Run(name string, pages []Page, rounds int, f Extractor) Result {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	rounds = max(rounds, 1)
	preds := make(map[string]string, len(pages))
	best, bestCPU := time.Duration(0), time.Duration(0)
	for range rounds {
		runtime.GC()
		start, startCPU := time.Now(), cpuTime()
		for i := range pages {
			preds[pages[i].ID] = f(&pages[i])
		}
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
		if d := cpuTime() - startCPU; bestCPU == 0 || d < bestCPU {
			bestCPU = d
		}
	}
	r := Result{
		Name:        name,
		Score:       ScorePages(pages, preds),
		PagesPerSec: float64(len(pages)) / best.Seconds(),
		Predictions: preds,
	}
	if bestCPU > 0 {
		r.CPUPagesPerSec = float64(len(pages)) / bestCPU.Seconds()
	}
	return r
}

// WritePredictions writes preds in the benchmark's format:
// {id: {"articleBody": text}}.
func WritePredictions(path string, preds map[string]string) error {
	out := make(map[string]map[string]string, len(preds))
	for id, t := range preds {
		out[id] = map[string]string{"articleBody": t}
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Score is the benchmark's figure for one extractor.
type Score struct {
	F1, Precision, Recall float64
	Pages                 int // pages with ground truth
	Empty                 int // of which the prediction has no word
	PerPage               []PageScore
}

// PageScore is one page's share of a Score.
type PageScore struct {
	ID                    string
	URL                   string
	Precision, Recall, F1 float64 // -1 when undefined
	TruthWords, PredWords int
}

// ScorePages scores preds against the pages that have ground truth.
func ScorePages(pages []Page, preds map[string]string) Score {
	var s Score
	var psum, rsum float64
	var pn, rn int
	for i := range pages {
		p := &pages[i]
		if !p.HasTruth {
			continue
		}
		s.Pages++
		tt, pt := Tokens(p.Truth), Tokens(preds[p.ID])
		if len(pt) == 0 {
			s.Empty++
		}
		tp, fp, fn := Counts(tt, pt)
		ps := PageScore{ID: p.ID, URL: p.URL, Precision: -1, Recall: -1, F1: -1, TruthWords: len(tt), PredWords: len(pt)}
		if tp+fp > 0 {
			ps.Precision = tp / (tp + fp)
			psum += ps.Precision
			pn++
		}
		if tp+fn > 0 {
			ps.Recall = tp / (tp + fn)
			rsum += ps.Recall
			rn++
		}
		if ps.Precision > 0 && ps.Recall > 0 {
			ps.F1 = 2 * ps.Precision * ps.Recall / (ps.Precision + ps.Recall)
		} else if ps.Precision >= 0 || ps.Recall >= 0 {
			ps.F1 = 0
		}
		s.PerPage = append(s.PerPage, ps)
	}
	if pn > 0 {
		s.Precision = psum / float64(pn)
	}
	if rn > 0 {
		s.Recall = rsum / float64(rn)
	}
	if s.Precision+s.Recall > 0 {
		s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
	}
	return s
}

// Tokens splits text into runs of word characters: letters, numbers and
// the underscore (Python's \w on str).
func Tokens(text string) []string {
	var out []string
	start := -1
	for i, r := range text {
		w := r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
		switch {
		case w && start < 0:
			start = i
		case !w && start >= 0:
			out = append(out, text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	return out
}

// shingle is the number of tokens in a shingle.
const shingle = 4

func shingles(toks []string) map[string]int {
	m := map[string]int{}
	if len(toks) == 0 {
		return m
	}
	if len(toks) < shingle {
		m[strings.Join(toks, "\x00")]++
		return m
	}
	for i := 0; i+shingle <= len(toks); i++ {
		m[strings.Join(toks[i:i+shingle], "\x00")]++
	}
	return m
}

// Counts returns the shingle counts shared (tp), predicted only (fp) and
// true only (fn), divided by their sum; all zero when both are empty.
func Counts(truth, pred []string) (tp, fp, fn float64) {
	t, p := shingles(truth), shingles(pred)
	var itp, ifp, ifn int
	for k, pc := range p {
		tc := t[k]
		itp += min(tc, pc)
		ifp += max(pc-tc, 0)
	}
	for k, tc := range t {
		ifn += max(tc-p[k], 0)
	}
	total := float64(itp + ifp + ifn)
	if total == 0 {
		return 0, 0, 0
	}
	return float64(itp) / total, float64(ifp) / total, float64(ifn) / total
}

// Print writes one line per result: F1, precision, recall, empty pages,
// pages/s by the wall clock and by CPU time.
func Print(w io.Writer, results ...Result) {
	fmt.Fprintf(w, "%-14s %7s %9s %7s %6s %9s %9s\n", "extractor", "F1", "precision", "recall", "empty", "pages/s", "CPU p/s")
	for _, r := range results {
		if r.Score.Pages == 0 {
			fmt.Fprintf(w, "%-14s %7s %9s %7s %6s %9.1f %9.1f  (no ground truth)\n", r.Name, "-", "-", "-", "-", r.PagesPerSec, r.CPUPagesPerSec)
			continue
		}
		fmt.Fprintf(w, "%-14s %7.4f %9.4f %7.4f %6d %9.1f %9.1f\n", r.Name, r.Score.F1, r.Score.Precision, r.Score.Recall, r.Score.Empty, r.PagesPerSec, r.CPUPagesPerSec)
	}
}

// Worst writes the n pages of r with the lowest F1.
func Worst(w io.Writer, r Result, n int) {
	pp := append([]PageScore(nil), r.Score.PerPage...)
	sort.SliceStable(pp, func(i, j int) bool { return pp[i].F1 < pp[j].F1 })
	for _, p := range pp[:min(n, len(pp))] {
		fmt.Fprintf(w, "%.3f p=%.3f r=%.3f truth=%d pred=%d %s %s\n", p.F1, p.Precision, p.Recall, p.TruthWords, p.PredWords, p.ID[:12], p.URL)
	}
}
