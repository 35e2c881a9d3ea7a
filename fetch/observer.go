package fetch

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// EventKind says what an [Event] reports.
type EventKind uint8

// The kinds of [Event], in the order one request meets them. Each request
// the chain lets through gets one EventSlot; one that had to wait for it
// gets an EventWaiting first. A request that reached its host ends with one
// of EventAnswered, EventNotModified and EventRobots (a robots.txt fetch),
// or EventFailed; a request we refused ends with EventRefused.
const (
	// EventWaiting: the request must wait for its host's slot (another
	// request in flight, the interval or the Crawl-delay not over, others
	// queued before it). Host names the host it waits for.
	EventWaiting EventKind = iota + 1
	// EventSlot: the request's wait for its host's slot is over. Wait is
	// how long it lasted (zero when the slot was free); Err is nil when the
	// slot was granted, else why not (the context's error, the shared
	// Schedule's).
	EventSlot
	// EventSent: the request's bytes were written to the connection, once
	// per request.
	EventSent
	// EventAnswered: the answer's body is done (read to its end, failed,
	// or closed). Status is the answer's; Bytes the body bytes read from
	// the wire; Err why the body ended before its end, if it did.
	EventAnswered
	// EventNotModified: a 304 answered a conditional request, in place of
	// EventAnswered. Saved is the wire length of the body the validators
	// were kept from, which was not read again (0: not known).
	EventNotModified
	// EventRobots: a robots.txt fetch is over, in place of EventAnswered:
	// Status is the answer's (0 when there was none) and Bytes its body's
	// bytes; Err is the fetch's failure, or why the body ended early.
	EventRobots
	// EventRefused: we refused the request and nothing was sent: Reason
	// says why, Err is the *RefusedError.
	EventRefused
	// EventFailed: the request, let through by the chain, failed without
	// an answer (DNS, connection, TLS, time-out, no answer): Err says why.
	EventFailed
)

var eventNames = [...]string{
	EventWaiting:     "waiting",
	EventSlot:        "slot",
	EventSent:        "sent",
	EventAnswered:    "answered",
	EventNotModified: "not modified",
	EventRobots:      "robots.txt",
	EventRefused:     "refused",
	EventFailed:      "failed",
}

// String returns the kind in words, for example "not modified".
func (k EventKind) String() string {
	if k > 0 && int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "event(" + strconv.Itoa(int(k)) + ")"
}

// Event is one moment of one request's life, handed to the observer set
// with [WithObserver]. The fields a kind does not name are zero.
type Event struct {
	Kind    EventKind
	Request Kind      // the kind of what was asked for: KindRobots for a robots.txt fetch
	Host    string    // the host's key (see the package doc)
	URL     string    // the request's URL, its password redacted
	At      time.Time // when it happened, on the Client's clock
	Wait    time.Duration
	Status  int
	Bytes   int64
	Saved   int64
	Reason  Reason
	Err     error
}

// WithObserver sets f to observe each request's life: the events of
// [EventKind], for every request of the Client (Get, the Doers,
// HTTPClient and Transport, and the robots.txt fetches they need), each
// redirect hop its own request.
//
// f is called synchronously on the goroutine where the event happens: the
// caller's for most, net/http's writer for EventSent, and the background
// wait of a request its caller gave up on (see the package doc) for that
// request's last event. So f is called from many goroutines at once, must
// be safe for concurrent use, and must return quickly without blocking:
// count, add to a histogram, or hand the event to a channel of your own
// without waiting on it. f must not call the Client. The events of one
// request come in the order of [EventKind]; those of different requests
// interleave. Without an observer nothing of this is made.
func WithObserver(f func(Event)) Option { return func(o *options) { o.observe = f } }

// observer is what the chain keeps of WithObserver: nil when unset.
type observer func(Event)

// requestEvent is the start of an Event about req, a request of the chain.
func requestEvent(ctx context.Context, kind EventKind, req *http.Request) Event {
	e := Event{Kind: kind, Request: kindOf(req), URL: req.URL.Redacted()}
	e.Host, _ = hostKey(ctx, req.URL)
	return e
}

// refusedEvent returns the EventRefused of err, and whether err is a
// refusal of ours.
func refusedEvent(kind Kind, err error) (Event, bool) {
	var re *RefusedError
	if !errors.As(err, &re) {
		return Event{}, false
	}
	return Event{Kind: EventRefused, Request: kind, Host: re.Host, URL: re.URL, Reason: re.Reason, Err: err}, true
}
