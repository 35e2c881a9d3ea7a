// Package tracking is the one table of tracking and session query parameters
// that politefetch strips from the URLs it requests (package fetch) and from
// the links it reads in feeds and backlogs (package feed), except those a
// source declares necessary.
package tracking

import "strings"

// table is the data table behind [Default]: campaign and click
// identifiers and session ids that publishers' links carry and that change nothing
// about the content. A trailing "*" is a prefix.
var table = [...]string{
	"utm_*",                              // Google Analytics campaign tags
	"fbclid", "gclid", "dclid", "gclsrc", // Meta, Google Ads click ids
	"gbraid", "wbraid", "msclkid", "yclid", "twclid", "ttclid", "li_fat_id", "igshid",
	"mc_cid", "mc_eid", // Mailchimp
	"_ga", "_gl", // Google Analytics linker
	"_hsenc", "_hsmi", "__hstc", "__hssc", "__hsfp", "hsctatracking", // HubSpot
	"mkt_tok",                   // Marketo
	"oly_anon_id", "oly_enc_id", // Omeda
	"vero_id", "vero_conv", // Vero
	"rb_clickid", "s_kwcid", "ef_id", // Adobe
	"wt_mc", "wt.mc_id", // Webtrends
	"ncid", "cmpid", "ito", // publisher campaign ids
	"at_medium", "at_campaign", // AT Internet
	"ref_src", "ref_url", // Twitter embeds
	"spm", "scm", // Alibaba
	"phpsessid", "jsessionid", "sessionid", "session_id", "aspsessionid*", "cfid", "cftoken", // session ids
}

// Default returns a fresh copy of the table: campaign and click identifiers and
// session ids, each a name or a "prefix*".
func Default() []string { return append([]string(nil), table[:]...) }

// IsDefault reports whether the query parameter name k is in the table,
// without regard to case. It does not allocate.
func IsDefault(k string) bool { return In(k, table[:]) }

// Match reports whether the query key k matches the name or "prefix*" p,
// without regard to case.
func Match(k, p string) bool {
	if pre, ok := strings.CutSuffix(p, "*"); ok {
		return len(k) >= len(pre) && strings.EqualFold(k[:len(pre)], pre)
	}
	return strings.EqualFold(k, p)
}

// In reports whether k matches any entry of list (see [Match]).
func In(k string, list []string) bool {
	for _, p := range list {
		if Match(k, p) {
			return true
		}
	}
	return false
}
