package politetest

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kind names a misbehaviour.
type Kind int

// The misbehaviours a site can show on demand (see [Behaviour] for the
// fields each one reads).
const (
	// Behave answers normally; Misbehave(path, Behaviour{}) removes a
	// misbehaviour.
	Behave Kind = iota
	// TooManyRequests answers 429 with Retry-After (if RetryAfter is set).
	TooManyRequests
	// Unavailable answers 503 with Retry-After (if RetryAfter is set).
	Unavailable
	// Unauthorized answers 401 with a WWW-Authenticate challenge.
	Unauthorized
	// Forbidden answers 403.
	Forbidden
	// Challenge answers a Cloudflare-like bot-challenge interstitial: 403
	// (or Status 503), "Server: cloudflare", "cf-mitigated: challenge", a
	// cf-ray header, and an HTML body with "Just a moment...",
	// challenge-platform and _cf_chl_opt.
	Challenge
	// ServerError answers Status (default 500).
	ServerError
	// SlowFirstByte waits Delay (default 1 s) before answering normally.
	SlowFirstByte
	// Trickle sends the normal answer Chunk bytes (default 16) at a time,
	// Delay (default 50 ms) apart.
	Trickle
	// Truncate declares the normal answer's full Content-Length, sends
	// half of the body, then cuts the connection.
	Truncate
	// UnknownEncoding sends the normal body labelled with Content-Encoding
	// Encoding (default "x-politetest").
	UnknownEncoding
	// GzipBomb sends a small gzip body (Content-Encoding: gzip) that
	// inflates to Size bytes (default 64 MiB) of zeros.
	GzipBomb
	// Oversize sends a text/html body of Size bytes (default 32 MiB).
	Oversize
	// NoContentType answers normally without any Content-Type header.
	NoContentType
	// RedirectLoop redirects path to path?loop=1 and back, forever.
	RedirectLoop
	// RedirectToHTTP redirects to the same URL over plain http (the plain
	// twin of the web then answers normally).
	RedirectToHTTP
	// RedirectToHost redirects to the same path on Host (default
	// "www.<site>"); create that site for it to answer.
	RedirectToHost
	// RedirectAddParam redirects to the same URL plus the query parameter
	// Param (default "utm_source=politetest"), which then answers normally.
	RedirectAddParam
	// RedirectChain answers with Hops (default 3) redirects (?hop=1, …)
	// before the normal answer.
	RedirectChain
	// SetCookie answers normally plus a Set-Cookie header. On "*" it adds
	// the cookie to every answer, even on paths with their own misbehaviour.
	SetCookie
	// Hang never answers: it waits until the client gives up or the web
	// closes.
	Hang
	// Reset resets the connection (TCP RST) without answering; over TLS,
	// with no close_notify alert before it.
	Reset
	// WrongContentType answers normally but labels the body with
	// ContentType (default "application/octet-stream").
	WrongContentType
	// Malformed answers 200 with the first half of the normal body, its
	// Content-Length saying so: complete on the wire, a broken document
	// (XML, HTML or JSON cut short).
	Malformed
	// Endless answers 200 text/html with no Content-Length and a body that
	// never ends: it streams until the client hangs up or the web closes.
	Endless
	// HugeHeader answers normally plus one header line of Size bytes
	// (default 1 MiB).
	HugeHeader
	// RedirectTo redirects (302) to Location exactly as given: another
	// host, an IP literal, another scheme.
	RedirectTo
	// DuplicateLinks serves the RSS feed with each item Copies times
	// (default 4): as published, with tracking parameters
	// (utm_source, utm_medium), with a fragment, and with the host in
	// upper case.
	DuplicateLinks
	// ForeignLinks serves the RSS feed with its own items and, before
	// them, items linking elsewhere: another host (Host, default
	// "elsewhere.example"), a private address, a link-local cloud metadata
	// address, loopback, javascript:, data: and ftp: URLs, and a URL of
	// 64 KiB.
	ForeignLinks
	// EndlessPages answers the WordPress-like post list as a server that
	// ignores the page parameter: every page is the first, each claiming
	// a million pages and a next one.
	EndlessPages
	// CloseConnection answers normally with "Connection: close", so every
	// request needs a new connection. On "*" it applies to every answer,
	// robots.txt included, like SetCookie.
	CloseConnection
	// HangUp closes the connection cleanly without answering (over TLS a
	// close_notify alert, then the TCP FIN): the client reads the end of
	// the stream where the answer should be.
	HangUp
)

var kindNames = [...]string{
	"behave", "too-many-requests", "unavailable", "unauthorized", "forbidden", "challenge",
	"server-error", "slow-first-byte", "trickle", "truncate", "unknown-encoding", "gzip-bomb",
	"oversize", "no-content-type", "redirect-loop", "redirect-to-http", "redirect-to-host",
	"redirect-add-param", "redirect-chain", "set-cookie", "hang", "reset",
	"wrong-content-type", "malformed", "endless", "huge-header", "redirect-to", "duplicate-links",
	"foreign-links", "endless-pages", "close-connection", "hang-up",
}

// String returns the kind's name, such as "too-many-requests".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Behaviour is a misbehaviour a site shows on a path. Only Kind is needed;
// the other fields tune it and their zero values pick the defaults the
// [Kind] constants name.
type Behaviour struct {
	Kind Kind
	// Status overrides the status code (ServerError, Challenge).
	Status int
	// RetryAfter, if positive, adds a Retry-After header (TooManyRequests,
	// Unavailable, Challenge, ServerError): in whole seconds (rounded up),
	// or, with RetryAfterDate, as an HTTP-date that far ahead.
	RetryAfter     time.Duration
	RetryAfterDate bool
	// RetryAfterText, if set, is sent as the Retry-After header verbatim
	// (a value no parser should trust, such as "soon"), instead of
	// RetryAfter.
	RetryAfterText string
	// Delay is the wait of SlowFirstByte and between Trickle's chunks.
	Delay time.Duration
	// Chunk is Trickle's piece size in bytes.
	Chunk int
	// Size is GzipBomb's inflated size, Oversize's body size and
	// HugeHeader's header size, in bytes.
	Size int64
	// Hops is RedirectChain's number of redirects.
	Hops int
	// Host is RedirectToHost's target host and ForeignLinks' other host.
	Host string
	// Location is RedirectTo's target.
	Location string
	// ContentType is WrongContentType's label.
	ContentType string
	// Copies is how many times DuplicateLinks lists each item.
	Copies int
	// Param is RedirectAddParam's "name=value".
	Param string
	// Encoding is UnknownEncoding's Content-Encoding.
	Encoding string
	// Times, if positive, limits the misbehaviour to that many answers;
	// after them the path behaves again. 0 means forever.
	Times int
}

// Misbehave makes the site misbehave on path (exact; "*" means every path
// except /robots.txt, which [Site.SetRobots] governs, though an exact
// "/robots.txt" works). A path's own behaviour wins over "*", except that
// SetCookie and CloseConnection on "*" decorate every answer, robots.txt
// included. A zero Behaviour removes it.
func (s *Site) Misbehave(path string, b Behaviour) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.Kind == Behave {
		delete(s.behaviours, path)
		return
	}
	s.behaviours[path] = &behaviourState{b: b}
}

// decoration is a misbehaviour that only adds to an answer.
type decoration struct {
	cookie, close bool
}

func isDecoration(k Kind) bool { return k == SetCookie || k == CloseConnection }

// behaviourFor returns the behaviour governing path, counting the answer,
// and the decorations "*" adds to it.
func (s *Site) behaviourFor(path string) (Behaviour, decoration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var dec decoration
	st := s.behaviours[path]
	if star := s.behaviours["*"]; star != nil {
		if isDecoration(star.b.Kind) {
			// a decoration: it applies to robots.txt too
			dec.cookie = star.b.Kind == SetCookie
			dec.close = star.b.Kind == CloseConnection
		} else if st == nil && !isRobotsPath(path) {
			st = star
		}
	}
	if st == nil || (st.b.Times > 0 && st.served >= st.b.Times) {
		return Behaviour{}, dec, false
	}
	st.served++
	return st.b, dec, true
}

// misbehave answers r as b says. It reports false when the normal answer
// should follow (after, perhaps, a header was added).
func (s *Site) misbehave(w http.ResponseWriter, r *http.Request, b Behaviour) bool {
	h := w.Header()
	switch b.Kind {
	case TooManyRequests, Unavailable:
		status := http.StatusTooManyRequests
		if b.Kind == Unavailable {
			status = http.StatusServiceUnavailable
		}
		setRetryAfter(h, b)
		errorPage(w, status)
	case Unauthorized:
		h.Set("WWW-Authenticate", `Basic realm="`+s.name+`"`)
		errorPage(w, http.StatusUnauthorized)
	case Forbidden:
		errorPage(w, http.StatusForbidden)
	case ServerError:
		status := b.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		setRetryAfter(h, b)
		errorPage(w, status)
	case Challenge:
		s.challenge(w, r, b)
	case SlowFirstByte:
		if !s.wait(r, orDur(b.Delay, time.Second)) {
			panic(http.ErrAbortHandler)
		}
		return false
	case Trickle:
		s.trickle(w, r, b)
	case Truncate:
		s.truncate(w, r)
	case UnknownEncoding:
		s.serveEdited(w, r, func(h http.Header) { h.Set("Content-Encoding", orStr(b.Encoding, "x-politetest")) })
	case GzipBomb:
		s.web.gzipBomb(w, r, orInt64(b.Size, 64<<20))
	case Oversize:
		oversize(w, r, orInt64(b.Size, 32<<20))
	case NoContentType:
		s.serveEdited(w, r, func(h http.Header) { h["Content-Type"] = nil }) // nil stops net/http from sniffing one
	case RedirectLoop:
		q := r.URL.Query()
		if q.Has("loop") {
			q.Del("loop")
		} else {
			q.Set("loop", "1")
		}
		redirect(w, r.URL.Path, q, http.StatusFound)
	case RedirectToHTTP:
		if r.TLS == nil {
			return false
		}
		redirectTo(w, "http://"+s.name+r.URL.RequestURI(), http.StatusMovedPermanently)
	case RedirectToHost:
		target := canonicalHost(orStr(b.Host, "www."+s.name))
		if canonicalHost(r.Host) == target {
			return false
		}
		redirectTo(w, "https://"+target+r.URL.RequestURI(), http.StatusMovedPermanently)
	case RedirectAddParam:
		name, value, _ := strings.Cut(orStr(b.Param, "utm_source=politetest"), "=")
		q := r.URL.Query()
		if q.Has(name) {
			return false
		}
		q.Set(name, value)
		redirect(w, r.URL.Path, q, http.StatusFound)
	case RedirectChain:
		q := r.URL.Query()
		hop, _ := strconv.Atoi(q.Get("hop"))
		if hop >= orInt(b.Hops, 3) {
			return false
		}
		q.Set("hop", strconv.Itoa(hop+1))
		redirect(w, r.URL.Path, q, http.StatusFound)
	case SetCookie, CloseConnection:
		return false
	case WrongContentType:
		s.serveEdited(w, r, func(h http.Header) { h.Set("Content-Type", orStr(b.ContentType, "application/octet-stream")) })
	case Malformed:
		_, hdr, body := s.render(withoutConditions(r))
		copyHeader(h, hdr)
		h.Del("ETag")
		h.Del("Last-Modified")
		body = body[:len(body)/2]
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	case Endless:
		s.endless(w, r)
	case HugeHeader:
		h.Set("X-Politetest-Padding", strings.Repeat("p", int(orInt64(b.Size, 1<<20))))
		return false
	case RedirectTo:
		redirectTo(w, orStr(b.Location, "/"), http.StatusFound)
	case DuplicateLinks:
		s.serveFeedWith(w, r, duplicated(orInt(b.Copies, 4)))
	case ForeignLinks:
		s.serveFeedWith(w, r, foreign(canonicalHost(orStr(b.Host, "elsewhere.example"))))
	case EndlessPages:
		s.serveEndlessPages(w, r)
	case Hang:
		s.hang(r)
	case Reset:
		s.reset(w, r)
	case HangUp:
		s.hangUp(w, r)
	default:
		return false
	}
	return true
}

// setCookie adds the session cookie a SetCookie misbehaviour hands out.
func setCookie(h http.Header) {
	var b [8]byte
	rand.Read(b[:])
	h.Add("Set-Cookie", "politetest_session="+hex.EncodeToString(b[:])+"; Path=/; Secure; HttpOnly; SameSite=Lax")
}

func setRetryAfter(h http.Header, b Behaviour) {
	if b.RetryAfterText != "" {
		h.Set("Retry-After", b.RetryAfterText)
		return
	}
	if b.RetryAfter <= 0 {
		return
	}
	if b.RetryAfterDate {
		at := time.Now().Add(b.RetryAfter + time.Second - 1).Truncate(time.Second)
		h.Set("Retry-After", at.UTC().Format(http.TimeFormat))
		return
	}
	secs := (b.RetryAfter + time.Second - 1) / time.Second
	h.Set("Retry-After", strconv.FormatInt(int64(secs), 10))
}

func errorPage(w http.ResponseWriter, status int) {
	body := fmt.Sprintf("<!DOCTYPE html>\n<html><head><title>%d %s</title></head><body><h1>%d %s</h1></body></html>\n",
		status, http.StatusText(status), status, http.StatusText(status))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write([]byte(body))
}

func (s *Site) challenge(w http.ResponseWriter, r *http.Request, b Behaviour) {
	status := b.Status
	if status == 0 {
		status = http.StatusForbidden
	}
	var ray [8]byte
	rand.Read(ray[:])
	h := w.Header()
	h.Set("Server", "cloudflare")
	h.Set("cf-mitigated", "challenge")
	h.Set("cf-ray", hex.EncodeToString(ray[:])+"-AMS")
	h.Set("Cache-Control", "private, max-age=0, no-store, no-cache, must-revalidate, post-check=0, pre-check=0")
	h.Set("Content-Type", "text/html; charset=UTF-8")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("X-Frame-Options", "SAMEORIGIN")
	setRetryAfter(h, b)
	body := `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>` +
		`<meta http-equiv="Content-Type" content="text/html; charset=UTF-8"><meta name="robots" content="noindex,nofollow">` +
		`</head><body><div class="main-wrapper" role="main"><div class="main-content">` +
		`<noscript><div class="h2"><span id="challenge-error-text">Enable JavaScript and cookies to continue</span></div></noscript>` +
		`</div></div><script>(function(){window._cf_chl_opt={cvId: '3',cZone: "` + s.name + `",cType: 'managed',` +
		`cRay: '` + hex.EncodeToString(ray[:]) + `'};var cpo=document.createElement('script');` +
		`cpo.src='/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=` + hex.EncodeToString(ray[:]) + `';` +
		`document.getElementsByTagName('head')[0].appendChild(cpo);}());</script></body></html>`
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write([]byte(body))
}

// render produces the site's normal answer to r in memory.
func (s *Site) render(r *http.Request) (int, http.Header, []byte) {
	bw := &bufferWriter{h: http.Header{}}
	s.normal(bw, r)
	if bw.status == 0 {
		bw.status = http.StatusOK
	}
	return bw.status, bw.h, bw.buf.Bytes()
}

type bufferWriter struct {
	h      http.Header
	status int
	buf    bytes.Buffer
}

func (b *bufferWriter) Header() http.Header { return b.h }
func (b *bufferWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.buf.Write(p)
}

func copyHeader(dst, src http.Header) {
	for k, v := range src {
		dst[k] = append([]string(nil), v...)
	}
}

func (s *Site) trickle(w http.ResponseWriter, r *http.Request, b Behaviour) {
	status, hdr, body := s.render(r)
	copyHeader(w.Header(), hdr)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	rc := http.NewResponseController(w)
	chunk := orInt(b.Chunk, 16)
	delay := orDur(b.Delay, 50*time.Millisecond)
	for len(body) > 0 {
		n := min(chunk, len(body))
		if _, err := w.Write(body[:n]); err != nil {
			panic(http.ErrAbortHandler)
		}
		rc.Flush()
		body = body[n:]
		if len(body) > 0 && !s.wait(r, delay) {
			panic(http.ErrAbortHandler)
		}
	}
}

func (s *Site) truncate(w http.ResponseWriter, r *http.Request) {
	status, hdr, body := s.render(r)
	copyHeader(w.Header(), hdr)
	declared := len(body)
	if declared == 0 {
		declared = 1024
	}
	w.Header().Set("Content-Length", strconv.Itoa(declared))
	w.WriteHeader(status)
	w.Write(body[:len(body)/2])
	http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler) // net/http closes the connection
}

// withoutConditions returns r without its conditional headers, so that its
// rendering is the full answer.
func withoutConditions(r *http.Request) *http.Request {
	if r.Header.Get("If-None-Match") == "" && r.Header.Get("If-Modified-Since") == "" {
		return r
	}
	r2 := r.Clone(r.Context())
	r2.Header.Del("If-None-Match")
	r2.Header.Del("If-Modified-Since")
	return r2
}

// endless streams HTML until the client hangs up or the web closes.
func (s *Site) endless(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(w)
	chunk := bytes.Repeat([]byte("<p>politetest endless body</p>\n"), 1024) // 31 KiB
	for {
		select {
		case <-r.Context().Done():
			panic(http.ErrAbortHandler)
		case <-s.web.closing():
			panic(http.ErrAbortHandler)
		default:
		}
		if _, err := w.Write(chunk); err != nil {
			panic(http.ErrAbortHandler)
		}
		rc.Flush()
	}
}

func oversize(w http.ResponseWriter, r *http.Request, size int64) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	chunk := bytes.Repeat([]byte("<p>politetest oversize body</p>\n"), 1024) // 32 KiB
	for left := size; left > 0; {
		n := int64(len(chunk))
		if left < n {
			n = left
		}
		if _, err := w.Write(chunk[:n]); err != nil {
			panic(http.ErrAbortHandler)
		}
		left -= n
	}
}

// bombSet holds one gzip member that inflates to bombUnit zero bytes, made
// once per web; a bomb is that member repeated (gzip readers read
// concatenated members as one stream).
type bombSet struct {
	once   sync.Once
	member []byte
}

const bombUnit = 1 << 20

func (w *Web) gzipBomb(rw http.ResponseWriter, r *http.Request, size int64) {
	w.bomb.once.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(make([]byte, bombUnit))
		zw.Close()
		w.bomb.member = b.Bytes()
	})
	members := (size + bombUnit - 1) / bombUnit
	h := rw.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Encoding", "gzip")
	h.Set("Content-Length", strconv.FormatInt(members*int64(len(w.bomb.member)), 10))
	rw.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	for i := int64(0); i < members; i++ {
		if _, err := rw.Write(w.bomb.member); err != nil {
			panic(http.ErrAbortHandler)
		}
	}
}

func redirect(w http.ResponseWriter, path string, q url.Values, status int) {
	target := path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	redirectTo(w, target, status)
}

func redirectTo(w http.ResponseWriter, target string, status int) {
	w.Header().Set("Location", target)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<a href=\"%s\">%s</a>\n", html.EscapeString(target), http.StatusText(status))
}

func orDur(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func orInt(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

func orInt64(n, def int64) int64 {
	if n > 0 {
		return n
	}
	return def
}

func orStr(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// serveEdited answers as the site would, with its headers changed by edit
// and the body's length declared.
func (s *Site) serveEdited(w http.ResponseWriter, r *http.Request, edit func(http.Header)) {
	status, hdr, body := s.render(r)
	h := w.Header()
	copyHeader(h, hdr)
	edit(h)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
