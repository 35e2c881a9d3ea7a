package main

// What a crawl run did for each source, and the exit status it earns
// (docs/exit-codes.md): 0 when every due source was read or legitimately had
// nothing to do, 1 when some could not be read (each named with its cause and
// its next try), 2 when the crawl could not run at all. A Ctrl-C is none of
// these failures: what was settled stays, and the run ends 0 unless a source
// had already failed.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/robots"
)

// sourceRun is what this run learnt of one source.
type sourceRun struct {
	id, host string
	passes   int
	read     bool  // a trigger read reached the publisher and was answered usably
	err      error // why its trigger or backlog could not be read (the last such)
	passErr  error // why its last pass could not run or ended early (a lease, the store)
	next     time.Time
}

// outcomes collects the passes' reports, as crawl's events deliver them.
type outcomes struct {
	mu      sync.Mutex
	sources map[string]*sourceRun
	order   []string
	seen    map[*crawl.PassReport]bool
}

func newOutcomes(sources []crawl.Source) *outcomes {
	o := &outcomes{sources: map[string]*sourceRun{}}
	for _, s := range sources {
		if !s.Active {
			continue
		}
		r := &sourceRun{id: s.ID}
		if urls := triggerURLs(&s); len(urls) > 0 {
			if u, err := url.Parse(urls[0]); err == nil {
				r.host = strings.ToLower(u.Hostname())
			}
		}
		o.sources[s.ID] = r
		o.order = append(o.order, s.ID)
	}
	return o
}

func triggerURLs(s *crawl.Source) []string {
	if s.Trigger.API != nil {
		return []string{s.Trigger.API.URL}
	}
	return s.Trigger.Feeds
}

// event is given every crawl event; it keeps the passes' ends.
func (o *outcomes) event(e crawl.Event) {
	if e.Kind != crawl.EventPassEnded || e.Pass == nil {
		return
	}
	o.pass(e.Pass)
}

// pass records a pass's report, once: RunOnce also returns those its
// events delivered, and those of passes that never started (a lease held).
func (o *outcomes) pass(p *crawl.PassReport) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.sources[p.Source]
	if r == nil || o.seen[p] {
		return
	}
	if o.seen == nil {
		o.seen = map[*crawl.PassReport]bool{}
	}
	o.seen[p] = true
	r.passes++
	r.passErr = nil
	if p.Err != nil && !errors.Is(p.Err, context.Canceled) {
		r.passErr = p.Err
	}
	switch {
	case p.TriggerRead && p.Trigger.Err != nil && !errors.Is(p.Trigger.Err, context.Canceled):
		r.err = p.Trigger.Err
	case p.BacklogRead && p.Backlog.Err != nil && !errors.Is(p.Backlog.Err, context.Canceled):
		r.err = p.Backlog.Err
	case p.TriggerRead && p.Trigger.Err == nil:
		r.read, r.err = true, nil
	}
}

// settle looks, for every source that was not read in this run, at why: its
// schedule holding it back after a refusal or failure (the robots.txt record
// of its host saying robots.txt is unreachable), or simply not yet due.
// It sends nothing.
func (o *outcomes) settle(ctx context.Context, state crawl.State, rs robots.Store, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range o.order {
		r := o.sources[id]
		if r.read && r.err == nil || r.passErr != nil {
			continue
		}
		sc, err := state.Schedule(ctx, id)
		if err != nil {
			if r.err == nil {
				r.err = fmt.Errorf("its schedule could not be read: %w", err)
			}
			continue
		}
		held := sc.Slowed.After(now)
		if held {
			r.next = sc.Slowed
		}
		if sc.NextTrigger.After(now) && (r.next.IsZero() || sc.NextTrigger.Before(r.next)) && r.err == nil && !held {
			r.next = sc.NextTrigger
		}
		if r.host == "" || rs == nil {
			continue
		}
		// The simulated web's hosts and most configured ones are already
		// keys (lower case, default port); a host that is not finds no
		// record, and the generic cause below stands.
		rec, ok, err := rs.Get(ctx, r.host)
		if err == nil && ok && rec.Outcome == robots.DisallowAll && rec.Failure != "" && rec.Expires.After(now) {
			r.err = &unreachableError{host: r.host, cause: rec.Failure}
			r.next = rec.Expires
			continue
		}
		if held && r.err == nil {
			r.err = errors.New("held back: the site refused us or asked us to slow down at the last read")
		}
	}
}

// unreachableError is robots.txt's fetch failing: the site is disallowed
// until it is read again (RFC 9309), and it was not our choice.
type unreachableError struct{ host, cause string }

func (e *unreachableError) Error() string {
	return "robots.txt unreachable: " + networkCause(errors.New(e.cause))
}

// failed returns the sources that could not be read, in the config's order.
func (o *outcomes) failed() []*sourceRun {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*sourceRun
	for _, id := range o.order {
		if r := o.sources[id]; r.err != nil {
			out = append(out, r)
		}
	}
	return out
}

// notDue returns the sources with nothing to do in this run.
func (o *outcomes) notDue() []*sourceRun {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*sourceRun
	for _, id := range o.order {
		if r := o.sources[id]; r.err == nil && r.passErr == nil && !r.read {
			out = append(out, r)
		}
	}
	return out
}

// print writes one line per host whose sources could not be read, with
// the cause in words and the next try, then a line for the sources not due.
func (o *outcomes) print(w io.Writer, now time.Time) {
	byHost := map[string][]*sourceRun{}
	var hosts []string
	for _, r := range o.failed() {
		if _, ok := byHost[r.host]; !ok {
			hosts = append(hosts, r.host)
		}
		byHost[r.host] = append(byHost[r.host], r)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		rs := byHost[h]
		var ids []string
		for _, r := range rs {
			ids = append(ids, r.id)
		}
		line := fmt.Sprintf("  %s (%s): %s", h, strings.Join(ids, ", "), causeText(rs[0].err))
		if next := rs[0].next; !next.IsZero() {
			line += "; next try " + clockTime(next, now)
		}
		fmt.Fprintln(w, line)
	}
	if nd := o.notDue(); len(nd) > 0 {
		var parts []string
		for _, r := range nd {
			p := r.id
			if !r.next.IsZero() {
				p += " at " + clockTime(r.next, now)
			}
			parts = append(parts, p)
		}
		fmt.Fprintf(w, "  not due yet: %s\n", strings.Join(parts, ", "))
	}
}

// clockTime is t as the operator reads it: the time of day when today,
// the date and time otherwise.
func clockTime(t, now time.Time) string {
	t = t.Local()
	if y, m, d := t.Date(); func() bool { y2, m2, d2 := now.Local().Date(); return y == y2 && m == m2 && d == d2 }() {
		return t.Format("15:04")
	}
	return t.Format("2006-01-02 15:04")
}

// causeText says why a source could not be read, in words.
func causeText(err error) string {
	var ue *unreachableError
	if errors.As(err, &ue) {
		return ue.Error()
	}
	var re *fetch.RefusedError
	if errors.As(err, &re) {
		var fe *robots.FetchError
		if re.Reason == fetch.Robots && errors.As(err, &fe) {
			return "robots.txt unreachable: " + networkCause(err)
		}
		switch re.Reason {
		case fetch.Robots:
			return "disallowed by robots.txt"
		case fetch.Cooldown:
			return "the site asked us to wait (cooling down)"
		case fetch.Suspended:
			return "suspended: the site keeps refusing us"
		}
		return "refused before sending: " + re.Reason.String()
	}
	var se *feed.StatusError
	if errors.As(err, &se) {
		switch se.StatusCode {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			return fmt.Sprintf("the site asked us to wait (HTTP %d)", se.StatusCode)
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Sprintf("the site refused us (HTTP %d)", se.StatusCode)
		}
		return fmt.Sprintf("the feed answered HTTP %d", se.StatusCode)
	}
	if isNetwork(err) {
		return "unreachable: " + networkCause(err)
	}
	return err.Error()
}

func isNetwork(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	return errors.As(err, &dns) || errors.As(err, &op)
}

// networkCause names a network failure the way an operator reads it.
func networkCause(err error) string {
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	msg := err.Error()
	switch {
	case errors.As(err, &dns) && dns.IsNotFound, strings.Contains(msg, "no such host"):
		return "no such host"
	case errors.As(err, &dns) && dns.IsTimeout:
		return "DNS lookup timed out"
	case errors.Is(err, syscall.ECONNREFUSED), strings.Contains(msg, "connection refused"):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), strings.Contains(msg, "connection reset"):
		return "connection reset"
	case errors.As(err, &cert), errors.As(err, &unknownAuth), errors.As(err, &hostErr), strings.Contains(msg, "x509:"), strings.Contains(msg, "tls:"):
		return "TLS handshake failed"
	case errors.Is(err, context.DeadlineExceeded), strings.Contains(msg, "timeout"), strings.Contains(msg, "deadline"):
		return "timed out"
	}
	return msg
}

// passCause says in words why a source's pass could not run or ended
// early: for a lease, which worker holds it and when it expires.
func passCause(err error, now time.Time) string {
	var le *crawl.LeaseError
	if !errors.As(err, &le) || le.Held.Owner == "" {
		return err.Error()
	}
	until := le.Held.Expires.UTC().Format("15:04:05 UTC")
	if left := le.Held.Expires.Sub(now).Round(time.Second); left > 0 {
		until += fmt.Sprintf(", %v from now", left)
	}
	who := workerName(le.Held.Owner)
	if errors.Is(err, crawl.ErrLeaseLost) {
		return fmt.Sprintf("the pass stopped: its lease was taken over by another worker (%s), which holds it until %s", who, until)
	}
	return fmt.Sprintf("another worker is running its pass (%s) and holds its lease until %s; a running worker renews it, so the source is read again once that crawl ends", who, until)
}

// workerName is a lease owner in words: "pid 4242 on host news-01" for
// the owners crawl writes ("news-01 pid=4242 start=… boot=…"), else
// `worker "NAME"` for the Owner a program chose.
func workerName(owner string) string {
	f := strings.Fields(owner)
	if len(f) >= 2 {
		if pid, ok := strings.CutPrefix(f[1], "pid="); ok && pid != "" {
			return "pid " + pid + " on host " + f[0]
		}
	}
	return fmt.Sprintf("worker %q", owner)
}
