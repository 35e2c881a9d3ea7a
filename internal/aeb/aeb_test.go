package aeb

import (
	"os"
	"slices"
	"testing"
)

// The protocol's own cases: tokens, shingles as a multiset, normalised counts,
// and an empty prediction counting in recall only.
func TestScoring(t *testing.T) {
	if got := Tokens("Hello, wor_ld 42! café naïve 東京"); !slices.Equal(got, []string{"Hello", "wor_ld", "42", "café", "naïve", "東京"}) {
		t.Errorf("Tokens = %q", got)
	}
	tok := func(s string) []string { return Tokens(s) }
	cases := []struct {
		truth, pred string
		tp, fp, fn  float64
	}{
		{"", "", 0, 0, 0},
		{"a b c d e", "a b c d e", 1, 0, 0},
		{"a b c d e", "", 0, 0, 1},
		{"a b c d e", "a b c d x", 1.0 / 3, 1.0 / 3, 1.0 / 3},
		{"a b c d a b c d", "a b c d", 1.0 / 5, 0, 4.0 / 5},
		{"a b", "a b", 1, 0, 0},
	}
	for _, c := range cases {
		tp, fp, fn := Counts(tok(c.truth), tok(c.pred))
		if tp != c.tp || fp != c.fp || fn != c.fn {
			t.Errorf("Counts(%q, %q) = %v %v %v, want %v %v %v", c.truth, c.pred, tp, fp, fn, c.tp, c.fp, c.fn)
		}
	}
	pages := []Page{{ID: "a", Truth: "a b c d e", HasTruth: true}, {ID: "b", Truth: "a b c d e", HasTruth: true}, {ID: "c"}}
	s := ScorePages(pages, map[string]string{"a": "a b c d e", "b": "", "c": "whatever"})
	if s.Precision != 1 || s.Recall != 0.5 || s.Pages != 2 || s.Empty != 1 {
		t.Errorf("ScorePages = %+v", s)
	}
}

// TestAEB runs extract over the benchmark folder named by $AEB_DATA and
// fails below the project's goal, F1 0.975; without the variable (as in CI,
// where the data is not) it is skipped.
func TestAEB(t *testing.T) {
	dir := os.Getenv("AEB_DATA")
	if dir == "" {
		t.Skip("AEB_DATA not set")
	}
	pages, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := Run("extract", pages, 1, Extract)
	t.Logf("F1 %.4f, precision %.4f, recall %.4f, %d empty of %d", r.Score.F1, r.Score.Precision, r.Score.Recall, r.Score.Empty, r.Score.Pages)
	if r.Score.F1 < 0.975 {
		t.Errorf("F1 %.4f, under the goal of 0.975", r.Score.F1)
	}
}

// BenchmarkExtract runs extract over every page of the folder named by
// $AEB_DATA on one core and reports pages/s (goal: 300 or more); skipped
// without it:
//
//	AEB_DATA=DIR go test -run='^$' -bench=Extract -cpu=1 ./internal/aeb/
func BenchmarkExtract(b *testing.B) {
	dir := os.Getenv("AEB_DATA")
	if dir == "" {
		b.Skip("AEB_DATA not set")
	}
	pages, err := Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	var bytes int64
	for i := range pages {
		bytes += int64(len(pages[i].HTML))
	}
	b.SetBytes(bytes)
	b.ResetTimer()
	for b.Loop() {
		for i := range pages {
			Extract(&pages[i])
		}
	}
	b.ReportMetric(float64(b.N*len(pages))/b.Elapsed().Seconds(), "pages/s")
}
