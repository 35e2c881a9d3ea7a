// Package digest makes the daily digest of a crawl: two-sentence summaries
// of the stories deposited, on cards by category, as a page and a feed,
// each card linking back to its publisher.
//
// # Summaries
//
// A [Summarizer] turns an article into a [Summary]. The default,
// [Extractive], is local and deterministic: it splits the body into
// sentences ([Sentences], which knows the abbreviations, figures, quotation
// marks and ellipses of English, French and German) and picks at most
// two: in French and German, the pair a model fitted to journalists'
// summaries scores best; in English and others, by TextRank over their
// shared words, weighed towards the start of the story. [HTTP] asks a service of the user's (a language model behind an
// endpoint) instead. Whoever summarizes, a card shows at most
// [MaxSentences] sentences and at most [DefaultMaxChars] characters of a
// story ([Bound]), and a summary is never the story's whole body: a body of
// two sentences gives one, a body of one sentence its first half.
//
// # Cards
//
// [Stories] reads a crawl's deposits ([crawl.Deposits]) as [Story] values:
// an article read in full, or a story kept only as its feed describes it
// (an excerpt: its source has no full-text licence, or the article was
// refused). [Builder.Build] makes the [Digest] of the stories of the day
// before an instant for a reader's [Preferences]: a [Section] per category
// ([Categories] first, then the sources' own), newest first, deduplicated
// by canonical URL, each [Card] with its publisher's brand and logo, the
// age ("15 mins ago"), the headline, the summary (an excerpt's is the
// feed's description, labelled as an excerpt), the reading time, and
// "Read full story on <Source> →" to the canonical URL. The instant is a
// parameter, so ages are exact in tests.
//
// # The page and the feed
//
// [Digest.WriteHTML] writes one HTML page through html/template, so
// whatever a publisher wrote is escaped: no script, a heading per category
// and an article element per card, with styles that fit a phone and a
// desktop. A card shows an image only where its story carries one (set it
// only when the share image passed its check), hotlinked from the publisher
// with its alt text and credit, never copied. [Digest.WriteJSONFeed] writes
// the same cards as a JSON Feed 1.1.
//
// Package digesttest holds a set of thirty news stories of our own with
// written reference summaries, and a demo web of publishers built from
// them; digest/internal/rougebench scores the summaries against the
// references, or against a public set's, with ROUGE beside lead-2 cut to
// the same limit.
package digest
