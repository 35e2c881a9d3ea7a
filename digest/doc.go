// Package digest makes the daily digest of a crawl: two-sentence summaries
// of the stories deposited, on cards by category, as a page and a feed.
//
// # Summaries
//
// A [Summarizer] turns an article into a [Summary]. The default,
// [Extractive], is local and deterministic: it splits the body into
// sentences ([Sentences], which knows the abbreviations, figures, quotation
// marks and ellipses of English, French and German) and picks the two best
// by TextRank with a preference for the start of the story. [HTTP] asks a
// service of the user's (a language model behind an endpoint) instead.
// Whoever summarizes, a digest shows at most [MaxSentences] sentences of a
// story and at most [DefaultMaxChars] characters ([Bound]), and never a
// story's whole body (D6).
package digest
