package politetest

import (
	"context"
	"errors"
	"net"
	"time"
)

// Request starts are timed by when the request's bytes reached the server,
// not by when the server got round to them: under load the web's goroutines
// run late (tens of milliseconds), and a start stamped at handling time would
// make a client that wrote two requests a full interval apart look rude. On
// Linux the web's listeners are wrapped (see stampListen in stamp_linux.go)
// so that every accepted connection's reads carry the kernel's receive
// timestamp; elsewhere connections are left alone and a request starts when
// the web begins handling it.

// receiveStamper is an accepted connection that knows when the data it read
// reached the kernel.
type receiveStamper interface {
	// markRequest is called as each request on the connection begins
	// handling. It returns the kernel receive time of the first data read
	// since the previous call or, when nothing was read since (the
	// request had been read along with the previous one), of the latest
	// data read before it; then it starts a new mark. ok is false when
	// the connection has no stamp to give.
	markRequest() (at time.Time, ok bool)
	// goodbyeAt returns the kernel receive time of the client's last
	// bytes when they came after its last request began (a TLS
	// close_notify): the moment the client closed the connection, which
	// the web's own close handling may notice much later. ok is false
	// otherwise (the web closed it, or the client closed without a word).
	goodbyeAt() (at time.Time, ok bool)
}

// hangUpNotifier is a connection that says when a read first meets the
// client's FIN or RST: a client that closed without a word (no TLS
// close_notify, or bytes left unread) had closed by then. net/http reads in
// the background while a handler runs, so the web learns of it at once,
// however long the handler goes on writing.
//
// peerClosed reports whether the client's FIN or RST has reached the
// kernel, whether or not a read has met it yet.
type hangUpNotifier interface {
	onHangUp(func(at time.Time))
	peerClosed() bool
}

// stampKey is the context key of a connection's receiveStamper.
type stampKey struct{}

// withStamper returns ctx carrying c's receiveStamper, if c (or the raw
// connection under a TLS one) has one.
func withStamper(ctx context.Context, c net.Conn) context.Context {
	if s, ok := rawConn(c).(receiveStamper); ok {
		return context.WithValue(ctx, stampKey{}, s)
	}
	return ctx
}

// receivedAt returns when the request's bytes reached the kernel, as the
// request's connection stamped them (see receiveStamper), and starts the
// connection's next mark. ok is false without a stamp.
func receivedAt(ctx context.Context) (at time.Time, ok bool) {
	s, _ := ctx.Value(stampKey{}).(receiveStamper)
	if s == nil {
		return time.Time{}, false
	}
	return s.markRequest()
}

// ExactStarts reports whether request starts on this machine are the
// kernel's receive times (Linux, when the kernel delivers receive
// timestamps on loopback TCP; probed once), so that an audit needs only a
// millisecond or two of Policy.Slack; otherwise starts are when the web
// began handling a request and Slack must absorb scheduling lag.
func ExactStarts() bool { return exactStarts() }

// ExactSlack is the Policy.Slack an audit needs when ExactStarts: the
// client's clock and the kernel's agree to well within it.
const ExactSlack = 2 * time.Millisecond

// Slack returns the Policy.Slack an audit needs on this machine: ExactSlack
// when ExactStarts, else fallback, which must absorb the web's scheduling
// lag (tens of milliseconds on a loaded machine; half a short test interval
// is a safe choice).
func Slack(fallback time.Duration) time.Duration {
	if ExactStarts() {
		return ExactSlack
	}
	return fallback
}

// stampedPair connects a client to a loopback listener wrapped as the web's
// are (stampListen) and returns both ends; the server end is what the web's
// Accept would give it. The listener is closed before stampedPair returns.
func stampedPair() (cli, srv net.Conn, err error) {
	ln, err := listenLoopback()
	if err != nil {
		return nil, nil, err
	}
	sl := stampListen(ln)
	defer sl.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := sl.Accept()
		if err != nil {
			c = nil
		}
		accepted <- c
	}()
	cli, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, nil, err // closing the listener ends the Accept
	}
	if srv = <-accepted; srv == nil {
		cli.Close()
		return nil, nil, errors.New("politetest: accept failed")
	}
	return cli, srv, nil
}
