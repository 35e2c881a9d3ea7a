package crawl

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/robots"
)

// reachDoer is the Doer a trigger is read through: the source's Doer, with
// a note of whether any of its requests reached the publisher (a dial
// begun, a connection handed over, a request written), so that a read that
// failed can be told apart from one that was never sent.
type reachDoer struct {
	next    fetch.Doer
	reached atomic.Bool
}

func (d *reachDoer) Do(req *http.Request) (*http.Response, error) {
	mark := func() { d.reached.Store(true) }
	tr := &httptrace.ClientTrace{
		ConnectStart: func(string, string) { mark() },
		GotConn:      func(httptrace.GotConnInfo) { mark() },
		WroteHeaders: mark,
	}
	return d.next.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), tr)))
}

// take reports whether a request reached the publisher since the last take.
func (d *reachDoer) take() bool { return d.reached.Swap(false) }

// reachedBy is take for a read that failed with err. The trace sees every
// request made on the read's context, a robots.txt fetch the chain makes
// for it first included: an error saying the read's own request was not
// sent (its turn at the host not had in time, its robots.txt not asked)
// overrules what the trace saw.
func (d *reachDoer) reachedBy(err error) bool {
	reached := d.take()
	return reached && !errors.Is(err, fetch.ErrPacingDeadline) && !errors.Is(err, robots.ErrNotSent)
}

// ours reports whether a trigger read that failed with err, and reached
// nothing of the publisher's, failed for a reason of ours that may pass: a
// store of the chain's that did not answer (the refusal ledger's, the
// shared schedule's), a turn at the host not had in time, robots.txt not
// asked for. A refusal the chain decided (robots.txt, a cool-down the
// publisher asked for, an address or host not admitted) is not ours in
// this sense: it would be the same at once, and it counts as a read.
func ours(err error) bool {
	if err == nil {
		return false
	}
	var re *fetch.RefusedError
	if errors.As(err, &re) {
		return errors.Is(err, backoff.ErrUnavailable)
	}
	var se *feed.StatusError
	var dns *net.DNSError
	return !errors.As(err, &se) && !errors.As(err, &dns)
}

// fetchSource is what the chain is told of the source for its lists (the
// trigger and the backlog): its admitted hosts and declared parameters,
// never its credential, which goes with article reads only.
func (s *Source) fetchSource() fetch.Source {
	return fetch.Source{Admitted: s.Admitted, Params: s.Params}
}

// fetchOption is fetchSource as an option of the chain's Doers.
func (s *Source) fetchOption() fetch.GetOptions {
	fs := s.fetchSource()
	return fetch.GetOptions{Source: &fs}
}
