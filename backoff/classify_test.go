package backoff_test

import (
	"testing"

	"github.com/politefetch/politefetch/backoff"
)

// TestClassify: what each preset counts as a refusal, a success or
// neither. The strict news crawler (S4): 401, 403, 429 and challenge pages
// are refusals, robots.txt answers too; 404 and 5xx are not. The digest
// engine (D5): 429, 503 and challenges only. The vault connector (V12):
// every final answer but 200 and 304, never a redirect or a robots.txt
// answer.
func TestClassify(t *testing.T) {
	t.Parallel()
	st := func(status int) backoff.Outcome { return backoff.Outcome{Status: status} }
	for _, preset := range []struct {
		name  string
		p     backoff.Policy
		cases []struct {
			o    backoff.Outcome
			want backoff.Verdict
		}
	}{
		{"StrictNews_S4", backoff.StrictNews(), []struct {
			o    backoff.Outcome
			want backoff.Verdict
		}{
			{st(401), backoff.Refusal}, {st(403), backoff.Refusal}, {st(429), backoff.Refusal},
			{backoff.Outcome{Status: 200, Challenge: backoff.Cloudflare}, backoff.Refusal},
			{backoff.Outcome{Status: 503, Challenge: backoff.Akamai}, backoff.Refusal},
			{st(404), backoff.Neutral}, {st(500), backoff.Neutral}, {st(503), backoff.Neutral}, {st(301), backoff.Neutral},
			{st(200), backoff.Success}, {st(204), backoff.Success}, {st(304), backoff.Success},
			{backoff.Outcome{Kind: backoff.Robots, Status: 403}, backoff.Refusal},
			{backoff.Outcome{Kind: backoff.Image, Status: 403}, backoff.Refusal},
		}},
		{"Digest_D5", backoff.Digest(), []struct {
			o    backoff.Outcome
			want backoff.Verdict
		}{
			{st(429), backoff.Refusal}, {st(503), backoff.Refusal},
			{backoff.Outcome{Status: 200, Challenge: backoff.DataDome}, backoff.Refusal},
			{st(403), backoff.Neutral}, {st(401), backoff.Neutral},
			{st(200), backoff.Success},
		}},
		{"Vault_V12", backoff.Vault(), []struct {
			o    backoff.Outcome
			want backoff.Verdict
		}{
			{st(403), backoff.Refusal}, {st(404), backoff.Refusal}, {st(500), backoff.Refusal},
			{st(200), backoff.Success},
			{backoff.Outcome{}, backoff.Neutral}, {st(301), backoff.Neutral}, {st(302), backoff.Neutral}, {st(304), backoff.Success},
			{backoff.Outcome{Kind: backoff.Robots, Status: 404}, backoff.Neutral},
			{backoff.Outcome{Kind: backoff.Robots, Status: 403}, backoff.Neutral},
		}},
	} {
		t.Run(preset.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range preset.cases {
				if got := preset.p.Classify(tc.o); got != tc.want {
					t.Errorf("Classify(%+v) = %v, want %v", tc.o, got, tc.want)
				}
			}
		})
	}
}
