package backoff

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/politefetch/politefetch/internal/hostkey"
)

// Ledger is the per-host refusal ledger. The fetch chain asks [Ledger.Check]
// before sending a request and tells [Ledger.Observe] every response.
//
// The zero Ledger is ready to use: [StrictNews] policy, per-host keys, an
// in-memory store, silent. Set the fields before first use and do not change
// them afterwards; a Ledger must not be copied after first use. A Ledger is
// safe for concurrent use; it holds no lock of its own across Store calls.
type Ledger struct {
	// Policy judges responses and sets cool-downs. The zero Policy means
	// [StrictNews].
	Policy Policy
	// Store keeps the records. Nil means an in-memory [MemoryStore] owned by
	// the Ledger.
	Store Store
	// PerSite keys records by registrable domain (eTLD+1 from the public
	// suffix list), so news.example.co.uk and www.example.co.uk share one
	// record. False keys by host name. IP addresses are keyed as they are.
	PerSite bool
	// Logger receives one record per event (refusals and suspensions at
	// Warn, the rest at Info). Nil is silent.
	Logger *slog.Logger
	// OnEvent, when set, is called synchronously with every event (for
	// metrics). It must not call back into the Ledger.
	OnEvent func(Event)
	// Rand returns a uniform draw in [0, 1) for jitter; it must be safe
	// for concurrent use. Nil means math/rand/v2's Float64.
	Rand func() float64

	once sync.Once
	pol  Policy
	mem  MemoryStore
}

func (l *Ledger) init() {
	l.once.Do(func() { l.pol = l.Policy.resolved() })
}

func (l *Ledger) store() Store {
	if l.Store != nil {
		return l.Store
	}
	return &l.mem
}

// Sweep drops the records that hold nothing at now (see [Sweeper]) and
// returns how many it dropped. A Store that does not implement Sweeper is
// left alone (0, nil). Callers that keep a Ledger for long may call Sweep
// from time to time; nothing it drops affects any decision.
func (l *Ledger) Sweep(ctx context.Context, now time.Time) (int, error) {
	if s, ok := l.store().(Sweeper); ok {
		return s.Sweep(ctx, now)
	}
	return 0, nil
}

// Key returns the record key for host: the one per-host key every politefetch
// layer uses (lowercase, IDNA A-labels, no trailing dot; see internal/hostkey),
// without any port, and reduced to its registrable domain when PerSite is
// set. A name hostkey rejects is still keyed, lower-cased, so that it is
// never let through unrecorded.
func (l *Ledger) Key(host string) string {
	h := strings.TrimSpace(host)
	if n, err := hostkey.Normalize(h); err == nil {
		h = n
	} else {
		h = strings.TrimSuffix(strings.ToLower(h), ".")
	}
	if strings.IndexByte(h, ':') >= 0 {
		if hh, _, err := net.SplitHostPort(h); err == nil {
			h = hh
		}
		h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	}
	if l.PerSite {
		return hostkey.Site(h)
	}
	return h
}

// Decision is [Ledger.Check]'s answer.
type Decision struct {
	// Allowed says the request may start now.
	Allowed bool
	// Reason says why not (Cooldown, Suspended, Unavailable), or, for
	// an allowed request, Recheck when it is a suspended host's daily
	// re-check, else None.
	Reason Reason
	// Until is, for a refused request, the earliest instant a request of
	// this kind may start (zero for Unavailable). Zero when allowed.
	Until time.Time
	// Host is the ledger key the decision is about; Kind the request's.
	Host string
	Kind Kind
	// Strikes is the host's count of refusals in a row.
	Strikes int
	// Cause and LastAt describe the host's last refusal ("" and zero if none).
	Cause  string
	LastAt time.Time
	// Recorded says the Store held a record of the host when Check read
	// it. False is the common case, a host with nothing against it: a
	// caller passes it on to Observe as Outcome.NoRecord.
	Recorded bool

	err error
}

// Err returns nil for an allowed request, else a *[CooldownError].
func (d Decision) Err() error {
	if d.Allowed {
		return nil
	}
	return &CooldownError{Host: d.Host, Kind: d.Kind, Reason: d.Reason, Until: d.Until, Cause: d.Cause, Err: d.err}
}

// Check reports whether a request of kind to host may start at now.
//
// A host cooling down refuses every kind until its cool-down ends. A
// suspended host also refuses articles until its next re-check; the first
// article Check at or after that instant is allowed (Reason Recheck) and
// moves the re-check a full RecheckEvery on, so exactly one article request
// per period gets through, however many goroutines or processes ask (a
// re-check whose request then gets no answer at all is spent, not given
// back).
// Feeds and robots.txt of a suspended host keep their schedule. Under a
// NoCooldown policy every request is allowed. A Store error refuses the
// request (Reason Unavailable). ctx bounds the Store calls only.
func (l *Ledger) Check(ctx context.Context, host string, kind Kind, now time.Time) Decision {
	l.init()
	key := l.Key(host)
	d := Decision{Host: key, Kind: kind}
	st, ok, err := l.store().Get(ctx, key)
	if err != nil {
		d.Reason, d.err = Unavailable, err
		return d
	}
	if !ok {
		d.Allowed = true
		return d
	}
	d.Recorded = true
	d.fill(&st)
	if l.pol.NoCooldown {
		d.Allowed = true
		return d
	}
	blockedUntil, reason := l.blocked(&st, kind, now)
	if reason != None {
		d.Reason, d.Until = reason, blockedUntil
		return d
	}
	if !(kind.article() && st.Suspended) {
		d.Allowed = true
		return d
	}
	// The suspended host's re-check is due: take it, unless another caller
	// took it first.
	st, granted, err := l.takeRecheck(ctx, key, kind, now)
	if err != nil {
		d.Reason, d.err = Unavailable, err
		return d
	}
	d.fill(&st)
	if !granted {
		d.Until, d.Reason = l.blocked(&st, kind, now)
		if d.Reason == None {
			d.Allowed = true
		}
		return d
	}
	d.Allowed = true
	if st.Suspended {
		d.Reason = Recheck
		l.emit(ctx, Event{Type: EventRecheck, Host: key, Kind: kind, Cause: st.Cause(), Strikes: st.Strikes,
			NextCheck: st.NextCheck, At: now})
	}
	return d
}

// takeRecheck moves a suspended host's due re-check a period on and
// reports whether this caller took it; it returns the record as stored.
func (l *Ledger) takeRecheck(ctx context.Context, key string, kind Kind, now time.Time) (State, bool, error) {
	var st State
	granted := false
	err := l.store().Update(ctx, key, func(cur State, ok bool) (State, bool) {
		granted, st = false, cur
		if !ok {
			granted = true // cleared meanwhile: nothing stands in the way
			return cur, false
		}
		if _, r := l.blocked(&cur, kind, now); r != None || !cur.Suspended {
			return cur, true
		}
		granted = true
		cur.NextCheck = now.Add(l.pol.RecheckEvery)
		st = cur
		return cur, true
	})
	return st, granted, err
}

func (d *Decision) fill(st *State) {
	d.Strikes, d.Cause, d.LastAt = st.Strikes, st.Cause(), st.LastAt
}

// blocked returns why st refuses a request of kind at now, and until when.
func (l *Ledger) blocked(st *State, kind Kind, now time.Time) (time.Time, Reason) {
	cooling := now.Before(st.Until)
	suspended := kind.article() && st.Suspended && now.Before(st.NextCheck)
	switch {
	case suspended && (!cooling || !st.Until.After(st.NextCheck)):
		return st.NextCheck, Suspended
	case cooling:
		return st.Until, Cooldown
	}
	return time.Time{}, None
}

// EventType says what an [Event] records.
type EventType uint8

const (
	// EventNone: the response changed nothing (the zero EventType).
	EventNone EventType = iota
	// EventRefused: a refusal was recorded; Until is the cool-down's end (zero
	// under a NoCooldown policy, and under a RetryAfterOnly policy when the
	// refusal carried no Retry-After).
	EventRefused
	// EventSuspended: a refusal made the host reach the policy's StrikeLimit;
	// its articles are off until NextCheck.
	EventSuspended
	// EventCooledDown: a response that is not a refusal (a 429 or 503 the
	// policy does not count) carried a Retry-After that the ledger honours
	// until Until.
	EventCooledDown
	// EventRecheck: Check let a suspended host's daily re-check through.
	EventRecheck
	// EventCleared: a success cleared the host's refusals (and suspension).
	EventCleared
)

// String returns a short lowercase name such as "refused".
func (t EventType) String() string {
	switch t {
	case EventNone:
		return "none"
	case EventRefused:
		return "refused"
	case EventSuspended:
		return "suspended"
	case EventCooledDown:
		return "cooled down"
	case EventRecheck:
		return "re-check"
	case EventCleared:
		return "cleared"
	}
	return "event"
}

// Event is one change in a host's record, handed to Ledger.OnEvent and
// Ledger.Logger and returned by [Ledger.Observe].
type Event struct {
	Type EventType
	// Host is the ledger key; Kind the kind of the request concerned.
	Host string
	Kind Kind
	// Cause is the refusal's description ("status 403", "challenge
	// akamai") or, for EventCooledDown, "retry-after".
	Cause string
	// Strikes is the count of refusals in a row after the event.
	Strikes int
	// Until is the end of the host's cool-down (zero when none).
	Until time.Time
	// NextCheck is the next re-check of a suspended host (zero when not
	// suspended).
	NextCheck time.Time
	// At is the instant the event happened (the now passed in).
	At time.Time
	// Verdict is the Policy's judgement of the response [Ledger.Observe]
	// was given, set on every event Observe returns (EventNone included):
	// whether the answer was a refusal is the ledger's to say, so no
	// caller keeps its own list of refusing statuses. Zero (Neutral) on
	// the events of Check.
	Verdict Verdict
}

// Observe records what a response taught: a refusal (by the Ledger's
// Policy, see [Policy.Classify]) adds a strike, sets the cool-down to the
// ladder's step for that strike (with jitter, never under Min429 for a 429,
// and extended by a longer Retry-After up to RetryAfterCeiling) and, at
// StrikeLimit, suspends the host's articles; a cool-down is only ever
// lengthened. A success of a kind weighing at least as much as the kinds
// refused clears the strikes and the suspension but not a running
// cool-down. Under a RetryAfterOnly policy a refusal sets no ladder step
// and no suspension: only its Retry-After, if any, cools the host down. A
// neutral 429 or 503 with a Retry-After cools the host down without a
// strike. A refusal or a cool-down is stored even if ctx is cancelled
// meanwhile (the Store gets ctx's values, not its cancellation). Observe
// returns the event it emitted (EventNone when nothing changed), with the
// response's Verdict. On a Store error nothing is recorded and the error is
// returned, beside an event carrying only the Verdict.
//
// A success costs one read of the Store, to find what it clears, and a
// write when there is something; none at all when o.NoRecord says the
// Check before the request found no record (see [Outcome]).
func (l *Ledger) Observe(ctx context.Context, host string, o Outcome, now time.Time) (Event, error) {
	l.init()
	key := l.Key(host)
	v := l.pol.classify(o)
	if v == Success && l.nothingToClear(ctx, key, o) {
		return Event{Verdict: v}, nil
	}
	var ev Event
	var fn func(State, bool) (State, bool)
	switch v {
	case Refusal:
		fn = l.refusalUpdate(key, o, now, &ev)
	case Success:
		fn = l.successUpdate(key, o, now, &ev)
	default:
		if fn = l.retryAfterUpdate(key, o, now, &ev); fn == nil {
			return Event{Verdict: v}, nil
		}
	}
	uctx := ctx
	if v != Success {
		// A refusal or a cool-down is recorded even if the caller gives up
		// at this very moment.
		uctx = context.WithoutCancel(ctx)
	}
	if err := l.store().Update(uctx, key, fn); err != nil {
		return Event{Verdict: v}, err
	}
	ev.Verdict = v
	l.emit(ctx, ev)
	return ev, nil
}

// nothingToClear reports whether a success o at key has nothing to clear,
// without a read when o.NoRecord says the Check before it found no record,
// else by one read of the Store that finds none. A Store error reports
// false: the update that follows meets it. (A refusal recorded since the
// Check stands, which is the polite side, and the next Check reads it.)
func (l *Ledger) nothingToClear(ctx context.Context, key string, o Outcome) bool {
	if o.NoRecord {
		return true
	}
	_, ok, err := l.store().Get(ctx, key)
	return err == nil && !ok
}

// refusalUpdate returns the Store update that records the refusal o at key
// at now: a strike, the cool-down of the policy (the ladder's step, or only
// the Retry-After under RetryAfterOnly, or none under NoCooldown) and, at
// StrikeLimit, the suspension of the host's articles. The update sets *ev to
// the EventRefused or EventSuspended it makes. The jitter is drawn here,
// once, before the Store's lock is taken.
func (l *Ledger) refusalUpdate(key string, o Outcome, now time.Time, ev *Event) func(State, bool) (State, bool) {
	var r float64
	if l.pol.Jitter > 0 {
		r = l.rand() // drawn once, outside the store's lock
	}
	ra, raOK := o.retryAfter(now)
	return func(cur State, _ bool) (State, bool) {
		cur.Strikes++
		if cur.Strikes == 1 || o.Kind.weight() > cur.RefusedKind.weight() {
			cur.RefusedKind = o.Kind
		}
		cur.LastStatus, cur.LastChallenge, cur.LastAt = o.Status, o.Challenge, now
		*ev = Event{Type: EventRefused, Host: key, Kind: o.Kind, Cause: o.Cause(), At: now}
		switch {
		case l.pol.NoCooldown:
		case l.pol.RetryAfterOnly:
			// The server's own cool-down, exactly; none of the ledger's.
			if u := now.Add(min(ra, l.pol.RetryAfterCeiling)); raOK && u.After(cur.Until) {
				cur.Until = u
			}
		default:
			if u := now.Add(l.pol.cooldown(cur.Strikes, o.Status, r, ra, raOK)); u.After(cur.Until) {
				cur.Until = u
			}
			if l.pol.StrikeLimit > 0 && cur.Strikes >= l.pol.StrikeLimit {
				if !cur.Suspended {
					cur.Suspended = true
					cur.NextCheck = now.Add(l.pol.RecheckEvery)
					ev.Type = EventSuspended
				} else if o.Kind.article() {
					if n := now.Add(l.pol.RecheckEvery); n.After(cur.NextCheck) {
						cur.NextCheck = n
					}
				}
			}
		}
		ev.Strikes, ev.Until, ev.NextCheck = cur.Strikes, cur.Until, cur.NextCheck
		if !cur.Until.After(now) {
			ev.Until = time.Time{}
		}
		return cur, true
	}
}

// successUpdate returns the Store update that records the success o at key
// at now: when o's kind weighs at least as much as the kinds refused, it
// clears the strikes and the suspension, not a running cool-down, and sets
// *ev to the EventCleared (else to the zero Event). A record left holding
// nothing is dropped.
func (l *Ledger) successUpdate(key string, o Outcome, now time.Time, ev *Event) func(State, bool) (State, bool) {
	return func(cur State, ok bool) (State, bool) {
		*ev = Event{}
		if !ok {
			return cur, false
		}
		if (cur.Strikes > 0 || cur.Suspended) && o.Kind.weight() >= cur.RefusedKind.weight() {
			*ev = Event{Type: EventCleared, Host: key, Kind: o.Kind, Cause: cur.Cause(), At: now}
			cur.Strikes, cur.Suspended, cur.NextCheck, cur.RefusedKind = 0, false, time.Time{}, 0
			if cur.Until.After(now) {
				ev.Until = cur.Until
			}
		}
		return cur, !cur.idle(now)
	}
}

// retryAfterUpdate returns the Store update that honours the Retry-After of
// the neutral 429 or 503 o at key at now (up to RetryAfterCeiling, without
// a strike), setting *ev to the EventCooledDown when it lengthens the
// cool-down (else to the zero Event). It returns nil when there is nothing
// to honour: a NoCooldown policy, no Retry-After, or a status that does not
// ask to slow down.
func (l *Ledger) retryAfterUpdate(key string, o Outcome, now time.Time, ev *Event) func(State, bool) (State, bool) {
	ra, ok := o.retryAfter(now)
	if l.pol.NoCooldown || !ok || !asksToSlowDown(o.Status) {
		return nil
	}
	ra = min(ra, l.pol.RetryAfterCeiling)
	return func(cur State, _ bool) (State, bool) {
		*ev = Event{}
		if u := now.Add(ra); u.After(cur.Until) {
			cur.Until = u
			*ev = Event{Type: EventCooledDown, Host: key, Kind: o.Kind, Cause: "retry-after", Strikes: cur.Strikes,
				Until: u, NextCheck: cur.NextCheck, At: now}
		}
		return cur, !cur.idle(now)
	}
}

// Suspended reports whether the event leaves the host suspended.
func (e Event) Suspended() bool { return !e.NextCheck.IsZero() }

func (l *Ledger) emit(ctx context.Context, ev Event) {
	if ev.Type == EventNone {
		return
	}
	if l.OnEvent != nil {
		l.OnEvent(ev)
	}
	if l.Logger == nil {
		return
	}
	level := slog.LevelInfo
	if ev.Type == EventRefused || ev.Type == EventSuspended {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{slog.String("host", ev.Host), slog.String("kind", ev.Kind.String()),
		slog.String("cause", ev.Cause), slog.Int("strikes", ev.Strikes)}
	if !ev.Until.IsZero() {
		attrs = append(attrs, slog.Time("until", ev.Until))
	}
	if !ev.NextCheck.IsZero() {
		attrs = append(attrs, slog.Time("next_check", ev.NextCheck))
	}
	l.Logger.LogAttrs(ctx, level, "backoff: "+ev.Type.String(), attrs...)
}

func (l *Ledger) rand() float64 {
	if l.Rand != nil {
		return l.Rand()
	}
	return rand.Float64()
}
