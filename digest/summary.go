package digest

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/politefetch/politefetch/extract"
)

// MaxSentences is the most sentences a summary holds, whoever wrote it: a
// digest keeps a short summary and a link back, never the story.
const MaxSentences = 2

// DefaultMaxChars is the fair-use bound of a summary: at most this many
// characters (Unicode code points, spaces included), whoever wrote it. Two
// sentences of a news story run to 200–300 characters; the bound keeps a
// summary to a card's worth of the publisher's words, however long their
// sentences.
const DefaultMaxChars = 320

// Summary is what a [Summarizer] says of an article: at most
// [MaxSentences] sentences, together at most the bound's characters.
type Summary struct {
	// Sentences are the summary's sentences, in the order they are read.
	Sentences []string
	// By names who wrote it: "extractive", "http", or a summarizer's own.
	By string
}

// Text returns the sentences joined by spaces.
func (s Summary) Text() string { return strings.Join(s.Sentences, " ") }

// A Summarizer summarizes an article. Implementations must be safe for
// concurrent use and return within ctx. What one returns is bounded again
// by [Bound] before it is shown, so a summarizer that says too much is cut
// to two sentences and the fair-use bound, never shown whole.
type Summarizer interface {
	Summarize(ctx context.Context, a *extract.Article) (Summary, error)
}

// ErrNoText is returned when an article has no text to summarize.
var ErrNoText = errors.New("digest: article has no text to summarize")

// Extractive is the default summarizer: it picks at most two of the
// article's own sentences, local and deterministic.
//
// The body is split into sentences ([Sentences]) block by block, leaving
// out headings, lists, tables, captions and preformatted text, and the
// standfirst (a block that is the page's own description).
//
// A story in French or German (its language tag, or without one, its
// commonest words) is summarized by a model fitted to journalists'
// summaries of French news: every candidate summary, one or two of the first twelve
// sentences of four to sixty words, is scored by the sum of its
// sentences' weighted features (position, the first sentence, how much
// of the headline it holds, how central its words are to the story, its
// length, whether it opens with a quotation, asks a question, speaks in
// the first person, names a date or a figure) and the candidate's own
// (one sentence or two, how much the two repeat each other, how much of
// the limit they fill, whether the last is cut, how much of the headline
// they cover together). The best is kept, in reading order; a last
// sentence is cut to fit only if it keeps 60 characters.
//
// Other stories (English, or a language not told) are ranked by TextRank: a graph of the sentences, each
// edge weighted by how many content words (lower-cased, stop words of
// English, French and German left out, a plural's final s dropped) two
// sentences share, normalized by their lengths; the rank is PageRank over
// it with a teleport that prefers the start of the story (weight
// 1/(1+position)) and sentences that share words with the headline, and
// the rank is then weighed by 1/(1+position)^1.5, since news puts what
// matters first: the lead sentence is nearly always kept, and the second
// is the one central to the story among the next few. Sentences under
// four words, or over sixty, are left out unless nothing else remains.
// The two best are returned in reading order; a second sentence that
// would pass the bound is cut to fit if it keeps 60 characters, else
// dropped for the next best.
//
// A summary never copies the whole body: when the body has two
// sentences or fewer, the summary is the best one alone, and when the body
// is a single sentence, its first half (at most MaxChars), ended by "…".
// Every summary is at most MaxChars characters: a sentence that would
// pass the bound is cut at a word and ended by "…".
//
// The zero value is ready to use and safe for concurrent use.
type Extractive struct {
	// MaxChars is the fair-use bound. 0: DefaultMaxChars.
	MaxChars int
}

var _ Summarizer = Extractive{}

// Summarize implements [Summarizer]. It returns ErrNoText for an article
// without body text, or ctx's error.
func (e Extractive) Summarize(ctx context.Context, a *extract.Article) (Summary, error) {
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	var sents []string
	standfirst := collapse(a.Description.Value)
	for _, b := range a.Blocks {
		if standfirst != "" && collapse(b.Text) == standfirst {
			continue // the page's own summary, not the story's text
		}
		switch b.Kind {
		case extract.Paragraph, extract.Quote:
			sents = append(sents, Sentences(b.Text)...)
		}
	}
	if len(sents) == 0 {
		return Summary{}, ErrNoText
	}
	limit := e.MaxChars
	if limit <= 0 {
		limit = DefaultMaxChars
	}
	if lang := language(a.Language.Value, sents); lang != "fr" && lang != "de" {
		ranked := Rank(sents[:min(len(sents), rankWindow)], a.Headline.Value)
		return Summary{Sentences: fitBody(sents, ranked, limit), By: "extractive"}, nil
	}
	if len(sents) == 1 {
		return Summary{Sentences: []string{prefix(sents[0], min(limit, utf8.RuneCountInString(sents[0])/2))}, By: "extractive"}, nil
	}
	picked := newsModel.pick(sents, a.Headline.Value, limit)
	out := make([]string, len(picked))
	for k, i := range picked {
		out[k] = sents[i]
	}
	return Summary{Sentences: Bound(out, limit), By: "extractive"}, nil
}

// newsModel's weights were fitted by least squares to the ROUGE of every
// candidate summary of a public set of French news stories with
// journalists' summaries (the README says which, and how it scores). It
// summarizes German too, which it does better than TextRank on the
// stories of our own.
var newsModel = model{
	sent: [nSentFeatures]float64{-0.0329, 0.0315, -0.0201, 0.0837, -0.0156, 0.0199, 0.0230, 0.0264, 0.0041, -0.0501, -0.0085, -0.0024, -0.0010, -0.0104, 0.0090, 0.0024},
	pair: [nPairFeatures]float64{0.0563, -0.0481, 0.0583, -0.0112, -0.0250},
}

// language returns a story's language, "en", "fr", "de" or another tag's
// primary subtag: its language tag, or without one, which of English's,
// French's and German's commonest words its first sentences hold most of
// (at least three, twice as many as the next; else "").
func language(tag string, sents []string) string {
	if tag != "" {
		tag = strings.ToLower(tag)
		if i := strings.IndexAny(tag, "-_"); i >= 0 {
			tag = tag[:i]
		}
		return tag
	}
	var count [3]int
	for _, s := range sents[:min(len(sents), 5)] {
		for _, w := range Words(s) {
			if k, ok := commonWords[w]; ok {
				count[k]++
			}
		}
	}
	best, next := 0, 0
	for k := range count {
		if count[k] > count[best] {
			best = k
		}
	}
	for k := range count {
		if k != best {
			next = max(next, count[k])
		}
	}
	if count[best] < 3 || count[best] <= 2*next {
		return ""
	}
	return [...]string{"en", "fr", "de"}[best]
}

// commonWords are frequent words of English (0), French (1) and German
// (2) that the other two rarely write.
var commonWords = func() map[string]int {
	m := map[string]int{}
	for k, words := range [][]string{
		{"the", "and", "of", "is", "to", "was", "for", "with", "that", "on"},
		{"le", "la", "les", "des", "est", "une", "dans", "du", "et", "pour", "qui", "sur", "pas", "au", "avec", "ont", "été"},
		{"der", "die", "und", "ist", "das", "den", "mit", "von", "nicht", "sich", "auf", "eine", "dem"},
	} {
		for _, w := range words {
			m[w] = k
		}
	}
	return m
}()

// fitBody picks from the ranked indices at most two sentences within the
// bound (a second cut only if it keeps minCut characters), never the
// whole body.
func fitBody(sents []string, ranked []int, limit int) []string {
	switch len(sents) {
	case 1:
		return []string{prefix(sents[0], min(limit, utf8.RuneCountInString(sents[0])/2))}
	case 2:
		return Bound([]string{sents[ranked[0]]}, limit)
	}
	var keep []int
	used := 0
	for _, i := range ranked {
		n := utf8.RuneCountInString(sents[i])
		if len(keep) > 0 && used+n > limit && limit-used < minCut {
			continue // it would be cut to a stub
		}
		keep = append(keep, i)
		used += n + 1
		if len(keep) == MaxSentences {
			break
		}
	}
	slices.Sort(keep)
	out := make([]string, len(keep))
	for k, i := range keep {
		out[k] = sents[i]
	}
	return Bound(out, limit)
}

// Bound returns sentences cut to what a digest shows: at most
// [MaxSentences] sentences, together (joined by spaces) at most maxChars
// characters (0: DefaultMaxChars), the last cut at a word and ended by "…"
// where it would pass the bound. Empty sentences are dropped.
func Bound(sentences []string, maxChars int) []string {
	if maxChars <= 0 {
		maxChars = DefaultMaxChars
	}
	var out []string
	used := 0
	for _, s := range sentences {
		s = collapse(s)
		if s == "" {
			continue
		}
		if len(out) == MaxSentences {
			break
		}
		if len(out) > 0 {
			used++ // the joining space
		}
		n := utf8.RuneCountInString(s)
		if used+n <= maxChars {
			out = append(out, s)
			used += n
			continue
		}
		if room := maxChars - used; room >= 2 {
			if p := prefix(s, room); p != "" {
				out = append(out, p)
			}
		}
		break
	}
	return out
}

// prefix returns s cut at a word to at most n characters including a final
// "…"; s itself when it fits.
func prefix(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	cut := n - 1 // room for the ellipsis
	if cut <= 0 {
		return ""
	}
	end := cut
	for end > 0 && !unicode.IsSpace(rs[end]) {
		end--
	}
	if end == 0 {
		end = cut // one long word: cut inside it
	}
	p := strings.TrimRightFunc(string(rs[:end]), func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
	if p == "" {
		return ""
	}
	return p + "…"
}

// Rank returns the indices of sentences, best first, as [Extractive]
// ranks a story in English (or a language not told) by TextRank against
// the headline ("" for none).
func Rank(sentences []string, headline string) []int {
	n := len(sentences)
	bags := make([]map[string]int, n)
	sizes := make([]int, n)
	for i, s := range sentences {
		bags[i], sizes[i] = bag(s)
	}
	head, _ := bag(headline)
	w, out := similarityGraph(bags, sizes)
	rank := pageRank(w, out, teleport(bags, head))
	return orderByRank(sentences, rank)
}

// similarityGraph weighs the edges between sentences, given their content
// words (bags) and word counts (sizes): shared content words over the log
// of the lengths (TextRank's similarity), no edge for a sentence under two
// words. It returns the symmetric weights and each sentence's total
// outgoing weight.
func similarityGraph(bags []map[string]int, sizes []int) (w [][]float64, out []float64) {
	n := len(bags)
	w = make([][]float64, n)
	out = make([]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if sizes[i] < 2 || sizes[j] < 2 {
				continue
			}
			common := overlap(bags[i], bags[j])
			if common == 0 {
				continue
			}
			sim := float64(common) / (math.Log(float64(sizes[i])) + math.Log(float64(sizes[j])))
			w[i][j], w[j][i] = sim, sim
			out[i] += sim
			out[j] += sim
		}
	}
	return w, out
}

// teleport returns PageRank's teleport distribution over the sentences
// whose content words are bags: it prefers early sentences (weight
// 1/(1+position)) and those that share words with the headline's head
// (none when head is empty), and sums to one.
func teleport(bags []map[string]int, head map[string]int) []float64 {
	tele := make([]float64, len(bags))
	var total float64
	for i := range tele {
		tele[i] = 1 / float64(1+i)
		if len(head) > 0 {
			tele[i] *= 1 + 2*float64(overlap(bags[i], head))/float64(len(head))
		}
		total += tele[i]
	}
	for i := range tele {
		tele[i] /= total
	}
	return tele
}

// pageRank runs PageRank over the graph of weights w (out holding each
// node's total outgoing weight) with the teleport tele, damping 0.85, for
// at most 50 iterations or until the ranks move by less than 1e-9. It
// returns each sentence's rank.
func pageRank(w [][]float64, out, tele []float64) []float64 {
	const damping = 0.85
	n := len(tele)
	rank := slices.Clone(tele)
	next := make([]float64, n)
	for iter := 0; iter < 50; iter++ {
		var delta float64
		for i := 0; i < n; i++ {
			var s float64
			for j := 0; j < n; j++ {
				if w[j][i] > 0 {
					s += w[j][i] / out[j] * rank[j]
				}
			}
			next[i] = (1-damping)*tele[i] + damping*s
		}
		// Sentences with no edges give their rank back through the
		// teleport, so ranks keep summing to one.
		var lost float64
		for j := 0; j < n; j++ {
			if out[j] == 0 {
				lost += rank[j]
			}
		}
		for i := range next {
			next[i] += damping * lost * tele[i]
			delta += math.Abs(next[i] - rank[i])
		}
		rank, next = next, rank
		if delta < 1e-9 {
			break
		}
	}
	return rank
}

// orderByRank weighs each sentence's rank by its position (news puts what
// matters first), overwriting rank, and returns the indices of sentences
// best first: those of four to sixty words before the others, then by
// weighed rank, ties in reading order.
func orderByRank(sentences []string, rank []float64) []int {
	for i := range rank {
		rank[i] *= math.Pow(float64(1+i), -positionExponent)
	}
	idx := make([]int, len(sentences))
	for i := range idx {
		idx[i] = i
	}
	fit := func(i int) bool {
		words := len(strings.Fields(sentences[i]))
		return words >= 4 && words <= 60
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if fa, fb := fit(a), fit(b); fa != fb {
			if fa {
				return -1
			}
			return 1
		}
		switch {
		case rank[a] > rank[b]:
			return -1
		case rank[a] < rank[b]:
			return 1
		}
		return a - b
	})
	return idx
}

// rankWindow is how many of a story's first sentences TextRank ranks:
// its graph grows with the square of their number, and past the first
// hundred the position weight leaves a sentence no chance.
const rankWindow = 100

// positionExponent weighs a sentence's rank by 1/(1+position)^1.5.
const positionExponent = 1.5

func overlap(a, b map[string]int) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	n := 0
	for w := range a {
		if b[w] > 0 {
			n++
		}
	}
	return n
}

// bag returns the content words of s, normalized, and how many words s has.
func bag(s string) (map[string]int, int) {
	return bagOf(Words(s))
}

// bagOf returns the content words among words, normalized, and how many
// words there are.
func bagOf(words []string) (map[string]int, int) {
	m := make(map[string]int, len(words))
	for _, w := range words {
		if stop[w] || utf8.RuneCountInString(w) < 2 {
			continue
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") {
			w = w[:len(w)-1]
		}
		m[w]++
	}
	return m, len(words)
}

// Words returns the lower-cased words of s: runs of letters and digits
// (with inner apostrophes, hyphens and decimal points), punctuation left
// out. It is how summaries are compared, here and by ROUGE.
func Words(s string) []string {
	var out []string
	low := strings.ToLower(s)
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	for i := 0; i < len(low); {
		r, size := utf8.DecodeRuneInString(low[i:])
		if !isWord(r) {
			i += size
			continue
		}
		prev := r
		j := i + size
		for j < len(low) {
			r, size := utf8.DecodeRuneInString(low[j:])
			if isWord(r) {
				prev = r
				j += size
				continue
			}
			if r == '\'' || r == '’' || r == '-' || r == '.' || r == ',' {
				next, nsize := utf8.DecodeRuneInString(low[j+size:])
				if j+size < len(low) && isWord(next) &&
					(r != '.' && r != ',' || unicode.IsDigit(prev) && unicode.IsDigit(next)) {
					prev = next
					j += size + nsize
					continue
				}
			}
			break
		}
		out = append(out, low[i:j])
		i = j
	}
	return out
}

// stop are function words of English, French and German, left out of the
// similarity.
var stop = set(
	"the", "a", "an", "and", "or", "but", "of", "to", "in", "on", "at", "for", "by", "with", "from", "as", "is", "are",
	"was", "were", "be", "been", "has", "have", "had", "it", "its", "this", "that", "these", "those", "he", "she",
	"they", "we", "you", "his", "her", "their", "our", "not", "no", "will", "would", "can", "could", "said", "says",
	"which", "who", "what", "when", "than", "then", "there", "also", "into", "over", "after", "about", "more", "up",
	"le", "la", "les", "un", "une", "des", "du", "de", "et", "ou", "en", "au", "aux", "dans", "sur", "par", "pour",
	"avec", "est", "sont", "été", "il", "elle", "ils", "elles", "ce", "cette", "ces", "qui", "que", "qu'il", "ne",
	"pas", "plus", "se", "sa", "son", "ses", "leur", "leurs", "l'a", "a", "ont", "d'un", "d'une", "selon",
	"der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "und", "oder", "aber", "in",
	"im", "am", "an", "auf", "mit", "von", "vom", "zu", "zum", "zur", "für", "ist", "sind", "war", "wurde", "wird",
	"hat", "haben", "er", "sie", "es", "wir", "nicht", "auch", "sich", "bei", "nach", "als", "wie", "dass", "noch",
)
