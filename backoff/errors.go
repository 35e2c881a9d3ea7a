package backoff

import (
	"errors"
	"strings"
	"time"
)

// Sentinels a [CooldownError] unwraps to, one per refusing [Reason].
var (
	ErrCooldown    = errors.New("backoff: host cooling down")
	ErrSuspended   = errors.New("backoff: host suspended")
	ErrUnavailable = errors.New("backoff: ledger unavailable")
)

// CooldownError is the ledger's refusal of a request, as [Decision.Err]
// returns it: which host (ledger key), what kind of request, why (a
// cool-down, a suspension, or a ledger that could not answer), until when,
// and the host's last refusal. It unwraps to ErrCooldown,
// ErrSuspended or ErrUnavailable (and, for the last, the store's error).
type CooldownError struct {
	Host   string
	Kind   Kind
	Reason Reason
	Until  time.Time // zero when unknown (Unavailable)
	Cause  string    // the host's last refusal, e.g. "status 429"
	Err    error     // the store's error, for Unavailable
}

// Error says which request was refused, why, until when, and the host's
// last refusal.
func (e *CooldownError) Error() string {
	var b strings.Builder
	b.WriteString("backoff: ")
	b.WriteString(e.Kind.String())
	b.WriteString(" request to ")
	b.WriteString(e.Host)
	b.WriteString(" refused: ")
	b.WriteString(e.Reason.String())
	if !e.Until.IsZero() {
		b.WriteString(" until ")
		b.WriteString(e.Until.UTC().Format(time.RFC3339))
	}
	if e.Cause != "" {
		b.WriteString(" (last refusal: ")
		b.WriteString(e.Cause)
		b.WriteString(")")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the sentinel for e.Reason, and e.Err when set.
func (e *CooldownError) Unwrap() []error {
	var s error
	switch e.Reason {
	case Cooldown:
		s = ErrCooldown
	case Suspended:
		s = ErrSuspended
	default:
		s = ErrUnavailable
	}
	if e.Err != nil {
		return []error{s, e.Err}
	}
	return []error{s}
}
