package backoff

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/politefetch/politefetch/politetest"
)

// challengePages lists the recorded responses in testdata/challenge: each
// bot-challenge page with the provider and the marker row that must
// recognise it, and each ordinary page (plain 403s, protected sites' normal
// pages, an article about bot walls) that must not be taken for one (S4).
var challengePages = []struct {
	file     string
	provider string // "" for an ordinary page
	row      int    // index in markers; -1 for an ordinary page
}{
	{"cloudflare-managed.http", Cloudflare, 0},
	{"cloudflare-jschallenge-503.http", Cloudflare, 1},
	{"cloudflare-interstitial-legacy.http", Cloudflare, 2},
	{"cloudflare-turnstile-embedded.http", Cloudflare, 3},
	{"cloudflare-attention-required.http", Cloudflare, 4},
	{"akamai-reference.http", Akamai, 5},
	{"akamai-reference-encoded.http", Akamai, 6},
	{"akamai-bot-manager.http", Akamai, 7},
	{"datadome-blocked.http", DataDome, 8},
	{"datadome-captcha-nohdr.http", DataDome, 9},
	{"datadome-api-403.http", DataDome, 10},
	{"perimeterx-block.http", PerimeterX, 11},
	{"perimeterx-captcha-var.http", PerimeterX, 12},
	{"perimeterx-appid-403.http", PerimeterX, 13},
	{"imperva-incident.http", Imperva, 14},
	{"imperva-iinfo-403.http", Imperva, 15},
	{"sucuri-denied.http", Sucuri, 16},
	{"sucuri-js-challenge.http", Sucuri, 17},
	{"sucuri-id-403.http", Sucuri, 18},
	{"sucuri-server-429.http", Sucuri, 19},

	{"plain-nginx-403.http", "", -1},
	{"plain-apache-403.http", "", -1},
	{"plain-waf-access-denied-403.http", "", -1},
	{"plain-429.http", "", -1},
	{"article-about-bot-walls.http", "", -1},
	{"cloudflare-normal-200.http", "", -1},
	{"datadome-normal-200.http", "", -1},
	{"datadome-preconnect-200.http", "", -1},
	{"perimeterx-normal-200.http", "", -1},
	{"imperva-normal-200.http", "", -1},
	{"imperva-404.http", "", -1},
	{"sucuri-normal-200.http", "", -1},
	{"akamai-normal-200.http", "", -1},
}

type recorded struct {
	status int
	header http.Header
	body   []byte
}

func readRecorded(t testing.TB, file string) recorded {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "challenge", file))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return recorded{resp.StatusCode, resp.Header, body}
}

// TestChallengeMarkers_S4 checks every row of the marker table against a
// recorded page that only it recognises, and every ordinary page against
// the whole table.
func TestChallengeMarkers_S4(t *testing.T) {
	t.Parallel()
	covered := make([]bool, len(markers))
	for _, tc := range challengePages {
		t.Run(tc.file, func(t *testing.T) {
			r := readRecorded(t, tc.file)
			if got := detect(r.status, r.header, r.body); got != tc.row {
				t.Errorf("marker row = %d, want %d", got, tc.row)
			}
			got, ok := DetectChallenge(r.status, r.header, r.body)
			if got != tc.provider || ok != (tc.provider != "") {
				t.Errorf("DetectChallenge = %q, %v; want %q", got, ok, tc.provider)
			}
		})
		if tc.row >= 0 {
			covered[tc.row] = true
		}
	}
	for i, c := range covered {
		if !c {
			t.Errorf("marker row %d (%s) has no recorded page", i, markers[i].provider)
		}
	}
}

// TestChallengeOnTheWire_S4 serves every recorded page from a politetest
// site over loopback TLS and classifies what arrives: challenge pages are
// refusals whatever their status, under both refusal-counting presets;
// ordinary 403 pages stay plain refusals for the strict crawler (status 403,
// no provider) and are not refusals for the digest engine.
func TestChallengeOnTheWire_S4(t *testing.T) {
	t.Parallel()
	w := politetest.NewWeb(t)
	site := w.Site("walls.example")
	for _, tc := range challengePages {
		r := readRecorded(t, tc.file)
		site.Handle("/"+tc.file, http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
			for k, vs := range r.header {
				if k == "Connection" {
					continue
				}
				rw.Header()[k] = vs
			}
			rw.WriteHeader(r.status)
			rw.Write(r.body)
		}))
	}
	client := w.Client()
	strict, digest := StrictNews(), Digest()
	for _, tc := range challengePages {
		t.Run(tc.file, func(t *testing.T) {
			resp, err := client.Get(w.URL("walls.example", "/"+tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			prefix, err := io.ReadAll(io.LimitReader(resp.Body, ChallengePeek))
			if err != nil {
				t.Fatal(err)
			}
			o := NewOutcome(Article, resp.StatusCode, resp.Header, prefix)
			if o.Challenge != tc.provider {
				t.Fatalf("challenge = %q, want %q (status %d)", o.Challenge, tc.provider, resp.StatusCode)
			}
			wantStrict, wantDigest := strict.Classify(Outcome{Kind: Article, Status: resp.StatusCode}), digest.Classify(Outcome{Kind: Article, Status: resp.StatusCode})
			if tc.provider != "" {
				wantStrict, wantDigest = Refusal, Refusal
			}
			if got := strict.Classify(o); got != wantStrict {
				t.Errorf("strict verdict = %v, want %v", got, wantStrict)
			}
			if got := digest.Classify(o); got != wantDigest {
				t.Errorf("digest verdict = %v, want %v", got, wantDigest)
			}
			if tc.provider == "" && resp.StatusCode == 403 {
				if got := strict.Classify(o); got != Refusal || o.Cause() != "status 403" {
					t.Errorf("plain 403: strict verdict %v, cause %q; want refusal, status 403", got, o.Cause())
				}
				if got := digest.Classify(o); got != Neutral {
					t.Errorf("plain 403: digest verdict %v, want neutral", got)
				}
			}
		})
	}
}

// TestChallengeFromPolitetestMisbehaviour_S4 classifies politetest's own
// Cloudflare-like challenge, as a crawler would meet it.
func TestChallengeFromPolitetestMisbehaviour_S4(t *testing.T) {
	t.Parallel()
	w := politetest.NewWeb(t)
	w.Site("cf.example").Misbehave("/story", politetest.Behaviour{Kind: politetest.Challenge})
	resp, err := w.Client().Get(w.URL("cf.example", "/story"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	prefix, _ := io.ReadAll(io.LimitReader(resp.Body, ChallengePeek))
	o := NewOutcome(Article, resp.StatusCode, resp.Header, prefix)
	if o.Challenge != Cloudflare {
		t.Fatalf("challenge = %q, want %q", o.Challenge, Cloudflare)
	}
	if got := Digest().Classify(o); got != Refusal {
		t.Fatalf("digest verdict = %v, want refusal", got)
	}
}

// TestDetectChallengeReadsOnlyThePeek: a marker past ChallengePeek bytes is
// not seen, one inside is.
func TestDetectChallengeReadsOnlyThePeek(t *testing.T) {
	t.Parallel()
	marker := []byte("window._cf_chl_opt")
	for _, tc := range []struct {
		pad  int
		want bool
	}{
		{0, true},
		{ChallengePeek - len(marker), true},
		{ChallengePeek - len(marker) + 1, false},
	} {
		body := append(bytes.Repeat([]byte(" "), tc.pad), marker...)
		if _, got := DetectChallenge(503, nil, body); got != tc.want {
			t.Errorf("pad %d: detected %v, want %v", tc.pad, got, tc.want)
		}
	}
}

// detectRef is the first implementation of detect, kept as the reference
// the fast one must agree with on every input (FuzzDetectChallenge) and as
// the anchor of BenchmarkDetectChallenge: every needle of every row is one
// bytes.Contains over the body.
func detectRef(status int, h http.Header, body []byte) int {
	if len(body) > ChallengePeek {
		body = body[:ChallengePeek]
	}
	denial := status == 403 || status == 429 || status == 503
	for i := range markers {
		m := &markers[i]
		if m.denial && !denial {
			continue
		}
		if m.header != "" && !headerHasRef(h, m.header, m.value) {
			continue
		}
		if !bodyHasAllRef(body, m.body) {
			continue
		}
		return i
	}
	return -1
}

func headerHasRef(h http.Header, name, value string) bool {
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

func bodyHasAllRef(body []byte, subs []string) bool {
	for _, s := range subs {
		if !bytes.Contains(body, []byte(s)) {
			return false
		}
	}
	return true
}

// fuzzHeader builds the headers FuzzDetectChallenge and
// TestDetectMatchesReference test with: bit i of present sets the i-th of
// Cf-Mitigated (cf), Server (server, split at '|' into several values),
// X-Datadome, X-Dd-B, X-Iinfo and X-Sucuri-Id (other).
func fuzzHeader(present uint8, cf, server, other string) http.Header {
	h := http.Header{}
	for i, name := range []string{"Cf-Mitigated", "Server", "X-Datadome", "X-Dd-B", "X-Iinfo", "X-Sucuri-Id"} {
		if present&(1<<i) == 0 {
			continue
		}
		switch name {
		case "Cf-Mitigated":
			h[name] = []string{cf}
		case "Server":
			h[name] = strings.Split(server, "|")
		default:
			h[name] = []string{other}
		}
	}
	return h
}

// FuzzDetectChallenge checks detect against detectRef, the naive
// implementation it replaced, on any status, headers and body. Seeds in
// testdata/fuzz/FuzzDetectChallenge hold bodies made of the needles,
// overlapping and near-miss needles, needles at either end of the peek and
// straddling it, bodies dense in the bytes the search anchors on, and
// header values with capitals and non-ASCII letters.
func FuzzDetectChallenge(f *testing.F) {
	f.Add(200, uint8(0), "", "", "", []byte(nil))
	f.Fuzz(func(t *testing.T, status int, present uint8, cf, server, other string, body []byte) {
		h := fuzzHeader(present, cf, server, other)
		if got, want := detect(status, h, body), detectRef(status, h, body); got != want {
			t.Fatalf("detect = %d, detectRef = %d", got, want)
		}
	})
}

// TestDetectMatchesReference checks detect against detectRef on bodies
// pieced together at random from the needles, their prefixes and
// suffixes, runs of the bytes the search anchors on, and filler, some
// longer than ChallengePeek with the pieces near its edge.
func TestDetectMatchesReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	anchors := "wJgq|D&_x-f'#mCAIWjvyR.=!/"
	piece := func() string {
		n := needles[rng.IntN(len(needles))]
		switch rng.IntN(8) {
		case 0, 1:
			return n
		case 2:
			return n[:rng.IntN(len(n))]
		case 3:
			return n[rng.IntN(len(n)):]
		case 4: // one byte changed
			b := []byte(n)
			b[rng.IntN(len(b))] ^= 1 << rng.IntN(7)
			return string(b)
		case 5:
			return strings.Repeat(string(anchors[rng.IntN(len(anchors))]), 1+rng.IntN(300))
		case 6:
			return string(articlePage[:rng.IntN(200)])
		}
		return " "
	}
	statuses := []int{200, 403, 429, 503, 404, 0}
	servers := []string{"", "nginx", "Sucuri/Cloudproxy", "cloudflare|SUCURI/CLOUDPROXY", "Sucurİ/Cloudproxy"}
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		var b strings.Builder
		if rng.IntN(8) == 0 { // around the edge of the peek
			b.WriteString(strings.Repeat("a", ChallengePeek-rng.IntN(100)))
		}
		for range rng.IntN(12) {
			b.WriteString(piece())
		}
		body := []byte(b.String())
		status := statuses[rng.IntN(len(statuses))]
		h := fuzzHeader(uint8(rng.IntN(64)), []string{"", "challenge", "Managed-Challenge"}[rng.IntN(3)], servers[rng.IntN(len(servers))], "1")
		if got, want := detect(status, h, body), detectRef(status, h, body); got != want {
			t.Fatalf("status %d, header %v, body %q: detect = %d, detectRef = %d", status, h, body, got, want)
		}
	}
}

// TestDetectChallengeAllocs: detect allocates nothing, on ordinary pages
// and on challenge and denial pages, header values with capitals included.
func TestDetectChallengeAllocs(t *testing.T) {
	html := http.Header{"Content-Type": {"text/html"}, "Server": {"Apache/2.4.62 (Debian)"}}
	pages := []recorded{
		{200, html, articlePage},
		{200, html, scriptPage},
		{403, html, articlePage},
		{429, http.Header{"Server": {"Sucuri/Cloudproxy"}}, nil},
	}
	for _, c := range challengePages {
		pages = append(pages, readRecorded(t, c.file))
	}
	for _, p := range pages {
		if n := testing.AllocsPerRun(100, func() { detect(p.status, p.header, p.body) }); n != 0 {
			t.Errorf("status %d, %d-byte body: %v allocs per call, want 0", p.status, len(p.body), n)
		}
	}
}
