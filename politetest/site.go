package politetest

import (
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Site is one virtual publisher of a [Web], answering for one host name. Get
// one with [Web.Site]. Every method is safe for concurrent use and may be
// called at any time; a change applies to the next request.
//
// A new site serves a permissive robots.txt (which names its sitemap index),
// its feeds, sitemaps, WordPress-like API and home page (empty until articles
// are added), and its share images.
type Site struct {
	web  *Web
	name string

	mu         sync.Mutex
	robots     Robots
	articles   []Article // in ID order
	nextID     int
	handlers   map[string]http.Handler
	behaviours map[string]*behaviourState
	addr       netip.Addr
	latMin     time.Duration
	latMax     time.Duration
	rng        *rand.Rand
}

type behaviourState struct {
	b      Behaviour
	served int
}

func newSite(w *Web, name string) *Site {
	h := fnv.New64a()
	h.Write([]byte(name))
	seed := h.Sum64()
	return &Site{
		web:        w,
		name:       name,
		robots:     Robots{Body: defaultRobots(name)},
		nextID:     1,
		handlers:   map[string]http.Handler{},
		behaviours: map[string]*behaviourState{},
		rng:        rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}
}

func defaultRobots(name string) string {
	return "User-agent: *\nAllow: /\n\nSitemap: https://" + name + "/sitemap_index.xml\n"
}

// Name returns the site's host name.
func (s *Site) Name() string { return s.name }

// URL returns "https://<site>/path".
func (s *Site) URL(path string) string { return s.web.URL(s.name, path) }

// Robots describes the site's /robots.txt answer. The zero value serves an
// empty 200 answer (everything allowed).
type Robots struct {
	// Status is the answer's status code; 0 means 200.
	Status int
	// Body is the answer's body, served as text/plain.
	Body string
	// Failure, if set, replaces the answer with a failure: a timeout or a
	// reset connection.
	Failure Failure
	// Redirects, if positive, answers /robots.txt with a chain of that many
	// 301 redirects (/robots.txt?hop=1, ?hop=2, …) before the answer.
	Redirects int
}

// Failure is a way for a request to fail without an HTTP answer.
type Failure int

const (
	// NoFailure answers normally.
	NoFailure Failure = iota
	// FailTimeout never answers: the handler waits until the client gives
	// up (the request's context ends) or the web closes.
	FailTimeout
	// FailReset resets the connection (TCP RST) without answering.
	FailReset
)

// String returns "none", "timeout" or "reset".
func (f Failure) String() string {
	switch f {
	case NoFailure:
		return "none"
	case FailTimeout:
		return "timeout"
	case FailReset:
		return "reset"
	}
	return "Failure(" + strconv.Itoa(int(f)) + ")"
}

// SetRobots sets the site's robots.txt answer. A new site serves
// "User-agent: *", "Allow: /" and a Sitemap line.
func (s *Site) SetRobots(r Robots) {
	s.mu.Lock()
	s.robots = r
	s.mu.Unlock()
}

// RobotsConfig returns the site's current robots.txt setting.
func (s *Site) RobotsConfig() Robots {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.robots
}

// Handle makes h answer path on this site, ahead of the site's own parts
// (including robots.txt). A path ending in "/" answers its whole subtree;
// the longest match wins. A nil h removes the handler. Misbehaviours set with
// [Site.Misbehave] still come first.
func (s *Site) Handle(path string, h http.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h == nil {
		delete(s.handlers, path)
		return
	}
	s.handlers[path] = h
}

// ResolveTo declares that the site's name resolves to a, as seen through
// [Web.LookupNetIP]; use it with a private or loopback address to test SSRF
// refusal. [Web.DialContext] still reaches the web when asked to dial a (so a
// client without the check is caught fetching). The zero Addr undoes it.
func (s *Site) ResolveTo(a netip.Addr) {
	s.mu.Lock()
	s.addr = a
	s.mu.Unlock()
}

func (s *Site) declaredAddr() netip.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// SetLatency makes every answer wait a random time in [min, max] before it
// starts (the wait ends early when the request's context ends). Zero
// durations mean no added latency.
func (s *Site) SetLatency(min, max time.Duration) {
	if max < min {
		max = min
	}
	s.mu.Lock()
	s.latMin, s.latMax = min, max
	s.mu.Unlock()
}

func (s *Site) latency() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latMax <= 0 {
		return 0
	}
	if s.latMax == s.latMin {
		return s.latMin
	}
	return s.latMin + time.Duration(s.rng.Int64N(int64(s.latMax-s.latMin)+1))
}

// wait waits d, or until the request's context ends or the web closes. It
// reports whether the full wait elapsed.
func (s *Site) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.web.closing():
		return false
	}
}

func (s *Site) handlerFor(path string) http.Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.handlers[path]; ok {
		return h
	}
	best := ""
	for p := range s.handlers {
		if strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) && len(p) > len(best) {
			best = p
		}
	}
	if best == "" {
		return nil
	}
	return s.handlers[best]
}

// serve answers one request: latency, misbehaviour, handler, built-in part.
func (s *Site) serve(w http.ResponseWriter, r *http.Request) {
	if !s.wait(r, s.latency()) {
		panic(http.ErrAbortHandler)
	}
	b, dec, ok := s.behaviourFor(r.URL.Path)
	if dec.cookie || (ok && b.Kind == SetCookie) {
		setCookie(w.Header())
	}
	if dec.close || (ok && b.Kind == CloseConnection) {
		w.Header().Set("Connection", "close")
	}
	if ok && s.misbehave(w, r, b) {
		return
	}
	s.normal(w, r)
}

// normal answers as the site would without misbehaviour.
func (s *Site) normal(w http.ResponseWriter, r *http.Request) {
	if h := s.handlerFor(r.URL.Path); h != nil {
		h.ServeHTTP(w, r)
		return
	}
	if isRobotsPath(r.URL.Path) {
		s.serveRobots(w, r)
		return
	}
	s.builtin(w, r)
}

func (s *Site) serveRobots(w http.ResponseWriter, r *http.Request) {
	rb := s.RobotsConfig()
	if rb.Redirects > 0 {
		hop, _ := strconv.Atoi(r.URL.Query().Get("hop"))
		if hop < rb.Redirects {
			w.Header().Set("Location", "/robots.txt?hop="+strconv.Itoa(hop+1))
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
	}
	switch rb.Failure {
	case FailTimeout:
		s.hang(r)
	case FailReset:
		s.reset(w, r)
	}
	status := rb.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(rb.Body)))
	w.WriteHeader(status)
	w.Write([]byte(rb.Body))
}

// hang waits until the client gives up or the web closes, then aborts the
// handler without an answer. It never returns.
func (s *Site) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.web.closing():
	}
	panic(http.ErrAbortHandler)
}

// reset closes the request's connection with a TCP RST, and nothing before
// it (over TLS, no close_notify alert). It never returns.
func (s *Site) reset(w http.ResponseWriter, r *http.Request) { s.drop(w, r, true) }

// hangUp closes the request's connection without answering, cleanly (over
// TLS a close_notify alert, then the TCP FIN). It never returns.
func (s *Site) hangUp(w http.ResponseWriter, r *http.Request) { s.drop(w, r, false) }

func (s *Site) drop(w http.ResponseWriter, r *http.Request, rst bool) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if rst {
		// A *net.TCPConn, or the stamping wrapper around one (stampConn),
		// closed under the TLS layer.
		raw := rawConn(conn)
		if tc, ok := raw.(interface{ SetLinger(sec int) error }); ok {
			tc.SetLinger(0)
		}
		raw.Close()
	} else {
		conn.Close()
	}
	rec, _ := r.Context().Value(connKey{}).(*Conn)
	s.web.connClosedNow(rec)
	panic(http.ErrAbortHandler)
}

// AddArticle publishes a on the site: it appears in the feeds, sitemaps and
// WordPress-like API, and at its Path. Empty fields are filled in (see
// [Article]); the article as published is returned. Adding an article with
// the ID of an existing one replaces it.
func (s *Site) AddArticle(a Article) Article {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.ID <= 0 {
		a.ID = s.nextID
	}
	if a.ID >= s.nextID {
		s.nextID = a.ID + 1
	}
	a = a.filled(s.name)
	for i := range s.articles {
		if s.articles[i].ID == a.ID {
			s.articles[i] = a
			return a
		}
	}
	s.articles = append(s.articles, a)
	sort.Slice(s.articles, func(i, j int) bool { return s.articles[i].ID < s.articles[j].ID })
	return a
}

// Articles returns the site's articles, newest first (by Published, then
// by ID).
func (s *Site) Articles() []Article {
	s.mu.Lock()
	out := append([]Article(nil), s.articles...)
	s.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Published.Equal(out[j].Published) {
			return out[i].Published.After(out[j].Published)
		}
		return out[i].ID > out[j].ID
	})
	return out
}

func (s *Site) articleAt(path string) (Article, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.articles {
		if a.Path == path {
			return a, true
		}
	}
	return Article{}, false
}

func (s *Site) articleByID(id int) (Article, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.articles {
		if a.ID == id {
			return a, true
		}
	}
	return Article{}, false
}
