package backoff

import (
	"net/http"
	"strconv"
)

// Outcome is what the ledger learns from one response: the facts, not yet
// judged. [Ledger.Observe] judges them by its own [Policy]. Build one with
// [NewOutcome]; the zero Outcome is an article answered with status 0, which
// is neither a success nor a refusal.
type Outcome struct {
	// Kind is what the request was for.
	Kind Kind
	// Status is the response's status code.
	Status int
	// RetryAfter is the raw Retry-After header value ("" when absent).
	RetryAfter string
	// Date is the raw Date header value ("" when absent). A Retry-After
	// that is an HTTP-date is read as a delay from Date when it parses,
	// so a clock of ours that is off shortens or lengthens no cool-down.
	Date string
	// Challenge names the bot-protection provider whose challenge or block
	// page this was (see [DetectChallenge]), or "" for an ordinary response.
	Challenge string
	// NoRecord is set by a caller whose Check before this request found no
	// record of the host ([Decision].Recorded false). A success then has
	// nothing to clear, and Observe reads and writes nothing: one round
	// trip fewer per request with a networked Store. A refusal another
	// process recorded since that Check stands, and the next Check, which
	// always reads the Store, sees it. It changes nothing for a refusal or
	// a neutral response. Leave it false when unsure.
	NoRecord bool
}

// NewOutcome reads an Outcome from a response: its status, its headers and
// the first [ChallengePeek] bytes of its body (fewer when the body is
// shorter; more are ignored). It does not keep h or bodyPrefix.
func NewOutcome(kind Kind, status int, h http.Header, bodyPrefix []byte) Outcome {
	o := Outcome{Kind: kind, Status: status, RetryAfter: h.Get("Retry-After"), Date: h.Get("Date")}
	o.Challenge, _ = DetectChallenge(status, h, bodyPrefix)
	return o
}

// Verdict is a [Policy]'s judgement of an [Outcome].
type Verdict uint8

const (
	// Neutral is neither a success nor a refusal (a redirect, a 404 or a
	// 5xx the policy does not count): it changes no strike count, though a
	// Retry-After on a 429 or 503 still cools the host down.
	Neutral Verdict = iota
	// Success is a 2xx or a 304: it clears the refusals in a row.
	Success
	// Refusal counts one strike against the host.
	Refusal
)

// String returns "neutral", "success" or "refusal".
func (v Verdict) String() string {
	switch v {
	case Neutral:
		return "neutral"
	case Success:
		return "success"
	case Refusal:
		return "refusal"
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// Classify judges o by p: a bot-challenge page is a refusal whatever its
// status; so is a status p counts as one (RefuseStatus, RefuseNon200); a
// 2xx or 304 is a success; anything else is neutral. A zero p is judged as
// [StrictNews].
func (p Policy) Classify(o Outcome) Verdict {
	if p.IsZero() {
		p = StrictNews()
	}
	return p.classify(o)
}

func (p *Policy) classify(o Outcome) Verdict {
	switch {
	case o.Challenge != "":
		return Refusal
	case p.refuses(o.Kind, o.Status):
		return Refusal
	case o.Status >= 200 && o.Status < 300, o.Status == 304:
		return Success
	}
	return Neutral
}

// SlowsDown reports whether o is the host refusing us or asking us to slow
// down: a refusal by p (see [Policy.Classify]), or a 429 or 503 whatever p
// says of it (the answers whose Retry-After the ledger honours even when p
// does not count them as refusals). A crawler leaves such a host alone until
// its next scheduled read. A zero p is judged as [StrictNews].
func (p Policy) SlowsDown(o Outcome) bool {
	return p.Classify(o) == Refusal || asksToSlowDown(o.Status)
}

// asksToSlowDown reports whether status asks the client to come back later
// (429 Too Many Requests, 503 Service Unavailable).
func asksToSlowDown(status int) bool { return status == 429 || status == 503 }

// Cause describes o as a refusal: "challenge cloudflare" or "status 429".
func (o Outcome) Cause() string {
	if o.Challenge != "" {
		return "challenge " + o.Challenge
	}
	return "status " + strconv.Itoa(o.Status)
}
