package politetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The misbehaviours the hostile web added, as a client sees them on the
// wire.
func TestHostileMisbehaviourOnTheWire(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("hostile.example")
	s.AddArticle(Article{ID: 1, Path: "/a/"})
	s.AddArticle(Article{ID: 2, Path: "/b/"})
	c := w.Client()
	_, normal, _ := raw(t, c, s.URL("/a/"))
	_, feed, _ := raw(t, c, s.URL("/feed.xml"))

	for _, tc := range []struct {
		name  string
		path  string
		b     Behaviour
		check func(t *testing.T, resp *http.Response, body []byte, err error)
	}{
		{"wrong content type", "/a/", Behaviour{Kind: WrongContentType}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.Header.Get("Content-Type") != "application/octet-stream" || !bytes.Equal(body, normal) {
				t.Errorf("Content-Type %q, %d bytes", resp.Header.Get("Content-Type"), len(body))
			}
		}},
		{"malformed", "/feed.xml", Behaviour{Kind: Malformed}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if err != nil || resp.StatusCode != 200 || resp.ContentLength != int64(len(feed)/2) || !bytes.Equal(body, feed[:len(feed)/2]) {
				t.Errorf("%d, Content-Length %d, %d bytes of %d, %v", resp.StatusCode, resp.ContentLength, len(body), len(feed), err)
			}
			if resp.Header.Get("ETag") != "" {
				t.Error("a malformed answer carries the full answer's ETag")
			}
		}},
		{"huge header", "/a/", Behaviour{Kind: HugeHeader, Size: 100 << 10}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if len(resp.Header.Get("X-Politetest-Padding")) != 100<<10 || !bytes.Equal(body, normal) {
				t.Errorf("padding of %d bytes", len(resp.Header.Get("X-Politetest-Padding")))
			}
		}},
		{"redirect to", "/a/", Behaviour{Kind: RedirectTo, Location: "ftp://hostile.example/a/"}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 302 || resp.Header.Get("Location") != "ftp://hostile.example/a/" {
				t.Errorf("%d %q", resp.StatusCode, resp.Header.Get("Location"))
			}
		}},
		{"duplicate links", "/feed.xml", Behaviour{Kind: DuplicateLinks}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			for _, want := range []string{"https://hostile.example/a/</link>", "https://hostile.example/a/?utm_source=politetest&amp;utm_medium=feed</link>",
				"https://hostile.example/a/#comments</link>", "https://HOSTILE.EXAMPLE/a/</link>"} {
				if n := strings.Count(string(body), want); n != 1 {
					t.Errorf("%q %d times", want, n)
				}
			}
			if n := strings.Count(string(body), "<item>"); n != 8 {
				t.Errorf("%d items, want 2 articles × 4", n)
			}
		}},
		{"foreign links", "/feed.xml", Behaviour{Kind: ForeignLinks, Host: "elsewhere.example"}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			for _, want := range []string{"https://elsewhere.example/", "https://10.0.0.1/", "https://169.254.169.254/", "https://127.0.0.1/",
				"javascript:", "data:", "ftp://", "https://hostile.example/a/</link>", "https://hostile.example/b/</link>"} {
				if !strings.Contains(string(body), "<link>"+want) {
					t.Errorf("no link to %s", want)
				}
			}
		}},
		{"close connection", "/a/", Behaviour{Kind: CloseConnection}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if !resp.Close || !bytes.Equal(body, normal) {
				t.Errorf("Close %v, %d bytes", resp.Close, len(body))
			}
		}},
		{"retry-after text", "/a/", Behaviour{Kind: TooManyRequests, RetryAfterText: "soon"}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "soon" {
				t.Errorf("%d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.Misbehave(tc.path, tc.b)
			defer s.Misbehave(tc.path, Behaviour{})
			resp, body, err := raw(t, c, s.URL(tc.path))
			if resp == nil {
				t.Fatalf("no response: %v", err)
			}
			tc.check(t, resp, body, err)
		})
	}
}

// Endless streams until the client hangs up; the handler then returns.
func TestMisbehaviourEndless(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("endless.example")
	s.Misbehave("/a/", Behaviour{Kind: Endless})
	resp, err := w.Client().Get(s.URL("/a/"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.ContentLength != -1 {
		t.Errorf("Content-Length %d, want none", resp.ContentLength)
	}
	n, err := io.CopyN(io.Discard, resp.Body, 8<<20)
	if n != 8<<20 || err != nil {
		t.Errorf("read %d bytes: %v", n, err)
	}
	resp.Body.Close()
	w.Close() // returns once the handler has: it saw the hang-up
}

// EndlessPages: every page of the post list is the first, each naming a
// next one out of a million.
func TestMisbehaviourEndlessPages(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("pages.example")
	for range 3 {
		s.AddArticle(Article{})
	}
	s.Misbehave("/wp-json/wp/v2/posts", Behaviour{Kind: EndlessPages})
	var first []byte
	for page := 1; page <= 3; page++ {
		resp, body, err := raw(t, w.Client(), s.URL("/wp-json/wp/v2/posts?per_page=2&page="+string(rune('0'+page))))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("page %d: %v %v", page, resp, err)
		}
		var posts []map[string]any
		if err := json.Unmarshal(body, &posts); err != nil || len(posts) != 2 {
			t.Fatalf("page %d: %d posts, %v", page, len(posts), err)
		}
		if first == nil {
			first = body
		} else if !bytes.Equal(body, first) {
			t.Errorf("page %d differs from the first", page)
		}
		if resp.Header.Get("X-WP-TotalPages") != "1000000" || !strings.Contains(resp.Header.Get("Link"), "page="+string(rune('0'+page+1))) {
			t.Errorf("page %d: X-WP-TotalPages %q, Link %q", page, resp.Header.Get("X-WP-TotalPages"), resp.Header.Get("Link"))
		}
	}
}

// Reset over TLS is an RST the client reads as such; HangUp a clean end of
// the stream.
func TestResetAndHangUpOverTLS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the RST errno is checked on Linux only")
	}
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("drop.example")
	s.Misbehave("/reset", Behaviour{Kind: Reset})
	s.Misbehave("/hangup", Behaviour{Kind: HangUp})
	if _, _, err := raw(t, w.Client(), s.URL("/reset")); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("reset: %v, want ECONNRESET", err)
	}
	if _, _, err := raw(t, w.Client(), s.URL("/hangup")); !errors.Is(err, io.EOF) {
		t.Errorf("hang-up: %v, want EOF", err)
	}
}

// The hostile web: every trait on some site once there are as many rude
// sites as traits, the same seed building the same web, the helper sites
// built, and Readable set as documented.
func TestHostileScenario(t *testing.T) {
	t.Parallel()
	traits := HostileTraits()
	hosts := len(traits) // the fewest with as many rude sites as traits
	for int(0.8*float64(hosts)+0.5) < len(traits) {
		hosts++
	}
	w, info := NewScenarioWeb(t, Hostile(7, hosts))
	_, again := NewScenarioWeb(t, Hostile(7, hosts))
	if info.String() != again.String() {
		t.Fatal("same seed, different hostile webs")
	}
	shown := map[string]int{}
	for _, s := range info.Sites {
		if s.Rude {
			shown[s.Trait]++
		} else if !s.Readable {
			t.Errorf("%s: well-behaved but not readable", s.Name)
		}
	}
	for _, tr := range traits {
		if shown[tr] != 1 {
			t.Errorf("trait %s on %d sites, want 1", tr, shown[tr])
		}
	}
	for _, tr := range RudeTraits() {
		if _, ok := traitNamed(tr); !ok {
			t.Errorf("rude trait %s is not a hostile trait", tr)
		}
	}
	if len(info.Others) != 2 {
		t.Fatalf("others %v", info.Others)
	}
	if a, _ := w.LookupNetIP(context.Background(), "ip", "intranet.example"); len(a) != 1 || !a[0].IsPrivate() {
		t.Errorf("intranet.example resolves to %v", a)
	}
	byTrait := map[string]SiteInfo{}
	for _, s := range info.Sites {
		byTrait[s.Trait] = s
	}
	c := w.Client()
	for _, tc := range []struct {
		trait, path string
		status      int
		location    string
	}{
		{"articles-429", "/news/article-1/", 429, ""},
		{"redirect-to-private", "/news/article-2/", 302, "https://intranet.example/news/article-2/"},
		{"redirect-to-metadata", "/news/article-1/", 302, "https://169.254.169.254/latest/meta-data/"},
		{"robots-5xx", "/robots.txt", 503, ""},
		{"robots-redirect-loop", "/robots.txt", 302, "/robots.txt?loop=1"},
		{"crawl-delay-huge", "/news/article-1/", 200, ""},
	} {
		s := byTrait[tc.trait]
		resp, _, err := raw(t, c, w.URL(s.Name, tc.path))
		if err != nil || resp.StatusCode != tc.status || resp.Header.Get("Location") != tc.location {
			t.Errorf("%s %s: %v %v, want %d %q", tc.trait, tc.path, resp, err, tc.status, tc.location)
		}
	}
	if s := byTrait["crawl-delay-huge"]; s.CrawlDelay != 24*time.Hour || !strings.Contains(s.RobotsBody, "Crawl-delay: 86400") {
		t.Errorf("crawl-delay-huge: %v %q", s.CrawlDelay, s.RobotsBody)
	}
	if !byTrait["duplicate-links"].Readable || byTrait["gzip-bomb"].Readable {
		t.Error("Readable not as documented")
	}
}

func TestScenarioTraitsValidate(t *testing.T) {
	t.Parallel()
	for _, traits := range [][]string{{}, {"429", "no-such-trait"}} {
		err := Scenario{Hosts: 3, RudeShare: 1, Traits: traits}.Validate()
		var se *ScenarioError
		if !errors.As(err, &se) || se.Field != "Traits" || !errors.Is(err, ErrScenario) {
			t.Errorf("Traits %q: %v", traits, err)
		}
	}
	if err := (Scenario{Hosts: 3, Traits: []string{"hang-up"}}).Validate(); err != nil {
		t.Error(err)
	}
}

// Five robots.txt redirects in a row count as robots.txt unavailable
// (everything allowed, RFC 9309 §2.3.1.2); four do not.
func TestAuditRobotsRedirectsInARow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		follow int
		ok     bool
	}{{RobotsRedirects, true}, {RobotsRedirects - 1, false}} {
		w := NewWeb(t)
		s := w.Site("loop.example")
		s.AddArticle(Article{ID: 1, Path: "/a/"})
		s.Misbehave("/robots.txt", Behaviour{Kind: RedirectLoop})
		cl := newCareful(w, 0)
		for i := range tc.follow {
			target := "/robots.txt"
			if i%2 == 1 {
				target += "?loop=1"
			}
			cl.get(t, s.URL(target))
		}
		cl.get(t, s.URL("/a/"))
		rep := w.Audit(Policy{})
		if rep.OK() != tc.ok || (!tc.ok && rep.Count(RuleRobotsFirst) != 1) {
			t.Errorf("%d redirects followed: %v", tc.follow, rep)
		}
	}
}

// A client that hangs up on an answer it does not want (no close_notify, no
// reading to the end) is done with the request and the connection when the
// web's read meets its FIN or RST, though the handler goes on for a while:
// its next request, on a new connection, is neither a second request in
// flight nor a second connection.
func TestAuditHangUpEndsTheRequest(t *testing.T) {
	if !ExactStarts() {
		t.Skip("this machine does not stamp reads with the kernel's receive time (Linux only, and not every sandbox)")
	}
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("big.example")
	noticed, release := make(chan struct{}), make(chan struct{})
	s.Handle("/big", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Length", "100000000")
		rw.WriteHeader(http.StatusOK)
		rw.Write(bytes.Repeat([]byte("x"), 64<<10))
		http.NewResponseController(rw).Flush()
		<-r.Context().Done() // the web's read met the hang-up
		close(noticed)
		<-release // a handler slow to see its writes fail
	}))
	get := func(path string) net.Conn {
		conn, err := w.DialContext(context.Background(), "tcp", "big.example:80")
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: big.example\r\nUser-Agent: "+botUA+"\r\n\r\n")
		if _, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil {
			t.Fatal(err)
		}
		return conn
	}
	get("/big").Close() // unread bytes: the kernel sends an RST
	<-noticed
	get("/next").Close()
	close(release)
	w.Close()
	rep := w.Audit(Policy{Ignore: []Rule{RuleRobotsFirst}})
	if rep.Count(RuleInFlight) != 0 || rep.Count(RuleConnections) != 0 {
		t.Error(rep)
		for _, c := range w.Connections() {
			t.Logf("%+v", c)
		}
		for _, r := range w.Requests() {
			t.Logf("#%d %s start %v arrived %v finished %v", r.Seq, r.Target, r.Start.Format("05.000000"), r.Arrived.Format("05.000000"), r.Finished.Format("05.000000"))
		}
	}
}

// A connection the web ends after an answer (Connection: close) is closed
// when the answer finished: the client's next request, on a new connection
// as it must be, is not a second connection, however late net/http's
// goroutine gets round to the close (on a loaded machine, tens of
// milliseconds).
func TestAuditConnectionCloseEndsTheConnection(t *testing.T) {
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("closing.example")
	s.AddArticle(Article{ID: 1, Path: "/a/"})
	s.Misbehave("*", Behaviour{Kind: CloseConnection})
	cl := newCareful(w, 0)
	for _, p := range []string{"/robots.txt", "/a/", "/feed.xml"} {
		cl.get(t, "http://closing.example"+p) // no TLS goodbye to go by
	}
	rep := w.Audit(Policy{})
	if !rep.OK() {
		t.Error(rep)
	}
	if n := len(w.Connections()); n != 3 {
		t.Errorf("%d connections, want one per request", n)
	}
}

// fakePeer is a connection whose client has, or has not, closed it.
type fakePeer struct {
	net.Conn
	closed bool
}

func (f fakePeer) onHangUp(func(time.Time)) {}
func (f fakePeer) peerClosed() bool         { return f.closed }

// A host's new connection closes, as of its opening, the host's open
// connections whose client had closed them (their FIN or RST in the kernel)
// though the web had not read that yet; one still open stays open, and the
// connections rule sees it.
func TestNewConnectionClosesWhatTheClientClosed(t *testing.T) {
	t.Parallel()
	w := &Web{connByNC: map[net.Conn]*Conn{}}
	at := time.Now()
	closedByClient := &Conn{ID: 1, Opened: at, raw: fakePeer{closed: true}}
	seenLate := &Conn{ID: 5, Opened: at, raw: fakePeer{closed: true}} // the web's read met its hang-up after next opened
	seenLate.Closed = at.Add(3 * time.Millisecond)
	stillOpen := &Conn{ID: 2, Opened: at.Add(time.Millisecond), raw: fakePeer{}}
	next := &Conn{ID: 3, Opened: at.Add(2 * time.Millisecond)}
	w.setHost(closedByClient, "a.example")
	w.setHost(seenLate, "a.example")
	w.setHost(stillOpen, "b.example")
	w.setHost(&Conn{ID: 4, Opened: next.Opened}, "b.example")
	w.setHost(next, "a.example")
	if closedByClient.Closed.IsZero() || closedByClient.Closed.After(next.Opened) || !seenLate.Closed.Equal(next.Opened) || !stillOpen.Closed.IsZero() {
		t.Fatalf("closed at %v and %v (want by %v), still open closed at %v", closedByClient.Closed, seenLate.Closed, next.Opened, stillOpen.Closed)
	}
	rep := audit(Policy{}, nil, []Conn{*closedByClient, *seenLate, *stillOpen, *next, {ID: 4, Host: "b.example", Opened: next.Opened}})
	if rep.Count(RuleConnections) != 1 || rep.Violations[0].Host != "b.example" {
		t.Error(rep)
	}
}

// A client that read what it needed of a long robots.txt (RFC 9309 asks for
// the first 500 KiB) and hung up has had its answer, though the web's
// handler goes on for a while: its next request is not robots-first.
func TestAuditRobotsAnsweredAtTheHangUp(t *testing.T) {
	if !ExactStarts() {
		t.Skip("this machine does not stamp reads with the kernel's receive time (Linux only, and not every sandbox)")
	}
	t.Parallel()
	w := NewWeb(t)
	s := w.Site("long.example")
	noticed, release := make(chan struct{}), make(chan struct{})
	rules := "User-agent: *\nAllow: /\n"
	s.Handle("/robots.txt", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		rw.Header().Set("Content-Length", "3000000")
		rw.WriteHeader(http.StatusOK)
		io.WriteString(rw, rules+strings.Repeat("# padding\n", 60<<10))
		http.NewResponseController(rw).Flush()
		<-r.Context().Done()
		close(noticed)
		<-release
	}))
	dial := func(path string, read int64) {
		conn, err := w.DialContext(context.Background(), "tcp", "long.example:80")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: long.example\r\nUser-Agent: "+botUA+"\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.CopyN(io.Discard, resp.Body, read)
	}
	dial("/robots.txt", 500<<10) // then hangs up, bytes unread
	<-noticed
	dial("/a/", 1<<20)
	close(release)
	w.Close()
	if rep := w.Audit(Policy{}); !rep.OK() {
		t.Error(rep)
	}
}

// A host's idle connection whose close the web recorded a few milliseconds
// after the next connection opened (loopback packets taken in out of order
// on a loaded machine) was closed first; one that still carried a request
// after the opening, closed later than ConnReorder after it, or never
// closed was not (RuleConnections).
func TestConnectionsRule_CloseRecordedJustAfterTheNextOpening(t *testing.T) {
	t.Parallel()
	at := time.Now()
	opening := at.Add(100 * time.Millisecond)
	for _, c := range []struct {
		name        string
		closed      time.Time // zero: never
		lastRequest time.Time
		want        int
	}{
		{"idle, close recorded 5 ms late", opening.Add(5 * time.Millisecond), at.Add(50 * time.Millisecond), 0},
		{"idle, close recorded at ConnReorder", opening.Add(ConnReorder), at.Add(50 * time.Millisecond), 0},
		{"idle, close recorded past ConnReorder", opening.Add(ConnReorder + time.Millisecond), at.Add(50 * time.Millisecond), 1},
		{"a request after the next opening", opening.Add(5 * time.Millisecond), opening.Add(time.Millisecond), 1},
		{"never closed", time.Time{}, at.Add(50 * time.Millisecond), 1},
	} {
		conns := []Conn{
			{ID: 1, Host: "a.example", Opened: at, Closed: c.closed},
			{ID: 2, Host: "a.example", Opened: opening},
		}
		reqs := []Request{
			{Host: "a.example", Path: "/robots.txt", Conn: 1, Arrived: at.Add(time.Millisecond)},
			{Host: "a.example", Path: "/feed.xml", Conn: 1, Arrived: c.lastRequest},
			{Host: "a.example", Path: "/news/1/", Conn: 2, Arrived: opening.Add(100 * time.Millisecond)},
		}
		if got := audit(Policy{}, reqs, conns).Count(RuleConnections); got != c.want {
			t.Errorf("%s: %d connection violations, want %d", c.name, got, c.want)
		}
	}
}
