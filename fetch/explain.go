package fetch

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/internal/tracking"
	"github.com/politefetch/politefetch/robots"
)

// Explanation is [Client.Explain]'s answer: whether a Get of a URL would be sent
// now, and why, layer by layer.
type Explanation struct {
	// URL is the URL as a Get would request it: tracking parameters removed,
	// its host in key form.
	URL string
	// Host is the key of the URL's host (see "State and keys" in the package
	// doc); Key is the pacing and ledger key: Host, or its registrable domain
	// under Policy.PerSite.
	Host, Key string
	// Kind is the kind the Get would read the URL as.
	Kind Kind
	// Allowed says a Get now would be sent, once the host's turn comes
	// (NextSlot). When it is false, Refusal is the *RefusedError the Get
	// would return.
	Allowed bool
	Refusal *RefusedError
	// Robots is robots.txt's answer for the URL: the group that applied and
	// its User-agent line, the deciding rule and its line, and the record
	// behind them (fetched at, until when it stands). Zero when the URL was
	// refused before robots.txt was asked (scheme, host).
	Robots robots.Decision
	// CrawlDelay is the host's Crawl-delay for this crawler, 0 when it sets
	// none; the pacer keeps the longer of it and the policy's interval.
	CrawlDelay time.Duration
	// Ledger is the refusal ledger's state for the host and this kind: a
	// cool-down or a suspension with its Until, the strikes and the last
	// refusal. Zero when the URL was refused before the ledger was asked.
	Ledger backoff.Decision
	// NextSlot is the earliest instant the pacer would let a request to Key
	// start, by this Client's own record; zero when one could start at once.
	NextSlot time.Time
	// BodyOpenSince is when the oldest response body from Key that is
	// still open was handed to its reader (through HTTPClient or
	// Transport, typically): a body holds its host's turn until it is read
	// to its end or closed, so a Get waits for it. Zero when none is open.
	BodyOpenSince time.Time
}

// String says in a few lines what the Explanation says: the URL, whether a
// Get would be sent now and, if not, why; robots.txt's deciding rule, the
// ledger's state and the pacer's next slot; a body held open.
func (e Explanation) String() string {
	var b strings.Builder
	b.WriteString(e.URL)
	if e.Kind != KindArticle {
		b.WriteString(" (" + e.Kind.String() + ")")
	}
	if e.Allowed {
		b.WriteString(": allowed")
	} else if e.Refusal != nil {
		b.WriteString(": refused: " + e.Refusal.Error())
	} else {
		b.WriteString(": not allowed")
	}
	if e.Host != "" {
		b.WriteString("\n  host " + e.Host)
		if e.Key != e.Host {
			b.WriteString(", paced and kept as " + e.Key)
		}
	}
	if r := e.Robots; r.Site != "" || r.Group != "" || r.Rule != "" {
		b.WriteString("\n  robots.txt: ")
		switch {
		case r.Rule != "":
			b.WriteString(r.Rule + " (line " + strconv.Itoa(r.Line) + ")")
		case r.Allowed:
			b.WriteString("allowed, no rule matched")
		default:
			b.WriteString("disallowed")
		}
		if r.Group != "" {
			b.WriteString(", group " + r.Group + " (line " + strconv.Itoa(r.AgentLine) + ")")
		}
		if r.Failure != "" {
			b.WriteString(", fetch failed: " + r.Failure)
		}
		if !r.Expires.IsZero() {
			b.WriteString(", stands until " + r.Expires.UTC().Format(time.RFC3339))
		}
	}
	if e.CrawlDelay > 0 {
		b.WriteString("\n  crawl-delay " + e.CrawlDelay.String())
	}
	if !e.Ledger.Allowed && !e.Ledger.Until.IsZero() {
		b.WriteString("\n  ledger: " + e.Ledger.Reason.String() + " until " + e.Ledger.Until.UTC().Format(time.RFC3339))
	}
	if e.NextSlot.IsZero() {
		b.WriteString("\n  next slot: now")
	} else {
		b.WriteString("\n  next slot: " + e.NextSlot.UTC().Format(time.RFC3339Nano))
	}
	if !e.BodyOpenSince.IsZero() {
		b.WriteString("\n  a response body from this host is still open since " + e.BodyOpenSince.UTC().Format(time.RFC3339) +
			": it holds the host's turn until it is closed")
	}
	return b.String()
}

// Explain says whether rawURL may be read now, as a Get with opts would read
// it, and why: the URL policy (scheme, admitted hosts, host form), robots.txt
// (group and rule, with their lines), the refusal ledger (a cool-down or a
// suspension, until when) and the pacer (the next slot of the host).
//
// Explain sends nothing of its own. The one request it may cause is the
// robots.txt fetch a Get would make first anyway, when the host's robots.txt
// is not cached or has expired; that fetch goes through the chain like any
// (identified, paced, refused while the host cools down) and its answer is
// cached for the Gets that follow. Explain never takes a suspended host's
// daily re-check and never moves the pacer's record.
//
// A refusal is an answer (Allowed false, Refusal set), not an error; the error
// is for a URL that does not parse, ctx ending while robots.txt is read, or a
// robots.txt request that could not be sent for a reason other than a refusal
// (the shared Schedule's failure, say: it matches robots.ErrNotSent).
func (c *Client) Explain(ctx context.Context, rawURL string, opts ...GetOptions) (Explanation, error) {
	call := c.newCall(KindArticle, opts)
	e := Explanation{Kind: call.kind}
	u, err := url.Parse(rawURL)
	if err != nil {
		err = unparsedRefusal(rawURL, err)
		if re, ok := err.(*RefusedError); ok {
			e.URL, e.Refusal = re.URL, re // a host that does not parse: refused, as a Get is
			return e, nil
		}
		return e, err
	}
	e.URL = u.Redacted()
	ctx = withCall(ctx, call)
	if err := c.admit(ctx, u, call.source); err != nil {
		e.Refusal, _ = err.(*RefusedError)
		return e, nil
	}
	tracking.Strip(u, c.policy.Tracking, call.source.Params)
	host, err := hostKey(ctx, u)
	if err != nil {
		e.Refusal = invalidHost(u, err).(*RefusedError)
		return e, nil
	}
	u.Host = host
	e.URL, e.Host, e.Key = u.Redacted(), host, c.ledger.Key(host)

	// robots.txt is read as the chain reads it (its own call, through the
	// ledger gate and the pacer), once: Allow and CrawlDelay find it cached.
	// A robots.txt request that was not sent is asked for once, not again
	// by Allow: nothing was recorded.
	if e.Robots, err = c.robots.Explain(ctx, u); err != nil && ctx.Err() != nil {
		return e, ctx.Err()
	}
	if err == nil {
		err = c.robots.Allow(ctx, u)
	}
	if err != nil {
		if ctx.Err() != nil {
			return e, ctx.Err()
		}
		switch f := robotsFailure(host, u, err).(type) {
		case *RefusedError:
			e.Refusal = f
		default:
			return e, f
		}
	}
	if d, ok := c.robots.CrawlDelay(ctx, u); ok {
		e.CrawlDelay = d
	}

	now := c.clock.Now()
	e.Ledger = c.ledgerState(ctx, host, e.Kind, now)
	if !e.Ledger.Allowed && e.Refusal == nil {
		re := &RefusedError{Host: e.Ledger.Host, URL: u.Redacted(), Reason: Cooldown, Until: e.Ledger.Until, Err: e.Ledger.Err()}
		if e.Ledger.Reason == backoff.Suspended {
			re.Reason = Suspended
		}
		e.Refusal = re
	}
	e.NextSlot = c.pacer.NextStart(u)
	e.BodyOpenSince = c.pacer.OpenSince(u)
	e.Allowed = e.Refusal == nil
	return e, nil
}

// ledgerState is the ledger's decision for a request of kind to host at now,
// without its side effect: a suspended host's due re-check is reported
// (Reason Recheck), not taken.
func (c *Client) ledgerState(ctx context.Context, host string, kind Kind, now time.Time) backoff.Decision {
	// A feed's Check changes nothing: suspension binds articles only, so it
	// takes no re-check. It reports cool-downs, which bind every kind.
	d := c.ledger.Check(ctx, host, KindFeed, now)
	d.Kind = kind
	if !d.Allowed || (kind != KindArticle && kind != KindImage) || c.policy.Backoff.NoCooldown {
		return d
	}
	st, ok, err := c.ledgerStore.Get(ctx, d.Host)
	switch {
	case err != nil:
		d.Allowed, d.Reason = false, backoff.Unavailable
	case ok && st.Suspended && now.Before(st.NextCheck):
		d.Allowed, d.Reason, d.Until = false, backoff.Suspended, st.NextCheck
	case ok && st.Suspended:
		d.Reason = backoff.Recheck
	}
	return d
}
