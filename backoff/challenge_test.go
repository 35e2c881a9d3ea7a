package backoff

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
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

func readRecorded(t *testing.T, file string) recorded {
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
