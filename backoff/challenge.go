package backoff

import (
	"bytes"
	"cmp"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// ChallengePeek is how many bytes at the start of a response body
// [DetectChallenge] needs to see. The fetch chain should peek this many
// bytes (or the whole body when shorter) and pass them on.
const ChallengePeek = 16 << 10

// The bot-protection providers DetectChallenge recognises, as it names them.
const (
	Cloudflare = "cloudflare"
	Akamai     = "akamai"
	DataDome   = "datadome"
	PerimeterX = "perimeterx" // HUMAN Security
	Imperva    = "imperva"    // Incapsula
	Sucuri     = "sucuri"
)

// marker is one way to recognise a provider's challenge or block page. A
// marker matches when every one of its conditions holds.
type marker struct {
	provider string
	header   string   // canonical header name that must be present ("" none)
	value    string   // lowercase substring the header's value must contain ("" any)
	body     []string // substrings that must all appear in the body prefix
	denial   bool     // only when the status is a denial (403, 429 or 503)
}

// markers is the one table of challenge markers. Words alone ("Access
// Denied", "Cloudflare") never make a challenge: each row is a header the
// provider sets only on challenges, a script or asset name only its
// challenge page loads, or a generic marker held to a denial status.
// Headers such a provider adds to every response (X-Iinfo, X-Sucuri-ID,
// X-DataDome, Server: Sucuri/Cloudproxy) and scripts it injects into
// ordinary pages (/cdn-cgi/challenge-platform/scripts/jsd, _pxAppId,
// _Incapsula_Resource) count only with a denial status, or not at all.
var markers = [...]marker{
	// Cloudflare: the header every challenge carries, the challenge page's
	// options object, and the interstitial's title with its platform script.
	{provider: Cloudflare, header: "Cf-Mitigated", value: "challenge"},
	{provider: Cloudflare, body: []string{"window._cf_chl_opt"}},
	{provider: Cloudflare, body: []string{"<title>Just a moment...</title>", "/cdn-cgi/challenge-platform/"}},
	{provider: Cloudflare, body: []string{"cf-chl-", "/cdn-cgi/challenge-platform/h/"}},
	{provider: Cloudflare, body: []string{"<title>Attention Required! | Cloudflare</title>"}},
	// Akamai: the reference-number denial, plain or entity-encoded, and the
	// Bot Manager's challenge script.
	{provider: Akamai, body: []string{"Access Denied", "Reference #", "errors.edgesuite.net"}},
	{provider: Akamai, body: []string{"Access Denied", "Reference&#32;&#35;", "errors&#46;edgesuite&#46;net"}},
	{provider: Akamai, body: []string{"/_sec/cp_challenge/"}},
	// DataDome: the block flag header, and the captcha host and the
	// always-present header held to a denial (a page may name the captcha
	// host in a preconnect hint).
	{provider: DataDome, header: "X-Dd-B"},
	{provider: DataDome, body: []string{"captcha-delivery.com"}, denial: true},
	{provider: DataDome, header: "X-Datadome", denial: true},
	// PerimeterX / HUMAN: the captcha element and script, and the sensor's
	// app id held to a denial.
	{provider: PerimeterX, body: []string{`id="px-captcha"`}},
	{provider: PerimeterX, body: []string{"_pxCaptcha"}},
	{provider: PerimeterX, body: []string{"_pxAppId"}, denial: true},
	// Imperva / Incapsula: the incident page, and the always-present
	// header held to a denial.
	{provider: Imperva, body: []string{"Incapsula incident ID"}},
	{provider: Imperva, header: "X-Iinfo", denial: true},
	// Sucuri: the firewall's denial page, its JavaScript challenge cookie,
	// and its always-present headers held to a denial.
	{provider: Sucuri, body: []string{"Sucuri WebSite Firewall - Access Denied"}},
	{provider: Sucuri, body: []string{"sucuri_cloudproxy_js"}},
	{provider: Sucuri, header: "X-Sucuri-Id", denial: true},
	{provider: Sucuri, header: "Server", value: "sucuri/cloudproxy", denial: true},
}

// DetectChallenge reports whether a response is a bot-challenge or
// bot-block page, and which provider served it, from its status, its
// headers and the first [ChallengePeek] bytes of its body (more are
// ignored). It is a pure function, safe for concurrent use.
func DetectChallenge(status int, h http.Header, bodyPrefix []byte) (provider string, ok bool) {
	i := detect(status, h, bodyPrefix)
	if i < 0 {
		return "", false
	}
	return markers[i].provider, true
}

// detect returns the index of the first marker that matches, or -1: the
// first row, in table order, whose status and header conditions hold and
// whose body substrings all occur in the body prefix.
//
// An ordinary page holds none of the substrings, so what costs is proving
// them absent. detect searches the body for bytes, not substrings (see
// [search.scan]): one pass for a rare byte settles every substring holding
// that byte, so a dozen rows on an ordinary page cost about six passes of
// bytes.IndexByte. Each substring is settled at most once per call, and a
// row is dropped as soon as one of its substrings is known absent.
func detect(status int, h http.Header, body []byte) int {
	if len(body) > ChallengePeek {
		body = body[:ChallengePeek]
	}
	denial := status == 403 || status == 429 || status == 503
	s := search{body: body}
rows:
	for i := range markers {
		m := &markers[i]
		if m.denial && !denial {
			continue
		}
		if m.header != "" && !headerHas(h, m.header, m.value) {
			continue
		}
		for {
			switch s.row(i) {
			case ruledOut:
				continue rows
			case matched:
				return i
			}
			s.settleOne(i)
		}
	}
	return -1
}

// headerHas reports whether h has the header name with a value that,
// lowercased, contains value (any value when value is ""). It is
// strings.Contains(strings.ToLower(v), value) without the copy ToLower
// makes of a value with capitals: value is lowercase ASCII (init checks),
// so for an ASCII v folding A-Z is all ToLower would do.
func headerHas(h http.Header, name, value string) bool {
	vs := h.Values(name)
	if len(vs) == 0 {
		return false
	}
	if value == "" {
		return true
	}
	for _, v := range vs {
		if !isASCII(v) {
			if strings.Contains(strings.ToLower(v), value) {
				return true
			}
			continue
		}
		for i := 0; i+len(value) <= len(v); i++ {
			if hasLowerPrefix(v[i:], value) {
				return true
			}
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// hasLowerPrefix reports whether s, with A-Z folded to a-z, starts with
// prefix.
func hasLowerPrefix(s, prefix string) bool {
	for j := 0; j < len(prefix); j++ {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[j] {
			return false
		}
	}
	return true
}

// The body search. Its tables are derived from markers at init.
var (
	// needles holds the distinct body substrings of markers.
	needles []string

	// rowNeedles holds each row's substrings, as bits over needles.
	rowNeedles [len(markers)]uint32

	// rowBytes lists, for each row, the bytes a search for the row may
	// scan for, rarest first: the perNeedle rarest of each substring.
	rowBytes [len(markers)][]rowByte

	// holders lists, for each byte, the substrings holding it: one scan
	// for the byte settles them all.
	holders [256][]holder
)

// perNeedle is how many of a substring's rarest bytes a search may try.
const perNeedle = 3

type rowByte struct {
	c       byte
	needles uint32 // the row's substrings holding c, as bits over needles
}

// A holder is a substring holding a byte: s[off] is the byte (its first
// place in s) and s[near] the byte beside it, compared first.
type holder struct {
	s         string
	bit       uint32 // s's bit over needles
	off, near int
}

// byteRank ranks each byte by how common it is in web pages, 0 for the
// rarest (as the memchr crate's byte-frequency table does). The order is
// roughly that of a sample of HTML documentation pages with their scripts
// and style sheets, '_' moved up for bundlers' names; bytes not listed
// (controls, non-ASCII) rank 0. It only orders the search: a wrong guess
// costs time, never a result.
var byteRank = func() (r [256]uint8) {
	const common = " etaoinsrlcd<>h/p.\"mfu-=\ngb:_yw12,0v3x;45()k6897'#T{}SIAC+EFRLP[]MBzD&O!N%UHj|qG*VW\\^`Y?KX@$QZJ~\r\t"
	for i := range len(common) {
		r[common[i]] = uint8(len(common) - i)
	}
	return r
}()

func init() {
	index := make(map[string]int)
	for i := range markers {
		m := &markers[i]
		if m.value != strings.ToLower(m.value) || !isASCII(m.value) {
			panic("backoff: marker header value " + m.value + " is not lowercase ASCII")
		}
		var cs []byte
		for _, s := range m.body {
			k, ok := index[s]
			if !ok {
				if s == "" || len(needles) == 32 {
					panic("backoff: marker body substrings must be non-empty, 32 at most")
				}
				k = len(needles)
				index[s] = k
				needles = append(needles, s)
			}
			rowNeedles[i] |= 1 << k
			cs = append(cs, byRank(s)[:min(perNeedle, len(s))]...)
		}
		for _, c := range byRank(string(cs)) {
			rb := rowByte{c: c}
			for _, s := range m.body {
				if strings.IndexByte(s, c) >= 0 {
					rb.needles |= 1 << index[s]
				}
			}
			rowBytes[i] = append(rowBytes[i], rb)
		}
	}
	for k, s := range needles {
		for off := range len(s) {
			if strings.IndexByte(s, s[off]) < off {
				continue // not the first s[off] in s
			}
			near := off + 1
			if near == len(s) {
				near = max(off-1, 0)
			}
			holders[s[off]] = append(holders[s[off]], holder{s, 1 << k, off, near})
		}
	}
}

// byRank returns the distinct bytes of s, rarest first by byteRank.
func byRank(s string) []byte {
	var bs []byte
	for i := range len(s) {
		if !slices.Contains(bs, s[i]) {
			bs = append(bs, s[i])
		}
	}
	slices.SortStableFunc(bs, func(a, b byte) int {
		return cmp.Compare(byteRank[a], byteRank[b])
	})
	return bs
}

// A search is what one call of detect has learnt about its body.
type search struct {
	body    []byte
	settled uint32  // bit k: whether needles[k] occurs in body is known
	found   uint32  // bit k: needles[k] occurs in body
	common  byteSet // the bytes a scan gave up on as too common in body
}

type rowState int

const (
	undecided rowState = iota
	ruledOut           // one of the row's substrings is known absent
	matched            // all of the row's substrings are known present
)

// row tells what is known of row i's substrings.
func (s *search) row(i int) rowState {
	need := rowNeedles[i]
	switch {
	case need&s.settled&^s.found != 0:
		return ruledOut
	case need&s.found == need:
		return matched
	}
	return undecided
}

// settleOne scans for a byte that settles at least one of row i's
// unsettled substrings: the rarest (by byteRank) not given up on as too
// common in this body. That scan may give up in turn while another byte is
// left to try; the last one is scanned to the end, and if every byte was
// given up on, the rarest is.
func (s *search) settleOne(i int) {
	var first, try *rowByte
	for j := range rowBytes[i] {
		rb := &rowBytes[i][j]
		if rb.needles&^s.settled == 0 {
			continue // would settle nothing new
		}
		if first == nil {
			first = rb
		}
		if s.common.has(rb.c) {
			continue
		}
		if try != nil {
			s.scan(try.c, true) // rb is left to try
			return
		}
		try = rb
	}
	if try == nil {
		try = first
	}
	s.scan(try.c, false)
}

// scan looks for byte c through the body with bytes.IndexByte (vectorised:
// tens of bytes a cycle) and, at each one, for each unsettled substring
// holding c, compares the substring with the body where it would stand.
// Scanning to the end settles all of those substrings, found or absent.
//
// When mayQuit is set and c proves common in this body (over one false
// candidate in 64 bytes, judged over a quarter of the body at least), the
// scan stops, keeping what it found, and marks c common so that the next
// scan tries another byte: the cost of a scan is mostly one call of
// IndexByte per candidate. A byte is scanned at most twice per call (given
// up on, then to the end as a last resort), so a call costs at most about
// two IndexByte calls per body byte, whatever the body.
func (s *search) scan(c byte, mayQuit bool) {
	body := s.body
	hs := holders[c]
	// todo holds the substrings this scan settles; before and after hold
	// the bytes around c in them, a cheap first test of each candidate.
	var todo uint32
	var before, after byteSet
	for _, h := range hs {
		if h.bit&s.settled != 0 {
			continue
		}
		todo |= h.bit
		if h.off > 0 {
			before.add(h.s[h.off-1])
		} else {
			before = allBytes
		}
		if h.off+1 < len(h.s) {
			after.add(h.s[h.off+1])
		} else {
			after = allBytes
		}
	}
	fails := 0
	for q := 0; q < len(body); q++ {
		j := bytes.IndexByte(body[q:], c)
		if j < 0 {
			break
		}
		q += j
		hit := false
		if (q == 0 || before.has(body[q-1])) && (q+1 == len(body) || after.has(body[q+1])) {
			for i := range hs {
				h := &hs[i]
				p := q - h.off // where h.s would start
				if todo&h.bit == 0 || p < 0 || p+len(h.s) > len(body) {
					continue
				}
				if body[p+h.near] == h.s[h.near] && string(body[p:p+len(h.s)]) == h.s {
					s.found |= h.bit
					s.settled |= h.bit
					todo &^= h.bit
					hit = true
				}
			}
			if todo == 0 {
				return
			}
		}
		if !hit {
			fails++
			if mayQuit && fails > 4+max(q, len(body)/4)/64 {
				s.common.add(c)
				return
			}
		}
	}
	s.settled |= todo
}

// A byteSet is a set of bytes.
type byteSet [4]uint64

var allBytes = byteSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}

func (b *byteSet) add(c byte)      { b[c>>6] |= 1 << (c & 63) }
func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }
