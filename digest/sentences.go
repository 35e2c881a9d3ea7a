package digest

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences splits text into sentences, in English, French and German
// (and most languages written with spaces between words and these marks).
//
// A sentence ends at '.', '!', '?', '…' or "...", together with any
// closing quotation marks and brackets after it, when what follows, after
// white space, can begin a sentence: a capital letter, a digit, or an
// opening quotation mark or bracket. A blank line (a paragraph break)
// always ends one. A full stop does not end a sentence
//
//   - inside a number (3.5 %, $1.2bn, 1,000.50) or a web address,
//   - after a title or abbreviation that is followed by a name or a number
//     (Dr., Mr., Prof., St., M., Mme, Hr., Nr., z.B., e.g., usw. before a
//     lower-case word, a single initial like J.),
//   - after an ordinal day before a month (am 3. Mai),
//
// and an abbreviation that often closes a sentence (U.S., etc., usw.,
// Inc., Ltd., the months' short forms: Jan. 1 but "in Jan. It") ends one only when the next word commonly begins a sentence
// (The, It, Le, Il, Der, Die …). Text inside quotation marks is part of the
// sentence that quotes it: a question mark followed by "she asked" ends
// nothing. White space inside a sentence is collapsed; empty sentences are
// dropped. Sentences never fails; it uses no state and is safe for
// concurrent use.
func Sentences(text string) []string {
	var out []string
	for _, para := range splitParagraphs(text) {
		out = appendSentences(out, para)
	}
	return out
}

// splitParagraphs splits at blank lines.
func splitParagraphs(text string) []string {
	var out []string
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur = cur[:0]
		}
	}
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return out
}

func appendSentences(out []string, para string) []string {
	rs := []rune(para)
	start := 0
	emit := func(end int) {
		s := collapse(string(rs[start:end]))
		if s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if !isTerminal(r) {
			continue
		}
		// The run of terminal marks: "?!", "...", "?.".
		j := i
		for j < len(rs) && (isTerminal(rs[j])) {
			j++
		}
		// Closing quotes and brackets, possibly after a French space (« … ? »).
		k := j
		for {
			m := k
			for m < len(rs) && isInlineSpace(rs[m]) {
				m++
			}
			// Across a space only a French closing guillemet: a straight
			// quote there opens the next sentence.
			if m < len(rs) && isCloser(rs[m]) && (m == k || rs[m] == '»' || rs[m] == '›') {
				k = m + 1
				continue
			}
			break
		}
		end := k
		// What follows must be white space, then a sentence start.
		n := end
		for n < len(rs) && unicode.IsSpace(rs[n]) {
			n++
		}
		if n == len(rs) {
			break // the paragraph's end closes the sentence
		}
		if n == end {
			// No space: two sentences glued where a paragraph break was
			// lost ("… in Miami.The park …"), or nothing.
			if cut := gluedEnd(rs, i, j, end); cut > 0 {
				emit(cut)
				i = cut - 1
				continue
			}
			i = j - 1
			continue
		}
		if !startsSentence(rs[n:]) {
			i = j - 1
			continue
		}
		if j-i == 1 && r == '.' && !fullStopEnds(rs[:i], rs[n:]) {
			i = j - 1
			continue
		}
		emit(end)
		i = n - 1
	}
	emit(len(rs))
	return out
}

// gluedEnd returns where a sentence ends when the terminal marks rs[i:j]
// (closers up to end) are followed by the next sentence with no space: a
// word of two letters or more, or a number, or a closing mark, then the
// marks, then a capitalized word (Miami.The, positif.En, "soutenus"."La).
// A straight quote right after the marks opens the next sentence. 0: no
// end here (e.g., U.S.A, Node.js, www.Example.com, Mr.Smith).
func gluedEnd(rs []rune, i, j, end int) int {
	if i == 0 {
		return 0
	}
	cut, next := end, end
	if j < len(rs) && rs[j] == '"' {
		cut, next = j, j+1
	}
	if next+1 >= len(rs) || !unicode.IsUpper(rs[next]) ||
		!(unicode.IsLower(rs[next+1]) || rs[next+1] == '\'' || rs[next+1] == '’') {
		return 0
	}
	e := next
	for e < len(rs) && unicode.IsLetter(rs[e]) {
		e++
	}
	if e+1 < len(rs) && rs[e] == '.' && unicode.IsLower(rs[e+1]) {
		return 0 // a dotted name: www.Example.com
	}
	w := i
	for w > 0 && isCloser(rs[w-1]) {
		w--
	}
	if w < i {
		// After a closing mark: a letter before it.
		if w == 0 || !unicode.IsLetter(rs[w-1]) {
			return 0
		}
		return cut
	}
	k := w
	for k > 0 && (unicode.IsLetter(rs[k-1]) || unicode.IsDigit(rs[k-1]) || rs[k-1] == '.' || rs[k-1] == '/' || rs[k-1] == ':') {
		k--
	}
	word := string(rs[k:w])
	last := rs[w-1]
	switch {
	case strings.ContainsAny(word, "./:"), titles[strings.ToLower(word)]:
		return 0 // dotted (e.g.), an address, a title
	case unicode.IsDigit(last):
		if !allDigits(word) {
			return 0
		}
	case !unicode.IsLower(last) || utf8.RuneCountInString(word) < 2:
		return 0
	}
	return cut
}

func isTerminal(r rune) bool {
	return r == '.' || r == '!' || r == '?' || r == '…' || r == '‽'
}

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', '”', '’', '»', '›', ')', ']', '“': // “ closes in German („…“)
		return true
	}
	return false
}

func isOpener(r rune) bool {
	switch r {
	case '"', '\'', '“', '‘', '«', '‹', '„', '‚', '(', '[', '¿', '¡', '—', '–':
		return true
	}
	return false
}

func isInlineSpace(r rune) bool {
	return r == ' ' || r == '\u00a0' || r == '\u202f' || r == '\t'
}

// startsSentence reports whether rs, just after white space, can begin a
// sentence.
func startsSentence(rs []rune) bool {
	for i, r := range rs {
		switch {
		case isOpener(r):
			if i > 3 {
				return false
			}
			continue
		case isInlineSpace(r) && i > 0:
			continue
		case unicode.IsUpper(r), unicode.IsDigit(r), unicode.Is(unicode.Lo, r):
			return true
		default:
			return false
		}
	}
	return false
}

// fullStopEnds decides a single '.' followed by white space and a possible
// sentence start: before is the text up to the stop, after the text from
// the next word.
func fullStopEnds(before, after []rune) bool {
	// The word before the stop, with its inner dots (U.S, z.B, e.g).
	w := len(before)
	for w > 0 && (unicode.IsLetter(before[w-1]) || unicode.IsDigit(before[w-1]) || before[w-1] == '.' || before[w-1] == '-') {
		w--
	}
	word := string(before[w:])
	if word == "" {
		return true
	}
	lower := strings.ToLower(word)
	next := nextWord(after)
	switch {
	case titles[lower]:
		return false
	case mayEnd[lower]:
		return starters[strings.ToLower(next)]
	case allDigits(word):
		// An ordinal day before a month (am 3. Mai, le 1. janvier is not
		// French but harmless); otherwise a number closes a sentence.
		return !months[strings.ToLower(next)]
	}
	if utf8.RuneCountInString(word) == 1 && unicode.IsUpper([]rune(word)[0]) {
		return false // an initial: J. K. Rowling
	}
	if strings.Contains(word, ".") && isDotted(word) {
		// Dotted letters: lower case (z.B, d.h, i.e) never ends; capitals
		// (U.S.A) end before a common sentence start.
		if unicode.IsLower([]rune(word)[0]) {
			return false
		}
		return starters[strings.ToLower(next)]
	}
	return true
}

// nextWord returns the letters of the word that begins after, past any
// opening marks.
func nextWord(after []rune) string {
	i := 0
	for i < len(after) && !unicode.IsLetter(after[i]) && !unicode.IsDigit(after[i]) {
		i++
	}
	j := i
	for j < len(after) && (unicode.IsLetter(after[j]) || after[j] == '\'' || after[j] == '’') {
		j++
	}
	return string(after[i:j])
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// isDotted reports whether s is single letters separated by dots: U.S, z.B.
func isDotted(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if utf8.RuneCountInString(part) != 1 {
			return false
		}
	}
	return true
}

// collapse trims s and collapses its runs of white space into one space.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// titles are abbreviations that never end a sentence: they precede a name,
// a number or the rest of a phrase. Lower case, without the final stop.
var titles = set(
	// English
	"mr", "mrs", "ms", "messrs", "dr", "prof", "st", "mt", "ft", "sr", "gen", "col", "lt", "sgt", "capt", "cmdr", "adm",
	"gov", "sen", "rep", "rev", "hon", "pres", "supt", "insp", "det", "vs", "v", "e.g", "i.e", "cf", "approx",
	"fig", "figs", "vol", "pp", "dept", "univ", "ave", "blvd",
	// French
	"m", "mm", "mme", "mmes", "mlle", "mlles", "pr", "ste", "av", "bd", "p.ex", "env", "nº",
	// German
	"hr", "hrn", "fr", "frl", "nr", "z.b", "d.h", "u.a", "bzw", "ggf", "vgl", "evtl", "inkl", "sog", "jh",
	"mio", "mrd", "tsd", "str", "abs", "bzgl", "geb", "ca", "zzgl", "u.ä", "o.ä", "s.o", "s.u",
)

// mayEnd are abbreviations that often close a sentence too.
var mayEnd = set(
	"etc", "u.s", "u.k", "u.n", "e.u", "u.s.a", "inc", "ltd", "co", "corp", "plc", "bros", "jr", "a.m", "p.m", "d.c",
	"usw", "cie", "gmbh", "ag", "no", "nos",
	// the months' short forms: Jan. 1, but "… in Jan. It …"
	"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
	"janv", "févr", "fév", "avr", "juil", "déc", "okt", "dez",
)

// starters are words that commonly begin a sentence, for deciding whether
// an abbreviation that may close one does.
var starters = set(
	"the", "a", "an", "it", "he", "she", "they", "we", "i", "this", "that", "these", "those", "there", "in", "on", "at",
	"but", "and", "so", "yet", "its", "his", "her", "their", "our", "one", "some", "many", "most", "after", "before",
	"when", "while", "as", "if", "for", "officials", "critics", "analysts",
	"le", "la", "les", "un", "une", "des", "il", "elle", "ils", "elles", "on", "nous", "ce", "cette", "ces", "mais", "et",
	"en", "au", "aux", "selon", "pour", "dans", "depuis",
	"der", "die", "das", "ein", "eine", "er", "es", "wir", "ihr", "dies", "diese", "dieser", "aber", "und", "im", "am",
	"nach", "vor", "laut", "auch", "doch",
)

// months are month names, for ordinal days (3. Mai).
var months = set(
	"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
	"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre",
	"januar", "jänner", "februar", "märz", "juni", "juli", "oktober", "dezember",
)
