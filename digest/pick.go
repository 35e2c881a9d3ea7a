package digest

import (
	"math"
	"strings"
	"unicode/utf8"
)

// The features of one sentence, in the order of a model's weights.
const (
	fLead        = iota // the story's first sentence
	fInv                // 1/(1+position)
	fRel                // position over the number of sentences
	fTitle              // share of the headline's content words it holds
	fTitleShare         // share of its content words that are the headline's
	fTitleEarly         // fTitle × fInv
	fCentral            // how many other sentences hold each of its content words, on average, per ten sentences
	fLogWords           // log(1 + words)
	fShort              // under eight words
	fContent            // content words, at most 30, over 30
	fQuoteStart         // opens with a quotation mark: a quote, rarely the news
	fColon              // holds a colon
	fQuestion           // ends with a question or exclamation mark
	fFirstPerson        // I, we, je, nous, ich, wir: someone speaking
	fDate               // a weekday, a month, yesterday, today
	fDigit              // a figure
	nSentFeatures
)

// The features of a candidate summary: one sentence or two.
const (
	pSingle     = iota // one sentence alone
	pRedundant         // content words the two share, over the smaller's
	pFill              // its characters over the limit, at most 1
	pCut               // it passes the limit: its last sentence is cut
	pTitleUnion        // share of the headline's content words the two hold together
	nPairFeatures
)

// model weighs the features; a candidate's score is the sum of its
// sentences' weighted features and its own.
type model struct {
	sent [nSentFeatures]float64
	pair [nPairFeatures]float64
	// lead keeps the first sentence whenever it is a candidate, and
	// picks only the one to go with it.
	lead bool
}

// candidates is how many of the first sentences may be picked, and
// minCut the fewest characters a cut last sentence keeps.
const (
	candidates = 12
	minCut     = 60
)

// sentenceFeatures returns each sentence's features; bags are their
// content words, sizes their word counts, head the headline's.
func sentenceFeatures(sents []string, words [][]string, bags []map[string]int, sizes []int, head map[string]int) [][nSentFeatures]float64 {
	n := len(sents)
	df := make(map[string]int, 8*n)
	for _, b := range bags {
		for w := range b {
			df[w]++
		}
	}
	out := make([][nSentFeatures]float64, n)
	for i, s := range sents {
		f := &out[i]
		if i == 0 {
			f[fLead] = 1
		}
		f[fInv] = 1 / float64(1+i)
		f[fRel] = float64(i) / float64(n)
		b := bags[i]
		shared := overlap(b, head)
		if len(head) > 0 {
			f[fTitle] = float64(shared) / float64(len(head))
		}
		f[fTitleEarly] = f[fTitle] * f[fInv]
		if len(b) > 0 {
			f[fTitleShare] = float64(shared) / float64(len(b))
			c := 0
			for w := range b {
				c += df[w] - 1
			}
			f[fCentral] = 10 * float64(c) / float64(len(b)) / float64(max(n-1, 1))
		}
		f[fLogWords] = math.Log1p(float64(sizes[i]))
		if sizes[i] < 8 {
			f[fShort] = 1
		}
		f[fContent] = float64(min(len(b), 30)) / 30
		if strings.ContainsAny(s[:min(len(s), 4)], "«\"“„") {
			f[fQuoteStart] = 1
		}
		if strings.Contains(s, ":") {
			f[fColon] = 1
		}
		if strings.HasSuffix(strings.TrimRight(s, " »\"”“)"), "?") || strings.HasSuffix(strings.TrimRight(s, " »\"”“)"), "!") {
			f[fQuestion] = 1
		}
		if strings.ContainsAny(s, "0123456789") {
			f[fDigit] = 1
		}
		for _, w := range words[i] {
			if firstPerson[w] {
				f[fFirstPerson] = 1
			}
			if dateWords[w] || months[w] {
				f[fDate] = 1
			}
		}
	}
	return out
}

// pairFeatures returns the features of the summary of sentences i and j
// (j < 0: i alone) under limit.
func pairFeatures(sents []string, bags []map[string]int, head map[string]int, i, j, limit int) [nPairFeatures]float64 {
	var f [nPairFeatures]float64
	chars := utf8.RuneCountInString(sents[i])
	if j < 0 {
		f[pSingle] = 1
	} else {
		chars += 1 + utf8.RuneCountInString(sents[j])
		if m := min(len(bags[i]), len(bags[j])); m > 0 {
			f[pRedundant] = float64(overlap(bags[i], bags[j])) / float64(m)
		}
		if len(head) > 0 {
			u := 0
			for w := range head {
				if bags[i][w] > 0 || bags[j][w] > 0 {
					u++
				}
			}
			f[pTitleUnion] = float64(u) / float64(len(head))
		}
	}
	f[pFill] = float64(min(chars, limit)) / float64(limit)
	if chars > limit {
		f[pCut] = 1
	}
	return f
}

// pick returns the sentences of the best summary by m, in reading order:
// one or two of the first candidates that are neither under four words
// nor over sixty (all sentences if none is), a last sentence cut only if
// it keeps minCut characters. Ties go to the earlier. A body of two
// sentences gives one.
func (m *model) pick(sents []string, headline string, limit int) []int {
	n := len(sents)
	words := make([][]string, n)
	bags := make([]map[string]int, n)
	sizes := make([]int, n)
	for i, s := range sents {
		words[i] = Words(s)
		bags[i], sizes[i] = bagOf(words[i])
	}
	head, _ := bag(headline)
	feats := sentenceFeatures(sents, words, bags, sizes, head)
	score := make([]float64, n)
	for i := range feats {
		for k, w := range m.sent {
			score[i] += w * feats[i][k]
		}
	}
	var cand []int
	for i := 0; i < n && len(cand) < candidates; i++ {
		if sizes[i] >= 4 && sizes[i] <= 60 {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 {
		for i := 0; i < min(n, candidates); i++ {
			cand = append(cand, i)
		}
	}
	value := func(i, j int) float64 {
		v := score[i]
		if j >= 0 {
			v += score[j]
		}
		pf := pairFeatures(sents, bags, head, i, j, limit)
		for k, w := range m.pair {
			v += w * pf[k]
		}
		return v
	}
	best, bi, bj := math.Inf(-1), cand[0], -1
	for a, i := range cand {
		if m.lead && cand[0] == 0 && i != 0 {
			break
		}
		li := utf8.RuneCountInString(sents[i])
		if v := value(i, -1); v > best {
			best, bi, bj = v, i, -1
		}
		if n <= MaxSentences {
			continue // never the whole body
		}
		for _, j := range cand[a+1:] {
			if limit-li-1 < minCut && li+1+utf8.RuneCountInString(sents[j]) > limit {
				continue // j would be cut to a stub
			}
			if v := value(i, j); v > best {
				best, bi, bj = v, i, j
			}
		}
	}
	if bj < 0 {
		return []int{bi}
	}
	return []int{bi, bj}
}

// firstPerson and dateWords are words of English, French and German for
// the features of the same names.
var (
	firstPerson = set("i", "we", "je", "j'ai", "nous", "ich", "wir")
	dateWords   = set("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "yesterday", "today",
		"lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche", "hier", "aujourd'hui",
		"montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag", "gestern", "heute")
)
