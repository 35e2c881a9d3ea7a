// Package rouge scores a summary against a reference with ROUGE-N and
// ROUGE-L (Lin, 2004): the overlap of their word n-grams, and their longest
// common subsequence of words, each as precision, recall and F-measure.
// Words are given already split and normalized (digest.Words lower-cases
// them and leaves punctuation out); no stemming and no stop-word removal,
// since the summaries are in several languages.
package rouge

import (
	"strings"
	"unicode"
)

// Score is one ROUGE measure of a candidate against a reference.
type Score struct {
	P, R, F float64 // precision, recall, F1
}

func score(match, cand, ref int) Score {
	if match == 0 || cand == 0 || ref == 0 {
		return Score{}
	}
	p, r := float64(match)/float64(cand), float64(match)/float64(ref)
	return Score{P: p, R: r, F: 2 * p * r / (p + r)}
}

// N returns ROUGE-N: the n-grams the candidate and reference share,
// each counted at most as often as it appears in both (clipped counts).
func N(cand, ref []string, n int) Score {
	cg, rg := grams(cand, n), grams(ref, n)
	match := 0
	for g, c := range cg {
		match += min(c, rg[g])
	}
	return score(match, max(len(cand)-n+1, 0), max(len(ref)-n+1, 0))
}

func grams(words []string, n int) map[string]int {
	m := map[string]int{}
	for i := 0; i+n <= len(words); i++ {
		key := words[i]
		for _, w := range words[i+1 : i+n] {
			key += "\x00" + w
		}
		m[key]++
	}
	return m
}

// L returns ROUGE-L: the longest common subsequence of words, over the
// candidate's length (precision) and the reference's (recall), summary
// level taken as one sequence each.
func L(cand, ref []string) Score {
	if len(cand) == 0 || len(ref) == 0 {
		return Score{}
	}
	prev := make([]int, len(ref)+1)
	cur := make([]int, len(ref)+1)
	for i := 1; i <= len(cand); i++ {
		for j := 1; j <= len(ref); j++ {
			switch {
			case cand[i-1] == ref[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return score(prev[len(ref)], len(cand), len(ref))
}

// Tokens returns the words of s as the public scorers count them: runs of
// Unicode letters, digits and underscores, lower-cased, everything else a
// separator (so "l'état" is two words and "well-known" two). No stemming.
func Tokens(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		word := r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			out = append(out, strings.ToLower(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, strings.ToLower(s[start:]))
	}
	return out
}
