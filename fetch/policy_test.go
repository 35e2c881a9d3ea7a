package fetch

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/robots"
)

// TestPolicy_S1_D3_UserAgents: the User-Agent of each document, from the
// identity each document gives as its own example (theirs, not ours: a preset
// carries none).
func TestPolicy_S1_D3_UserAgents(t *testing.T) {
	t.Parallel()
	strict := StrictNews()
	strict.Name, strict.Version, strict.InfoURL = "ARCEL-DailyDose-Bot", "1", "https://arcel.example/crawler"
	withContact := strict
	withContact.Contact = "crawler@arcel.example"
	digest := Digest() // the digest document's own example identity
	digest.Name, digest.Version, digest.InfoURL, digest.Contact = "NewsElsBot", "1.0", "https://news.elsastry.com/bot", "bot@news.elsastry.com"
	vault := Vault() // the vault document's own example identity
	vault.Name, vault.Version, vault.InfoURL, vault.Contact = "EigerVaultTrialConnector", "1", "https://eigervault.ch", "contact@eigervault.ch"
	for _, tc := range []struct {
		name string
		p    *Policy
		want string
	}{
		{"S1 strict", &strict, "ARCEL-DailyDose-Bot/1 (+https://arcel.example/crawler)"},
		{"S1 strict with contact", &withContact, "ARCEL-DailyDose-Bot/1 (+https://arcel.example/crawler; crawler@arcel.example)"},
		{"D3 digest", &digest, "NewsElsBot/1.0 (+https://news.elsastry.com/bot; bot@news.elsastry.com)"},
		{"V9 vault", &vault, "EigerVaultTrialConnector/1 (+https://eigervault.ch; contact@eigervault.ch)"},
	} {
		if got := tc.p.UserAgent(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if _, err := New(*tc.p); err != nil {
			t.Errorf("%s: New: %v", tc.name, err)
		}
	}
}

// TestPolicy_S1_D3_PresetsCarryNoIdentity: no preset crawls under anybody's
// name: New refuses each one until the user names the crawler, and says which
// fields are missing (the contact where the document asks for one, D3).
func TestPolicy_S1_D3_PresetsCarryNoIdentity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		preset  func() Policy
		missing []string
	}{
		{"strict", StrictNews, []string{"Name", "Version", "InfoURL"}},
		{"digest", Digest, []string{"Name", "Version", "InfoURL", "Contact"}},
		{"vault", Vault, []string{"Name", "Version", "InfoURL", "Contact"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := tc.preset()
			if p.Name != "" || p.Version != "" || p.InfoURL != "" || p.Contact != "" {
				t.Fatalf("preset carries an identity: %q", p.UserAgent())
			}
			_, err := New(p)
			var ie *IdentityError
			if !errors.As(err, &ie) || !errors.Is(err, ErrNoIdentity) || !slices.Equal(ie.Missing, tc.missing) {
				t.Fatalf("New(%s()) = %v, want an *IdentityError missing %v", tc.name, err, tc.missing)
			}
			for _, f := range tc.missing {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("error %q does not name %s", err, f)
				}
			}
			if _, err := New(withIdentity(p)); err != nil {
				t.Fatalf("New with an identity: %v", err)
			}
			bad := withIdentity(p)
			bad.Name = "Two Words"
			if _, err := New(bad); !errors.As(err, &ie) || !slices.Equal(ie.Invalid, []string{"Name"}) {
				t.Fatalf("a name with a space: err = %v", err)
			}
		})
	}
}

// TestPolicy_Presets: the settings that differ between the three documents.
func TestPolicy_Presets(t *testing.T) {
	t.Parallel()
	s, d, v := StrictNews(), Digest(), Vault()
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"S2 strict interval", s.Interval, time.Second},
		{"S2 strict per site", s.PerSite, true},
		{"S3 strict robots statuses", s.Robots.Status, robots.Strict},
		{"S3 strict robots TTL", s.Robots.TTL, time.Hour},
		{"S7 strict image redirects", s.ImageMaxRedirects, 3},
		{"S4 strict strikes", s.Backoff.StrikeLimit, 5},
		{"D2 digest band low", d.Interval, 2 * time.Second},
		{"D2 digest band high", d.IntervalMax, 5 * time.Second},
		{"D2 digest one in flight", d.InFlight, 1},
		{"D1 digest robots", d.Robots.Status, robots.RFC9309},
		{"D4 digest conditional", d.NoConditional, false},
		{"D5 digest 429 floor", d.Backoff.Min429, 15 * time.Minute},
		{"V7 vault interval", v.Interval, time.Second},
		{"V11 vault robots retry", v.Robots.RetryInterval, 15 * time.Minute},
		{"V11 vault robots TTL", v.Robots.TTL, 24 * time.Hour},
		{"V9 vault no conditional", v.NoConditional, true},
		{"V12 vault no back-off of its own", v.Backoff.NoCooldown || v.Backoff.StrikeLimit != 0, false},
		{"V12 vault honours Retry-After only", v.Backoff.RetryAfterOnly, true},
		{"V10 https only", s.AllowHTTP || d.AllowHTTP || v.AllowHTTP, false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if StrictNews().Backoff.RefuseStatus[0] = 999; StrictNews().Backoff.RefuseStatus[0] == 999 {
		t.Error("presets share state")
	}
}

// TestURLPolicy_V10_AdmittedAndParams covers host patterns and added parameters.
func TestURLPolicy_V10_AdmittedAndParams(t *testing.T) {
	t.Parallel()
	admitted := normalizeList([]string{"News.Example", "*.cdn.example", "bücher.example"})
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"news.example", true}, {"www.news.example", false}, {"cdn.example", true},
		{"img.cdn.example", true}, {"evilcdn.example", false}, {"xn--bcher-kva.example", true},
	} {
		if got := hostIn(tc.host, admitted); got != tc.want {
			t.Errorf("hostIn(%s) = %v, want %v", tc.host, got, tc.want)
		}
	}
	prev, _ := url.Parse("https://a.example/p?id=1")
	for _, tc := range []struct {
		next string
		want int
	}{
		{"https://a.example/q?id=1", 0},
		{"https://a.example/q", 0},
		{"https://a.example/q?id=1&session=2", 1},
		{"https://a.example/q?ref=x", 0},
		{"https://a.example/q?utm_source=x&b=2", 2},
	} {
		n, _ := url.Parse(tc.next)
		if got := addedParams(prev, n, []string{"ref"}); len(got) != tc.want {
			t.Errorf("addedParams(%s) = %v, want %d", tc.next, got, tc.want)
		}
	}
}

// TestRefusedError_MatchesItsReason: errors.Is finds each reason's sentinel and
// the cause; the message is one line with the package prefix, once.
func TestRefusedError_MatchesItsReason(t *testing.T) {
	t.Parallel()
	cause := errors.New("underlying")
	for r := Robots; r <= InvalidHost; r++ {
		err := error(&RefusedError{Host: "a.example", Reason: r, Until: time.Unix(0, 0), Err: cause})
		if !errors.Is(err, r.sentinel()) || !errors.Is(err, cause) {
			t.Errorf("%s: does not match its sentinel or cause", r)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "fetch: refused a.example: ") || strings.Contains(msg, "\n") || strings.Count(msg, "fetch:") != 1 {
			t.Errorf("%s: message %q", r, msg)
		}
		for o := Robots; o <= InvalidHost; o++ {
			if o != r && errors.Is(err, o.sentinel()) {
				t.Errorf("%s also matches %s", r, o)
			}
		}
	}
	if got := (Credential{Header: "X-Key", Value: NewSecret("s3cret"), Hosts: []string{"a"}}).String(); strings.Contains(got, "s3cret") {
		t.Errorf("Credential.String leaks the value: %q", got)
	}
}
