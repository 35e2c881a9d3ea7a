package politetest

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"time"
)

// Request is one request as the web received it, and what the site answered.
// The auditor judges these records; tests may inspect them directly.
type Request struct {
	// Seq numbers requests in arrival order, from 1 (restarting after
	// [Web.Reset]).
	Seq int
	// Conn is the ID of the connection that carried the request (see
	// [Web.Connections]).
	Conn int
	// Arrived is when the request's headers had been read and the web began
	// handling it (wall time, before any simulated latency). On a loaded
	// machine that can be tens of milliseconds after the bytes came (see
	// Start).
	Arrived time.Time
	// Start is when the auditor counts the request as started: when its
	// bytes reached the web, however late the web got round to them.
	//
	// On Linux that is the kernel's receive timestamp (SO_TIMESTAMPNS) of
	// the first data the connection read after the previous request on it
	// began: for a client that does not pipeline, this request's bytes
	// (a read of several segments carries the latest one's time). A
	// request already read along with the previous one (pipelining) gets
	// the time of the latest data read before that one began. A start is
	// never later than Arrived. Elsewhere, or when the kernel gave no
	// stamp, Start is Arrived.
	//
	// The first request on a connection starts when the connection
	// opened: when the web accepted it or, on Linux, when its first bytes
	// (the TLS ClientHello) reached the kernel if that was earlier. So the
	// TCP and TLS handshakes, which delay only the first request on a
	// connection, do not count against a client that paces its sends. (A
	// connection dialled ahead and left idle therefore counts from its
	// opening: stricter.)
	//
	// Kernel times carry no monotonic clock reading; compare them with
	// the other times by wall clock (as [time.Time.Sub] and Before do when
	// one side lacks it).
	Start time.Time
	// Finished is when the site's handler returned: the response has been
	// written, aborted or cut. It is zero while the request is in flight.
	Finished time.Time
	// Host is the Host header, lower-cased, without port.
	Host string
	// SNI is the TLS server name the client sent ("" over plain HTTP or
	// when the client sent none).
	SNI string
	// TLS reports whether the request came over HTTPS.
	TLS bool
	// Method is the request method.
	Method string
	// Target is the request target exactly as sent: path and query.
	Target string
	// Path is the decoded path; Query the raw query (without "?").
	Path, Query string
	// Proto is the protocol version, such as "HTTP/1.1".
	Proto string
	// Header is every request header as received, in Go's canonical key
	// form. The Host header is not in it (see Host); Go's server removes it.
	Header http.Header
	// Status is the status code the site answered (0 if it wrote none: a
	// reset connection or a request that timed out).
	Status int
	// ResponseHeader is the header the site answered with (nil if none).
	ResponseHeader http.Header
	// BytesSent counts the body bytes the site wrote.
	BytesSent int64

	robotsBody string // what a /robots.txt answer said (up to robotsCap bytes)
}

func (r *Request) clone() Request {
	c := *r
	c.Header = r.Header.Clone()
	c.ResponseHeader = r.ResponseHeader.Clone()
	return c
}

// Conn is one connection the web accepted.
type Conn struct {
	// ID numbers connections in accept order, from 1.
	ID int
	// Host is the SNI the client sent, or else the Host of the first
	// request on the connection ("" if neither is known yet).
	Host string
	// SNI is the TLS server name the client sent.
	SNI string
	// TLS reports whether this is an HTTPS connection.
	TLS bool
	// Opened is when the web accepted the connection; Closed when it closed
	// (zero while open). On Linux a connection the client closed after
	// saying goodbye (TLS close_notify) counts as closed when the goodbye
	// reached the kernel, not when the web's goroutine got round to it, and
	// one it closed without a word (a FIN, or an RST for bytes it left
	// unread) when the web's read met that, even while a handler is still
	// writing to it. One the web ended ("Connection: close") counts as
	// closed when that answer finished, however late net/http's goroutine
	// closes it.
	Opened, Closed time.Time
	// Requests counts the requests the connection carried.
	Requests int

	raw net.Conn // the TCP connection (under TLS), while the web holds it
}

// robotsCap bounds how much of a robots.txt answer is kept for the auditor
// (RFC 9309 asks parsers to read at least 500 KiB).
const robotsCap = 512 << 10

// captureWriter notes the status, header and size of a response (and the
// body of a robots.txt answer) as the site writes it. It passes Flush and
// Hijack through, and unwraps for http.ResponseController.
type captureWriter struct {
	http.ResponseWriter
	robots bool

	wrote  bool
	status int
	header http.Header
	n      int64
	body   []byte
}

// closes reports whether the answer told the client that the web closes
// the connection after it ("Connection: close").
func (c *captureWriter) closes() bool {
	h := c.header
	if h == nil {
		h = c.ResponseWriter.Header()
	}
	for _, v := range h.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "close") {
				return true
			}
		}
	}
	return false
}

func (c *captureWriter) WriteHeader(code int) {
	if !c.wrote && code >= 200 {
		c.wrote = true
		c.status = code
		c.header = c.ResponseWriter.Header().Clone()
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(p []byte) (int, error) {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	if c.robots && len(c.body) < robotsCap {
		keep := p[:n]
		if room := robotsCap - len(c.body); len(keep) > room {
			keep = keep[:room]
		}
		c.body = append(c.body, keep...)
	}
	return n, err
}

func (c *captureWriter) Flush() {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *captureWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := c.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errHijackUnsupported
	}
	return h.Hijack()
}

func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
