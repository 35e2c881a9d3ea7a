// Command rougebench scores digest's summaries of the digesttest news set
// against the set's reference summaries with ROUGE-1, ROUGE-2 and ROUGE-L
// (F-measure, words lower-cased, punctuation left out, no stemming), beside
// the lead-2 baseline (the body's first two sentences) on the same stories,
// overall and per language.
//
//	go run ./digest/internal/rougebench [-v]
//
// -v prints each story's scores and summaries too.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/politefetch/politefetch/digest"
	"github.com/politefetch/politefetch/digest/digesttest"
	"github.com/politefetch/politefetch/digest/internal/rouge"
)

func main() {
	verbose := flag.Bool("v", false, "print each story's scores and summaries")
	flag.Parse()
	if err := run(*verbose); err != nil {
		fmt.Fprintln(os.Stderr, "rougebench:", err)
		os.Exit(1)
	}
}

// scores holds the sums of the three F-measures over n stories.
type scores struct {
	n          int
	r1, r2, rl float64
}

func (s *scores) add(cand, ref string) (r1, r2, rl float64) {
	c, r := digest.Words(cand), digest.Words(ref)
	r1, r2, rl = rouge.N(c, r, 1).F, rouge.N(c, r, 2).F, rouge.L(c, r).F
	s.n++
	s.r1 += r1
	s.r2 += r2
	s.rl += rl
	return
}

func (s scores) String() string {
	n := float64(max(s.n, 1))
	return fmt.Sprintf("%.4f\t%.4f\t%.4f", s.r1/n, s.r2/n, s.rl/n)
}

func run(verbose bool) error {
	news, err := digesttest.News()
	if err != nil {
		return err
	}
	ours, lead := map[string]*scores{"all": {}}, map[string]*scores{"all": {}}
	langs := []string{"all"}
	for _, st := range news {
		if ours[st.Lang] == nil {
			ours[st.Lang], lead[st.Lang] = &scores{}, &scores{}
			langs = append(langs, st.Lang)
		}
		sum, err := digest.Extractive{}.Summarize(context.Background(), st.Article())
		if err != nil {
			return fmt.Errorf("%s: %w", st.ID, err)
		}
		l2 := digest.Bound(digest.Sentences(st.Body()), 1<<20) // the first two sentences, unbounded in length
		var o, b [3]float64
		for _, k := range []string{"all", st.Lang} {
			o[0], o[1], o[2] = ours[k].add(sum.Text(), st.Reference)
			b[0], b[1], b[2] = lead[k].add(strings.Join(l2, " "), st.Reference)
		}
		if verbose {
			fmt.Printf("%s\tours %.3f %.3f %.3f\tlead-2 %.3f %.3f %.3f\n  ours: %s\n  lead: %s\n",
				st.ID, o[0], o[1], o[2], b[0], b[1], b[2], sum.Text(), strings.Join(l2, " "))
		}
	}
	fmt.Printf("ROUGE F-measure of %d stories against their written two-sentence references\n", ours["all"].n)
	tw := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "set\tsummarizer\tROUGE-1\tROUGE-2\tROUGE-L")
	for _, k := range langs {
		fmt.Fprintf(tw, "%s (%d)\tdigest.Extractive\t%s\n", k, ours[k].n, ours[k])
		fmt.Fprintf(tw, "%s (%d)\tlead-2\t%s\n", k, lead[k].n, lead[k])
	}
	return tw.Flush()
}
