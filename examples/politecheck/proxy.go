package main

// The -proxy mode: an HTTP CONNECT proxy in front of the web, for crawlers
// that cannot be told where to connect but honour HTTPS_PROXY.

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// connectProxy answers CONNECT host:443 by tunnelling to the web, one
// upstream connection per tunnel, so the web sees as many connections as
// the crawler opened and the crawler's own TLS handshake (SNI included).
// Anything but CONNECT is answered 405.
type connectProxy struct {
	ln     net.Listener
	web    *politetest.Web
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

func startProxy(web *politetest.Web) (*connectProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &connectProxy{ln: ln, web: web, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

func (p *connectProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.tunnel(c)
	}
}

// track records c as open (false once the proxy is closing).
func (p *connectProxy) track(c net.Conn, open bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !open {
		delete(p.conns, c)
		return true
	}
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *connectProxy) tunnel(down net.Conn) {
	defer p.wg.Done()
	defer down.Close()
	if !p.track(down, true) {
		return
	}
	defer p.track(down, false)
	down.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(down)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	down.SetReadDeadline(time.Time{})
	if req.Method != http.MethodConnect {
		io.WriteString(down, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	// The web decides: a site's name reaches the HTTPS server (port 80
	// the plain twin); any other name is not found.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	up, err := p.web.DialContext(ctx, "tcp", req.Host)
	cancel()
	if err != nil {
		status := "502 Bad Gateway"
		if dnsErr, ok := errors.AsType[*net.DNSError](err); ok && dnsErr.IsNotFound {
			status = "404 Not Found"
		}
		io.WriteString(down, "HTTP/1.1 "+status+"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	defer up.Close()
	if !p.track(up, true) {
		return
	}
	defer p.track(up, false)
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	// Bytes the crawler sent after its CONNECT (its ClientHello, say) are
	// in br's buffer.
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
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

func (p *connectProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
