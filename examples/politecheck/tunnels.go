package main

import (
	"io"
	"net"
	"sync"
)

// tunnels is a loopback listener whose every accepted connection is handed
// to a handler in a goroutine of its own, with the bookkeeping the relay and
// the CONNECT proxy share: every connection either side opens is tracked, so
// close ends them all and waits for their handlers.
type tunnels struct {
	ln     net.Listener
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// listenTunnels listens on a free loopback port; start serves it.
func listenTunnels() (*tunnels, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &tunnels{ln: ln, conns: make(map[net.Conn]struct{})}, nil
}

// start accepts connections until close, each handled by handle, which owns
// the connection (it is tracked and closed around it).
func (t *tunnels) start(handle func(down net.Conn)) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		for {
			c, err := t.ln.Accept()
			if err != nil {
				return
			}
			t.wg.Add(1)
			go func() {
				defer t.wg.Done()
				defer c.Close()
				if !t.track(c, true) {
					return
				}
				defer t.track(c, false)
				handle(c)
			}()
		}
	}()
}

// track records c as open (false once the listener is closing).
func (t *tunnels) track(c net.Conn, open bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !open {
		delete(t.conns, c)
		return true
	}
	if t.closed {
		return false
	}
	t.conns[c] = struct{}{}
	return true
}

// splice copies both ways between down and up (tracked for close) until
// both directions end, half-closing each side as its source ends.
func (t *tunnels) splice(down, up net.Conn) {
	defer up.Close()
	if !t.track(up, true) {
		return
	}
	defer t.track(up, false)
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(up, down)
	go cp(down, up)
	<-done
	<-done
}

// close stops accepting, closes every tracked connection and waits for the
// handlers.
func (t *tunnels) close() {
	t.ln.Close()
	t.mu.Lock()
	t.closed = true
	for c := range t.conns {
		c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
}
