package rouge

import (
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestROUGE(t *testing.T) {
	t.Parallel()
	cand := strings.Fields("the cat was found under the bed")
	ref := strings.Fields("the cat was under the bed")
	// ROUGE-1: 6 of 6 reference words, 6 of 7 candidate words.
	if s := N(cand, ref, 1); !near(s.R, 1) || !near(s.P, 6.0/7) || !near(s.F, 2*(6.0/7)/(1+6.0/7)) {
		t.Errorf("ROUGE-1 = %+v", s)
	}
	// ROUGE-2: bigrams shared: "the cat", "cat was", "under the", "the bed" = 4; ref 5, cand 6.
	if s := N(cand, ref, 2); !near(s.R, 4.0/5) || !near(s.P, 4.0/6) {
		t.Errorf("ROUGE-2 = %+v", s)
	}
	// ROUGE-L: the LCS is the whole reference (6).
	if s := L(cand, ref); !near(s.R, 1) || !near(s.P, 6.0/7) {
		t.Errorf("ROUGE-L = %+v", s)
	}
	// Clipped counts: "the the the" against "the cat" matches once.
	if s := N(strings.Fields("the the the"), strings.Fields("the cat"), 1); !near(s.P, 1.0/3) || !near(s.R, 0.5) {
		t.Errorf("clipped ROUGE-1 = %+v", s)
	}
	if s := L(nil, ref); s != (Score{}) {
		t.Errorf("empty candidate: %+v", s)
	}
	if s := N(strings.Fields("a"), ref, 2); s != (Score{}) {
		t.Errorf("too short for bigrams: %+v", s)
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	got := strings.Join(Tokens("L'État a 3,5 % — U.S. well-known snake_case, d’accord."), "|")
	want := "l|état|a|3|5|u|s|well|known|snake_case|d|accord"
	if got != want {
		t.Errorf("Tokens = %s, want %s", got, want)
	}
}
