package fetch

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politefetch/politefetch/internal/hostkey"

	"github.com/politefetch/politefetch/provenance"
)

// callInfo is what one Get tells the layers below through the request context:
// the Get's particulars, set before the first hop and only read by the layers
// (admission and CheckRedirect read the source and kind, the ledger gate the
// kind, the identity layer the source, accept and referer); and three things
// the layers write, each by one writer and each documented where it is kept:
// the recorder (the pacer adds its waits, the hop recorder each hop), the
// turn of the hop in flight (the pacer's, reported to by the layers below it:
// see turn), and the memo of the last host key computed. A layer used alone,
// without a Get, finds no callInfo and uses its defaults. No layer reads
// another layer's state through it.
type callInfo struct {
	// Context is the caller's: withCall makes the call the context the
	// layers see (its Value answers for the call, and for the rest asks
	// the caller's), one allocation for both.
	context.Context

	kind          Kind
	source        *Source   // resolved admitted hosts, params and credential
	referer       string    // for images: their article page
	accept        string    // replaces the Identity's Accept when set (a Doer's caller's Accept, an image's ImageAccept)
	maxBody       int64     // lowers the body caps when positive (GetOptions.MaxBody)
	unconditional bool      // no validators sent or kept (GetOptions.Unconditional)
	deferred      bool      // validators sent, none kept: the caller saves them (GetOptions.DeferValidators)
	rec           *recorder // &recorder for a Get; nil for robots.txt fetches
	credHeader    string    // the credential header the identity layer set on the hop in flight, canonical; "" if none
	turn          *turn     // the pacer's turn of the hop in flight (see turn), set by the pacer

	url       *url.URL // the Get's first request URL, and its String()
	urlString string

	recorder recorder
	result   *resultRecord // a Get's Result, made with the call; nil for the other calls

	// The first hop's pacing turn and trace, made with the call: a later
	// hop (a redirect) makes its own.
	body0     releaseBody
	body0Used atomic.Bool
	trace0    hopTrace
	trace0Use atomic.Bool
	// The identity layer's copy of the first hop's request, and the ledger
	// gate's peek of its answer, made with the call too.
	req0     http.Request
	req0Use  atomic.Bool
	peek0    peekedBody
	peek0Use atomic.Bool

	// trace is the ClientTrace of the hop in flight, set by the hop
	// recorder: the call's context answers net/http's lookup of it (see
	// traceKey), so that a hop needs no context of its own for its trace.
	trace atomic.Pointer[httptrace.ClientTrace]
	// callerTrace is the ClientTrace of the context the first call was
	// made in (the caller's own, composed with each hop's), or nil.
	callerTrace *httptrace.ClientTrace

	keyMu   sync.Mutex
	keyHost string // the URL host of the last key computed, and its key
	key     string
}

// hostKey returns the normalised key of u's host, remembered per Get so that the
// layers of one hop compute it once.
func hostKey(ctx context.Context, u *url.URL) (string, error) {
	c := callFrom(ctx)
	if c == nil {
		return hostkey.FromURL(u)
	}
	c.keyMu.Lock()
	defer c.keyMu.Unlock()
	if c.keyHost == u.Host && c.key != "" && u.Scheme == "https" {
		return c.key, nil
	}
	k, err := hostkey.FromURL(u)
	if err != nil {
		return "", err
	}
	if u.Scheme == "https" {
		c.keyHost, c.key = u.Host, k
	}
	return k, nil
}

type callKey struct{}

// withCall returns the context of c over ctx (c itself: see callInfo's
// Context). It is called once per call.
func withCall(ctx context.Context, c *callInfo) context.Context {
	c.Context = ctx
	if outer := callFrom(ctx); outer != nil {
		c.callerTrace = outer.callerTrace // a robots.txt fetch within a Get
	} else {
		c.callerTrace = httptrace.ContextClientTrace(ctx)
	}
	return c
}

// Value returns the call for callKey, the hop's ClientTrace for net/http's
// key of it (when the hop recorder set one), else the caller context's value.
func (c *callInfo) Value(key any) any {
	if _, ok := key.(callKey); ok {
		return c
	}
	if key == traceKey {
		// Never an outer call's hop's (a robots.txt fetch's context is
		// within its Get's): this call's hop's, else the caller's own.
		if t := c.trace.Load(); t != nil {
			return t
		}
		if c.callerTrace != nil {
			return c.callerTrace
		}
		return nil
	}
	return c.Context.Value(key)
}

// traceKey is the key under which httptrace keeps a context's ClientTrace
// (unexported), learned once by asking httptrace for the trace of a context
// that records the key it is asked for.
var traceKey = func() any {
	var p keyProbe
	httptrace.ContextClientTrace(&p)
	return p.key
}()

// keyProbe is a context that records the key of its one Value call.
type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(key any) any {
	p.key = key
	return nil
}

// firstBody returns the first hop's releaseBody, once; nil afterwards.
func (c *callInfo) firstBody() *releaseBody {
	if c.body0Used.CompareAndSwap(false, true) {
		return &c.body0
	}
	return nil
}

// firstRequest returns the room for the identity layer's copy of the first
// hop's request, once; nil afterwards.
func (c *callInfo) firstRequest() *http.Request {
	if c.req0Use.CompareAndSwap(false, true) {
		return &c.req0
	}
	return nil
}

// firstPeek returns the room for the ledger gate's peek of the first hop's
// answer, once; nil afterwards.
func (c *callInfo) firstPeek() *peekedBody {
	if c.peek0Use.CompareAndSwap(false, true) {
		return &c.peek0
	}
	return nil
}

// firstTrace returns the first hop's hopTrace, once; nil afterwards.
func (c *callInfo) firstTrace() *hopTrace {
	if c.trace0Use.CompareAndSwap(false, true) {
		return &c.trace0
	}
	return nil
}

// resultRecord is a Get's Result with its proof and the room for its first
// hop, one allocation; it is made with the call, and holds nothing of it.
type resultRecord struct {
	res   Result
	proof provenance.Proof
	hop0  [1]provenance.Hop
}

func callFrom(ctx context.Context) *callInfo {
	c, _ := ctx.Value(callKey{}).(*callInfo)
	return c
}

func recorderFrom(ctx context.Context) *recorder {
	if c := callFrom(ctx); c != nil {
		return c.rec
	}
	return nil
}

// recorder collects, for one Get, the hops and the time spent at each stage.
type recorder struct {
	mu   sync.Mutex
	hops []provenance.Hop
	room []provenance.Hop // where the first hops go (a resultRecord's), if set
	t    Timings
	// The last hop's request as the base transport was given it, and the
	// canonical name of the credential header it carried ("" if none):
	// what Result.Sent is made of (see sentHeader). The request is not
	// modified once sent (the http.RoundTripper contract), so it is kept
	// without a copy.
	sentReq  *http.Request
	sentCred string
}

func (r *recorder) addWait(d time.Duration) {
	r.mu.Lock()
	r.t.Wait += d
	r.mu.Unlock()
}

func (r *recorder) addHop(h provenance.Hop, t Timings, sent *http.Request, cred string) {
	r.mu.Lock()
	r.sentReq, r.sentCred = sent, cred
	if r.hops == nil {
		r.hops = r.room
	}
	r.hops = append(r.hops, h)
	r.t.DNS += t.DNS
	r.t.Connect += t.Connect
	r.t.TLS += t.TLS
	r.t.FirstByte += t.FirstByte
	r.mu.Unlock()
}

// take returns the hops and timings recorded and the last hop's request
// header as written (see sentHeader), and forgets the hops: the Get is over,
// so they are handed to its Result without a copy.
func (r *recorder) take() ([]provenance.Hop, Timings, http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	hops := r.hops
	r.hops = nil
	return hops, r.t, sentHeader(r.sentReq, r.sentCred)
}

// Timings says where the time of one Get went. Each stage is summed over the
// hops of the Get; DNS, Connect and TLS are zero for a reused connection.
type Timings struct {
	Wait      time.Duration // waiting for the pacer (the host's interval, another request in flight)
	DNS       time.Duration // resolving host names
	Connect   time.Duration // TCP connects
	TLS       time.Duration // TLS handshakes
	FirstByte time.Duration // from the request written to the first response byte
	Total     time.Duration // the whole Get, body included
}
