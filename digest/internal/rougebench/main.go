// Command rougebench scores digest's summaries against reference summaries
// with ROUGE-1, ROUGE-2 and ROUGE-L F1 (×100; words are lower-cased runs of
// letters, digits and underscores, as the public scorers count them; no
// stemming), beside lead-2 cut to the digest's limit (the body's first two
// sentences, at most [digest.MaxSentences] sentences and
// [digest.DefaultMaxChars] characters, as [digest.Bound] cuts any summary),
// each system in the same run, overall and per language.
//
//	go run ./digest/internal/rougebench [-data NEWS.jsonl] [-out SUMMARIES.jsonl] [-as LANG] [-oracle] [-v]
//
// Without -data (or $DIGEST_NEWS) it scores the digesttest news set (thirty
// stories of our own with written references). With it, it scores a file
// of one JSON object a line, {"id", "lang", "source", "title", "text",
// "reference"}, the text's paragraphs separated by newlines: a public
// news-summarisation set kept outside the repository. -out writes each
// system's summaries, one {"id", "system", "summary", "resplit"} a line,
// for an outside scorer. -v prints each story's scores and summaries.
// -as LANG tells the summarizer every story is in LANG (the articles'
// language tag), to score one language's path on another's stories.
// -oracle adds the best pair of the body's sentences within the limit, as
// scored against the reference: the ceiling of any extractive summarizer.
//
// The table also counts the summaries within two sentences and the
// character limit, and those that are the whole body (a bug if any).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/politefetch/politefetch/digest"
	"github.com/politefetch/politefetch/digest/digesttest"
	"github.com/politefetch/politefetch/digest/internal/rouge"
	"github.com/politefetch/politefetch/extract"
)

func main() {
	data := flag.String("data", os.Getenv("DIGEST_NEWS"), "a JSON Lines news set (default $DIGEST_NEWS; none: the digesttest set)")
	out := flag.String("out", "", "write each system's summaries here, as JSON Lines")
	verbose := flag.Bool("v", false, "print each story's scores and summaries")
	oracle := flag.Bool("oracle", false, "add the best pair of the body's sentences within the limit (the extractive ceiling)")
	as := flag.String("as", "", "tell the summarizer every story is in this language (e.g. en: the TextRank path on any set)")
	flag.Parse()
	stories, err := load(*data)
	asLang = *as
	if err == nil {
		err = run(os.Stdout, stories, *out, *verbose, *oracle)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rougebench:", err)
		os.Exit(1)
	}
}

// story is one line of a news set.
type story struct {
	ID        string `json:"id"`
	Lang      string `json:"lang"`
	Source    string `json:"source"`
	Title     string `json:"title"`
	Text      string `json:"text"`
	Reference string `json:"reference"`
}

// asLang, when set, is the language every article is said to be in.
var asLang string

func (s story) article() *extract.Article {
	a := &extract.Article{
		Headline: extract.Field{Value: s.Title},
		Language: extract.Field{Value: s.Lang},
	}
	if asLang != "" {
		a.Language.Value = asLang
	}
	for _, p := range strings.Split(s.Text, "\n") {
		if p = strings.TrimSpace(p); p != "" {
			a.Blocks = append(a.Blocks, extract.Block{Kind: extract.Paragraph, Text: p})
		}
	}
	return a
}

func load(path string) ([]story, error) {
	if path == "" {
		news, err := digesttest.News()
		if err != nil {
			return nil, err
		}
		out := make([]story, len(news))
		for i, st := range news {
			out[i] = story{ID: st.ID, Lang: st.Lang, Source: "digesttest", Title: st.Title,
				Text: strings.Join(st.Paragraphs, "\n"), Reference: st.Reference}
		}
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []story
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var s story
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if s.ID == "" || s.Text == "" || s.Reference == "" {
			return nil, fmt.Errorf("%s:%d: id, text and reference are required", path, line)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New(path + ": no stories")
	}
	return out, nil
}

// tally sums a system's scores over a set of stories.
type tally struct {
	n                int
	r1, r2, rl       float64
	chars            int
	inSents, inChars int
	whole            int
	elapsed          time.Duration
}

func (t *tally) add(sc [3]float64, sents []string, whole bool) {
	t.n++
	t.r1 += sc[0]
	t.r2 += sc[1]
	t.rl += sc[2]
	n := utf8.RuneCountInString(strings.Join(sents, " "))
	t.chars += n
	if len(sents) <= digest.MaxSentences {
		t.inSents++
	}
	if n <= digest.DefaultMaxChars {
		t.inChars++
	}
	if whole {
		t.whole++
	}
}

func (t *tally) mean() [3]float64 {
	n := float64(max(t.n, 1))
	return [3]float64{100 * t.r1 / n, 100 * t.r2 / n, 100 * t.rl / n}
}

func score(cand, ref string) [3]float64 {
	c, r := rouge.Tokens(cand), rouge.Tokens(ref)
	return [3]float64{rouge.N(c, r, 1).F, rouge.N(c, r, 2).F, rouge.L(c, r).F}
}

// system is one summarizer under test: what it says of a story.
type system struct {
	name string
	sum  func(s story, body []string) ([]string, error)
}

func run(w io.Writer, stories []story, outPath string, verbose, withOracle bool) error {
	systems := []system{
		{"extractive", func(s story, _ []string) ([]string, error) {
			sum, err := digest.Extractive{}.Summarize(context.Background(), s.article())
			return sum.Sentences, err
		}},
		{"lead2-bounded", func(_ story, body []string) ([]string, error) {
			return digest.Bound(body[:min(len(body), 2)], digest.DefaultMaxChars), nil
		}},
	}
	if withOracle {
		systems = append(systems, system{"oracle", oracle})
	}
	var out *bufio.Writer
	if outPath != "" {
		f, err := os.Create(outPath)
		if err != nil {
			return err
		}
		defer f.Close()
		out = bufio.NewWriter(f)
		defer out.Flush()
	}
	var sets []string
	tallies := map[string][]*tally{}
	for _, s := range stories {
		var body []string
		for _, p := range strings.Split(s.Text, "\n") {
			body = append(body, digest.Sentences(p)...)
		}
		whole := strings.Join(body, " ")
		for _, set := range []string{"all", "lang=" + s.Lang} {
			if tallies[set] == nil {
				sets = append(sets, set)
				for range systems {
					tallies[set] = append(tallies[set], &tally{})
				}
			}
		}
		if verbose {
			fmt.Fprintf(w, "%s\n  reference: %s\n", s.ID, s.Reference)
		}
		for k, sy := range systems {
			start := time.Now()
			sents, err := sy.sum(s, body)
			took := time.Since(start)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", s.ID, sy.name, err)
			}
			text := strings.Join(sents, " ")
			sc := score(text, s.Reference)
			for _, set := range []string{"all", "lang=" + s.Lang} {
				tallies[set][k].add(sc, sents, len(body) > 0 && text == whole)
				tallies[set][k].elapsed += took
			}
			if verbose {
				fmt.Fprintf(w, "  %-13s %5.1f %5.1f %5.1f  %s\n", sy.name, 100*sc[0], 100*sc[1], 100*sc[2], text)
			}
			if out != nil {
				line, _ := json.Marshal(map[string]any{"id": s.ID, "system": sy.name, "summary": text, "resplit": len(digest.Sentences(text))})
				out.Write(append(line, '\n'))
			}
		}
	}
	fmt.Fprintf(w, "ROUGE F1 ×100 of %d stories (lower-cased \\w+ words, no stemming); limit %d sentences, %d characters\n",
		len(stories), digest.MaxSentences, digest.DefaultMaxChars)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "set\tn\tsystem\tR-1\tR-2\tR-L\tchars\t<=2 sent\t<=limit\twhole body\t")
	slices.Sort(sets[1:]) // "all" first
	for _, set := range sets {
		ts := tallies[set]
		for k, sy := range systems {
			t, m := ts[k], ts[k].mean()
			fmt.Fprintf(tw, "%s\t%d\t%s\t%.2f\t%.2f\t%.2f\t%d\t%.1f%%\t%.1f%%\t%d\t\n", set, t.n, sy.name, m[0], m[1], m[2],
				t.chars/max(t.n, 1), 100*float64(t.inSents)/float64(t.n), 100*float64(t.inChars)/float64(t.n), t.whole)
		}
		o, l := ts[0].mean(), ts[1].mean()
		fmt.Fprintf(tw, "%s\t\tours − lead2-bounded\t%+.2f\t%+.2f\t%+.2f\t\t\t\t\t\n", set, o[0]-l[0], o[1]-l[1], o[2]-l[2])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	t := tallies["all"][0]
	fmt.Fprintf(w, "extractive: %.1f µs per story (wall clock, this run; the benchmark is BenchmarkExtractive)\n",
		float64(t.elapsed.Microseconds())/float64(max(t.n, 1)))
	return nil
}

// oracle returns the pair (or single sentence) of the body's sentences
// within the limit that scores best against the reference, by the mean
// of the three F1.
func oracle(s story, body []string) ([]string, error) {
	var best []string
	bestScore := -1.0
	try := func(sents []string) {
		sents = digest.Bound(sents, digest.DefaultMaxChars)
		sc := score(strings.Join(sents, " "), s.Reference)
		if m := sc[0] + sc[1] + sc[2]; m > bestScore {
			best, bestScore = sents, m
		}
	}
	for i := range body {
		try(body[i : i+1])
		for j := i + 1; j < len(body) && len(body) > 2; j++ {
			try([]string{body[i], body[j]})
		}
	}
	return best, nil
}
