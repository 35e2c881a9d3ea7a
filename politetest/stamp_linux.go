package politetest

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

var exact struct {
	once sync.Once
	ok   bool
	pin  net.Conn // the probe's server end, kept open while the process runs
}

// exactStarts probes, once, whether the kernel stamps what a loopback
// connection reads: some sandboxes and old kernels accept SO_TIMESTAMPNS
// and never deliver a stamp. The probe also switches the kernel's
// timestamping on ahead of the first web, which it does only a moment
// after a socket first asks. The kernel switches it off again, as lazily,
// once no socket asks any more: so a probe that succeeds keeps its server
// end open for the life of the process, or a web opened just after it
// would read its first requests unstamped while the switch turned back on.
func exactStarts() bool {
	exact.once.Do(func() { exact.ok = probeStamps() })
	return exact.ok
}

func probeStamps() bool {
	cli, srv, err := stampedPair()
	if err != nil {
		return false
	}
	defer cli.Close()
	pinned := false
	defer func() {
		if pinned {
			exact.pin = srv
		} else {
			srv.Close()
		}
	}()
	s, ok := srv.(receiveStamper)
	if !ok {
		return false
	}
	buf := make([]byte, 8)
	for range 100 {
		if _, err := cli.Write([]byte("probe")); err != nil {
			return false
		}
		srv.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := srv.Read(buf); err != nil {
			return false
		}
		if _, ok := s.markRequest(); ok {
			pinned = true
			return true
		}
		time.Sleep(time.Millisecond) // the kernel's switch is deferred work
	}
	return false
}

// stampListen turns on SO_TIMESTAMPNS for a TCP listener and returns it
// wrapped so that every connection it accepts is a stampedConn. Setting the
// option on the listener, long before the first connection, matters: the
// kernel starts timestamping packets only a moment after the first socket
// on the system asks (a deferred switch), and accepted sockets inherit the
// option, so the bytes of a connection's first request (which may arrive
// before the accept) are stamped too. If the listener refuses the option,
// each accepted connection still tries on its own.
func stampListen(ln net.Listener) net.Listener {
	if tl, ok := ln.(*net.TCPListener); ok {
		if rc, err := tl.SyscallConn(); err == nil {
			setTimestamps(rc)
		}
	}
	return stampListener{ln}
}

// stampListener wraps every connection it accepts with stampConn.
type stampListener struct{ net.Listener }

func (l stampListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	return stampConn(c), nil
}

// setTimestamps asks the kernel to timestamp what the socket receives.
func setTimestamps(rc syscall.RawConn) error {
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return err
	}
	if serr != nil {
		return os.NewSyscallError("setsockopt", serr)
	}
	return nil
}

// stampConn makes sure SO_TIMESTAMPNS is on for an accepted TCP connection
// and wraps it in a stampedConn. Any other connection, or one whose socket
// refuses the option, is returned as it is (its requests then start when
// handled).
func stampConn(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil || setTimestamps(rc) != nil {
		return c
	}
	s := &stampedConn{TCPConn: tc, rc: rc, oob: make([]byte, 2*syscall.CmsgSpace(sizeofTimespec))}
	s.recvFn = s.recv
	return s
}

// stampedConn is an accepted TCP connection that reads with recvmsg and keeps
// the kernel's receive timestamp (SO_TIMESTAMPNS, wall clock) of the data it
// returns, for [Web.begin] to time requests by. A read that returns several
// segments carries the stamp of the latest.
//
// Everything but Read is the embedded *net.TCPConn's (Write, Close,
// deadlines, addresses, CloseWrite, SetLinger...), and Read behaves as
// net.Conn's: io.EOF at the end of the stream, other errors as
// *net.OpError{Op: "read"}, deadline errors satisfying Timeout (net/http
// relies on that to end idle connections and its background read).
type stampedConn struct {
	*net.TCPConn
	rc syscall.RawConn

	// readMu serialises Reads: recv, bound once to recvFn so that a Read
	// allocates nothing, passes its arguments and results in the fields
	// below.
	readMu  sync.Mutex
	recvFn  func(fd uintptr) bool
	p       []byte
	oob     []byte // room for the SCM_TIMESTAMPNS control message
	n, oobn int
	err     error

	stampMu sync.Mutex
	first   int64 // Unix ns of the first data read since the mark; 0: none
	last    int64 // Unix ns of the latest data read; 0: none yet
	marks   int   // requests marked so far
	hangup  int64 // Unix ns when a read first met the client's FIN or RST; 0: not yet
	onHang  func(time.Time)
}

const sizeofTimespec = int(unsafe.Sizeof(syscall.Timespec{}))

// maxRead caps one read, as the net package does for streams.
const maxRead = 1 << 30

func (c *stampedConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return c.TCPConn.Read(p) // returns at once, as net.Conn promises
	}
	if len(p) > maxRead {
		p = p[:maxRead]
	}
	c.readMu.Lock()
	c.p = p
	err := c.rc.Read(c.recvFn)
	n, oobn, rerr := c.n, c.oobn, c.err
	c.p, c.err = nil, nil
	c.readMu.Unlock()
	if err != nil {
		// The poller's error (a deadline, a closed connection) comes
		// wrapped as net.Conn's would be, with Op "raw-read": name
		// it as Read does.
		if oe, ok := err.(*net.OpError); ok {
			oe.Op = "read"
		}
		return 0, err
	}
	if rerr != nil {
		if rerr == syscall.ECONNRESET {
			c.hungUp()
		}
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("recvmsg", rerr)}
	}
	if n <= 0 {
		c.hungUp()
		return 0, io.EOF
	}
	if ns, ok := receiveTime(c.oob[:oobn]); ok {
		c.stampMu.Lock()
		if c.first == 0 {
			c.first = ns
		}
		c.last = ns
		c.stampMu.Unlock()
	}
	return n, nil
}

// recv is the raw read: one recvmsg into c.p and c.oob. It reports false
// (wait for the socket to become readable) only on EAGAIN.
func (c *stampedConn) recv(fd uintptr) bool {
	for {
		c.n, c.oobn, _, _, c.err = syscall.Recvmsg(int(fd), c.p, c.oob, 0)
		if c.err != syscall.EINTR {
			return c.err != syscall.EAGAIN
		}
	}
}

// WriteTo copies through Read, so that what it reads is stamped too (the
// embedded TCPConn's WriteTo would read the socket past Read).
func (c *stampedConn) WriteTo(w io.Writer) (int64, error) {
	return io.Copy(w, struct{ io.Reader }{c})
}

// markRequest implements receiveStamper.
func (c *stampedConn) markRequest() (time.Time, bool) {
	c.stampMu.Lock()
	ns := c.first
	if ns == 0 {
		ns = c.last
	}
	c.first = 0
	c.marks++
	c.stampMu.Unlock()
	if ns == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// goodbyeAt implements receiveStamper: data that arrived after the last
// request began, on a connection that carried requests, is the client's
// goodbye (TLS close_notify precedes its FIN; a client that does not
// pipeline sends nothing else), and its kernel stamp is when the client
// closed.
func (c *stampedConn) goodbyeAt() (time.Time, bool) {
	c.stampMu.Lock()
	defer c.stampMu.Unlock()
	if c.marks == 0 || c.first == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, c.last), true
}

// peerClosed implements hangUpNotifier: the kernel's state of the socket
// says the client's FIN arrived (CLOSE_WAIT, LAST_ACK) or its RST did
// (CLOSE), whether or not a read has met it yet.
func (c *stampedConn) peerClosed() bool {
	var state uint8
	var gerr error
	if err := c.rc.Control(func(fd uintptr) {
		var info syscall.TCPInfo
		size := uint32(unsafe.Sizeof(info))
		_, _, errno := syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
			uintptr(unsafe.Pointer(&info)), uintptr(unsafe.Pointer(&size)), 0)
		if errno != 0 {
			gerr = errno
			return
		}
		state = info.State
	}); err != nil || gerr != nil {
		return false
	}
	const tcpClose, tcpCloseWait, tcpLastAck = 7, 8, 9 // include/net/tcp_states.h
	return state == tcpClose || state == tcpCloseWait || state == tcpLastAck
}

// onHangUp implements hangUpNotifier.
func (c *stampedConn) onHangUp(f func(time.Time)) {
	c.stampMu.Lock()
	c.onHang = f
	c.stampMu.Unlock()
}

// hungUp tells onHang, the first time a read meets the client's FIN or
// RST, that the client closed by now.
func (c *stampedConn) hungUp() {
	now := time.Now()
	c.stampMu.Lock()
	first := c.hangup == 0
	if first {
		c.hangup = now.UnixNano()
	}
	f := c.onHang
	c.stampMu.Unlock()
	if first && f != nil {
		f(now)
	}
}

// receiveTime finds the SCM_TIMESTAMPNS control message in oob and returns
// its time in Unix nanoseconds. It reads the messages as
// syscall.ParseSocketControlMessage does, without allocating.
func receiveTime(oob []byte) (int64, bool) {
	hdr := syscall.CmsgLen(0) // the header, aligned: where data begins
	for len(oob) >= hdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return 0, false
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && l-hdr >= sizeofTimespec {
			ts := (*syscall.Timespec)(unsafe.Pointer(&oob[hdr]))
			return ts.Nano(), true
		}
		next := syscall.CmsgSpace(l - hdr)
		if next >= len(oob) {
			break
		}
		oob = oob[next:]
	}
	return 0, false
}
