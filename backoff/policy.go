package backoff

import (
	"reflect"
	"slices"
	"time"
)

// Policy says which responses are refusals and how long a host is left
// alone after one. It is plain data: copy it, change a field, hand it to a
// [Ledger] before the ledger's first use.
//
// The zero Policy is not "no policy": a [Ledger] whose Policy is the zero
// value uses [StrictNews], the most polite preset ([Policy.IsZero] says
// which Policy that is). Within a non-zero Policy, each zero field has the
// meaning documented on it.
type Policy struct {
	// Name labels the policy in events and logs.
	Name string

	// RefuseStatus lists the status codes that are refusals. A bot-challenge
	// page is a refusal whatever its status.
	RefuseStatus []int

	// RefuseNon200 makes every final answer other than 200 a refusal when
	// the request is not for robots.txt: 403, 404, 429, 5xx alike. Redirects
	// (301, 302, 303, 307, 308) and 304 are not final answers and are not
	// refusals. robots.txt answers follow RefuseStatus only (RFC 9309 reads
	// a 4xx robots.txt as absent).
	RefuseNon200 bool

	// NoCooldown records refusals (strikes, last reason, events) but never
	// refuses a request because of them: neither cool-downs nor Retry-After
	// nor suspension. It overrides RetryAfterOnly.
	NoCooldown bool

	// RetryAfterOnly records refusals (strikes, last reason, events) and
	// imposes no back-off of its own — no ladder, jitter, Min429 or
	// suspension — but honours the server's: a refusal carrying a
	// Retry-After (and a 429 or 503 carrying one, refusal or not) cools the
	// host down for exactly that long, capped at RetryAfterCeiling. The
	// vault connector's preset sets it; its pass accounting (at most three
	// reads per article per pass) lives in the crawl layer.
	RetryAfterOnly bool

	// Base is the cool-down after the first refusal in a row. Zero means
	// DefaultBase.
	Base time.Duration

	// Factor multiplies the cool-down at each further refusal in a row.
	// Zero (or anything below 1) means 2.
	Factor float64

	// Ceiling caps the cool-down the ladder computes. Zero means
	// DefaultCeiling.
	Ceiling time.Duration

	// Jitter spreads each cool-down: the ladder's step d becomes a uniform
	// draw in [d, d·(1+Jitter)], then is capped at Ceiling. Zero means none.
	Jitter float64

	// Min429 is the shortest cool-down after a 429, whatever the ladder
	// says. Zero means no floor beyond the ladder.
	Min429 time.Duration

	// RetryAfterCeiling caps a Retry-After that asks for an absurdly long
	// wait. A Retry-After is honoured when it is longer than the ladder's
	// cool-down, and the ladder's cool-down stands when it is longer. Zero
	// means DefaultRetryAfterCeiling.
	RetryAfterCeiling time.Duration

	// StrikeLimit is the number of refusals in a row after which the host is
	// suspended: its articles are refused, apart from one re-check every
	// RecheckEvery, while feeds and robots.txt keep their schedule (subject
	// to cool-downs). Zero means never suspend.
	StrikeLimit int

	// RecheckEvery is the interval between a suspended host's re-checks.
	// Zero means DefaultRecheck.
	RecheckEvery time.Duration
}

// Defaults for the zero fields of a [Policy].
const (
	DefaultBase              = 5 * time.Minute
	DefaultCeiling           = 6 * time.Hour
	DefaultRetryAfterCeiling = 24 * time.Hour
	DefaultRecheck           = 24 * time.Hour
)

// StrictNews returns the strict news crawler's policy: 401, 403,
// 429 and bot-challenge pages are refusals; the host cools down 5 min,
// doubling up to 6 h; Retry-After is honoured when longer; after 5
// refusals in a row its articles are suspended and re-checked once a day.
// Each call returns a fresh value.
func StrictNews() Policy {
	return Policy{
		Name:              "strict-news",
		RefuseStatus:      []int{401, 403, 429},
		Base:              5 * time.Minute,
		Factor:            2,
		Ceiling:           6 * time.Hour,
		RetryAfterCeiling: 24 * time.Hour,
		StrikeLimit:       5,
		RecheckEvery:      24 * time.Hour,
	}
}

// Digest returns the digest engine's policy: 429, 503 and
// bot-challenge pages are refusals; the back-off is exponential with random
// jitter and every cool-down lies between 30 and 60 min: the first refusal
// in a row draws uniformly in [30, 60] min, and the ladder then doubles to
// the band's top, 60 min. A 429 is never retried within 15 min, and a
// longer Retry-After wins (up to 24 h). It never suspends a host. Each
// call returns a fresh value.
func Digest() Policy {
	return Policy{
		Name:              "digest",
		RefuseStatus:      []int{429, 503},
		Base:              30 * time.Minute,
		Factor:            2,
		Ceiling:           60 * time.Minute,
		Jitter:            1,
		Min429:            15 * time.Minute,
		RetryAfterCeiling: 24 * time.Hour,
	}
}

// Vault returns the vault connector's policy: every final answer
// other than 200 (and every bot-challenge page) is recorded as a refusal;
// the ledger imposes no back-off of its own (the crawl layer retries on the
// next pass), but a refusal carrying a Retry-After cools the host down for
// exactly that long, up to 24 h: "no back-off of its own" does not make
// asking again inside the server's announced cool-down polite. Each call
// returns a fresh value.
func Vault() Policy {
	return Policy{
		Name:              "vault",
		RefuseNon200:      true,
		RetryAfterOnly:    true,
		RetryAfterCeiling: 24 * time.Hour,
	}
}

// IsZero reports whether p sets no field at all, the Policy a [Ledger] and
// [Policy.Classify] read as [StrictNews]. Every field counts, including
// any added later: a Policy that sets only one field is never taken for
// the zero one. An empty RefuseStatus counts as unset, set or nil.
func (p Policy) IsZero() bool {
	if len(p.RefuseStatus) == 0 {
		p.RefuseStatus = nil
	}
	return reflect.ValueOf(p).IsZero()
}

// resolved returns p with its zero fields filled in and its own copy of
// RefuseStatus.
func (p Policy) resolved() Policy {
	if p.IsZero() {
		p = StrictNews()
	}
	p.RefuseStatus = slices.Clone(p.RefuseStatus)
	if p.Base <= 0 {
		p.Base = DefaultBase
	}
	if !(p.Factor >= 1) {
		p.Factor = 2
	}
	if p.Ceiling <= 0 {
		p.Ceiling = DefaultCeiling
	}
	if p.Ceiling < p.Base {
		p.Ceiling = p.Base
	}
	if !(p.Jitter > 0) {
		p.Jitter = 0
	}
	if p.RetryAfterCeiling <= 0 {
		p.RetryAfterCeiling = DefaultRetryAfterCeiling
	}
	if p.RecheckEvery <= 0 {
		p.RecheckEvery = DefaultRecheck
	}
	if p.StrikeLimit < 0 {
		p.StrikeLimit = 0
	}
	return p
}

// Step returns the cool-down the ladder gives the n-th refusal in a row
// (n ≥ 1) before jitter, Min429 and Retry-After: Base·Factor^(n−1), capped
// at Ceiling. Zero fields take their defaults as documented on [Policy].
func (p Policy) Step(n int) time.Duration {
	r := p.resolved()
	return r.step(n)
}

func (p *Policy) step(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := float64(p.Base)
	for i := 1; i < n; i++ {
		d *= p.Factor
		if d >= float64(p.Ceiling) {
			return p.Ceiling
		}
	}
	if d >= float64(p.Ceiling) {
		return p.Ceiling
	}
	return time.Duration(d)
}

// refuses reports whether the policy counts an answer with this status,
// for this kind of request, as a refusal (challenges aside).
func (p *Policy) refuses(kind Kind, status int) bool {
	if slices.Contains(p.RefuseStatus, status) {
		return true
	}
	if !p.RefuseNon200 || kind == Robots || status < 200 {
		return false // informational answers (and status 0) are not final
	}
	switch status {
	case 200, 301, 302, 303, 304, 307, 308:
		return false
	}
	return true
}

// cooldown returns the cool-down the n-th refusal in a row earns: the
// ladder's step, spread by jitter draw r in [0, 1) and capped at Ceiling,
// at least Min429 for a 429, and at least the Retry-After (ra, when raOK)
// capped at RetryAfterCeiling.
func (p *Policy) cooldown(n, status int, r float64, ra time.Duration, raOK bool) time.Duration {
	d := p.step(n)
	if p.Jitter > 0 && r > 0 {
		j := float64(d) * (1 + p.Jitter*min(r, 1))
		if j >= float64(p.Ceiling) {
			d = p.Ceiling
		} else {
			d = time.Duration(j)
		}
	}
	if status == 429 && d < p.Min429 {
		d = p.Min429
	}
	if raOK {
		d = max(d, min(ra, p.RetryAfterCeiling))
	}
	return d
}
