package main

// The simulated web a crawler is run against, and the files and variables
// that tell the crawler how to reach it.

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// env is a running web and what a crawler needs to reach it.
type env struct {
	web     *politetest.Web
	info    *politetest.ScenarioInfo
	addr    string // where the crawler connects: the HTTPS server or the relay
	dir     string
	keepDir bool
	seeds   string        // the seed list's path
	ca      string        // the CA file's path
	relay   *relay        // nil over HTTPS
	proxy   *connectProxy // nil without -proxy
}

func startEnv(cfg *config) (_ *env, err error) {
	e := &env{dir: cfg.dir, keepDir: cfg.dir != ""}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if e.dir == "" {
		if e.dir, err = os.MkdirTemp("", "politecheck-"); err != nil {
			return nil, err
		}
	} else {
		// Absolute, so that the paths mean the same from the crawler's
		// working directory.
		if e.dir, err = filepath.Abs(e.dir); err != nil {
			return nil, err
		}
		if err = os.MkdirAll(e.dir, 0o755); err != nil {
			return nil, err
		}
	}
	if e.web, err = politetest.Start(); err != nil {
		return nil, fmt.Errorf("starting the web: %w", err)
	}
	if e.info, err = cfg.sc.Build(e.web); err != nil {
		return nil, err
	}
	e.addr = e.web.Addr()
	if cfg.scheme == "http" {
		if e.relay, err = startRelay(e.web); err != nil {
			return nil, fmt.Errorf("starting the plain-HTTP relay: %w", err)
		}
		e.addr = e.relay.ln.Addr().String()
	}

	if cfg.proxy {
		if e.proxy, err = startProxy(e.web); err != nil {
			return nil, fmt.Errorf("starting the proxy: %w", err)
		}
	}

	e.ca = filepath.Join(e.dir, "ca.pem")
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.web.CACert().Raw})
	if err = os.WriteFile(e.ca, caPEM, 0o644); err != nil {
		return nil, err
	}
	var seeds strings.Builder
	for _, s := range e.info.Sites {
		fmt.Fprintf(&seeds, "%s://%s/feed.xml\n", cfg.scheme, s.Name)
	}
	e.seeds = filepath.Join(e.dir, "seeds.txt")
	if err = os.WriteFile(e.seeds, []byte(seeds.String()), 0o644); err != nil {
		return nil, err
	}
	return e, nil
}

// vars are the crawler's environment additions, in a fixed order.
func (e *env) vars() [][2]string {
	v := [][2]string{
		{"POLITECHECK_ADDR", e.addr},
		{"POLITECHECK_SEEDS", e.seeds},
		{"POLITECHECK_CA", e.ca},
		{"SSL_CERT_FILE", e.ca},
	}
	if p := e.proxyURL(); p != "" {
		v = append(v, [2]string{"POLITECHECK_PROXY", p}, [2]string{"HTTPS_PROXY", p}, [2]string{"https_proxy", p})
	}
	return v
}

// proxyURL is the CONNECT proxy's URL, or "" without -proxy.
func (e *env) proxyURL() string {
	if e.proxy == nil {
		return ""
	}
	return "http://" + e.proxy.ln.Addr().String()
}

// shellVars prints the variables as POSIX shell assignments.
func (e *env) shellVars() string {
	var b strings.Builder
	for _, v := range e.vars() {
		fmt.Fprintf(&b, "export %s='%s'\n", v[0], strings.ReplaceAll(v[1], "'", `'\''`))
	}
	return b.String()
}

// expand replaces the placeholders {addr}, {seeds}, {ca} and {proxy} in
// arg.
func (e *env) expand(arg string) string {
	return strings.NewReplacer("{addr}", e.addr, "{seeds}", e.seeds, "{ca}", e.ca, "{proxy}", e.proxyURL()).Replace(arg)
}

func (e *env) close() {
	if e.proxy != nil {
		e.proxy.close()
	}
	if e.relay != nil {
		e.relay.close()
	}
	if e.web != nil {
		e.web.Close()
	}
	if e.dir != "" && !e.keepDir {
		os.RemoveAll(e.dir)
	}
}

// relay is a plain-HTTP listener passing each accepted connection to the
// web's plain-HTTP twin over a connection of its own, so the web sees as
// many connections as the crawler opened.
type relay struct {
	*tunnels
	web *politetest.Web
}

func startRelay(web *politetest.Web) (*relay, error) {
	t, err := listenTunnels()
	if err != nil {
		return nil, err
	}
	r := &relay{tunnels: t, web: web}
	t.start(r.pipe)
	return r, nil
}

func (r *relay) pipe(down net.Conn) {
	// Any site name on port 80 reaches the plain-HTTP twin; the site is
	// chosen by each request's Host header.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	up, err := r.web.DialContext(ctx, "tcp", r.web.IP().String()+":80")
	cancel()
	if err != nil {
		return
	}
	r.splice(down, up)
}
