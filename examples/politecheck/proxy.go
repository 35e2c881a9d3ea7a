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
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// connectProxy answers CONNECT host:443 by tunnelling to the web, one
// upstream connection per tunnel, so the web sees as many connections as
// the crawler opened and the crawler's own TLS handshake (SNI included).
// Anything but CONNECT is answered 405.
type connectProxy struct {
	*tunnels
	web *politetest.Web
}

func startProxy(web *politetest.Web) (*connectProxy, error) {
	t, err := listenTunnels()
	if err != nil {
		return nil, err
	}
	p := &connectProxy{tunnels: t, web: web}
	t.start(p.tunnel)
	return p, nil
}

func (p *connectProxy) tunnel(down net.Conn) {
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
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		up.Close()
		return
	}
	// Bytes the crawler sent after its CONNECT (its ClientHello, say) are
	// in br's buffer.
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := up.Write(b); err != nil {
			up.Close()
			return
		}
	}
	p.splice(down, up)
}
