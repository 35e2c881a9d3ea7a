package backoff

import (
	"bytes"
	"net/http"
	"strings"
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

// detect returns the index of the first marker that matches, or -1.
func detect(status int, h http.Header, body []byte) int {
	if len(body) > ChallengePeek {
		body = body[:ChallengePeek]
	}
	denial := status == 403 || status == 429 || status == 503
	for i := range markers {
		m := &markers[i]
		if m.denial && !denial {
			continue
		}
		if m.header != "" && !headerHas(h, m.header, m.value) {
			continue
		}
		if !bodyHasAll(body, m.body) {
			continue
		}
		return i
	}
	return -1
}

func headerHas(h http.Header, name, value string) bool {
	vs := h.Values(name)
	if len(vs) == 0 {
		return false
	}
	if value == "" {
		return true
	}
	for _, v := range vs {
		if strings.Contains(strings.ToLower(v), value) {
			return true
		}
	}
	return false
}

func bodyHasAll(body []byte, subs []string) bool {
	for _, s := range subs {
		if !bytes.Contains(body, []byte(s)) {
			return false
		}
	}
	return true
}
