package main

// The crawlers under test. Each reads politecheck's variables: the seed
// list (POLITECHECK_SEEDS), the address every host is reached at
// (POLITECHECK_ADDR), and the CA (SSL_CERT_FILE, which Go's system pool
// reads on Linux; POLITECHECK_CA is read explicitly, so the trust does not
// depend on that).

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gocolly/colly/v2"
	_ "modernc.org/sqlite" // to read the store politecrawl leaves
)

// userAgent is the benchmark crawlers' identity.
const userAgent = "PolitecheckBench/1 (+https://politefetch.example/bench)"

func seeds() ([]string, error) {
	b, err := os.ReadFile(os.Getenv("POLITECHECK_SEEDS"))
	if err != nil {
		return nil, fmt.Errorf("POLITECHECK_SEEDS: %w", err)
	}
	return strings.Fields(string(b)), nil
}

// transport reaches every host at POLITECHECK_ADDR, one connection per
// host, HTTP/1.1.
func transport() (*http.Transport, error) {
	addr := os.Getenv("POLITECHECK_ADDR")
	if addr == "" {
		return nil, errors.New("POLITECHECK_ADDR is not set")
	}
	pem, err := os.ReadFile(os.Getenv("POLITECHECK_CA"))
	if err != nil {
		return nil, fmt.Errorf("POLITECHECK_CA: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, errors.New("POLITECHECK_CA holds no certificate")
	}
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig:     &tls.Config{RootCAs: roots},
		MaxConnsPerHost:     1,
		MaxIdleConnsPerHost: 1,
		MaxIdleConns:        10000,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}, nil
}

// runColly crawls with colly v2: polite, as politely as colly allows (one
// LimitRule per host, Parallelism 1, Delay 1 s, robots.txt obeyed, async),
// or with colly's defaults.
func runColly(polite bool) error {
	list, err := seeds()
	if err != nil {
		return err
	}
	tr, err := transport()
	if err != nil {
		return err
	}
	var c *colly.Collector
	if polite {
		c = colly.NewCollector(colly.Async(true), colly.UserAgent(userAgent))
		c.IgnoreRobotsTxt = false
		for _, s := range list {
			u, err := url.Parse(s)
			if err != nil {
				return err
			}
			if err := c.Limit(&colly.LimitRule{DomainGlob: u.Host, Parallelism: 1, Delay: time.Second}); err != nil {
				return err
			}
		}
	} else {
		c = colly.NewCollector()
	}
	c.WithTransport(tr)
	c.OnXML("//item/link", func(e *colly.XMLElement) {
		e.Request.Visit(strings.TrimSpace(e.Text))
	})
	for _, s := range list {
		c.Visit(s)
	}
	c.Wait()
	return nil
}

// runHand is a careful crawler written with net/http alone: per host,
// robots.txt first (its "*" group's Allow, Disallow and Crawl-delay), then
// the feed, then each allowed article, one request at a time, each written
// at least the interval (or the Crawl-delay) after the previous one was; a
// 429 or 503 ends the host's crawl, as does a 5xx or failed robots.txt.
func runHand(interval time.Duration) error {
	list, err := seeds()
	if err != nil {
		return err
	}
	tr, err := transport()
	if err != nil {
		return err
	}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error { return http.ErrUseLastResponse }}
	var wg sync.WaitGroup
	for _, s := range list {
		wg.Go(func() { handHost(client, s, interval) })
	}
	wg.Wait()
	return nil
}

// pacedHost sends one host's requests in order, each written at least the
// interval after the previous one was (httptrace's WroteRequest), so the
// gaps the server sees are never shorter than the interval.
type pacedHost struct {
	client   *http.Client
	interval time.Duration
	last     time.Time // when the previous request was written
}

// get fetches u and returns the status, up to 4 MiB of body and the
// Location header.
func (h *pacedHost) get(u string) (status int, body []byte, location string, err error) {
	if !h.last.IsZero() {
		time.Sleep(time.Until(h.last.Add(h.interval)))
	}
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return 0, nil, "", err
	}
	req.Header.Set("User-Agent", userAgent)
	h.last = time.Now()
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { h.last = time.Now() },
	}))
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, body, resp.Header.Get("Location"), err
}

func handHost(client *http.Client, seed string, interval time.Duration) {
	u, err := url.Parse(seed)
	if err != nil {
		return
	}
	h := &pacedHost{client: client, interval: interval}
	robotsURL := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}
	var rules robotsRules
	for hops := 0; ; hops++ {
		status, body, loc, err := h.get(robotsURL.String())
		if err != nil || status >= 500 {
			return // unreachable robots.txt: the site is off limits
		}
		if status >= 300 && status < 400 && loc != "" && hops < 5 {
			next, err := robotsURL.Parse(loc)
			if err != nil || next.Host != u.Host {
				return
			}
			robotsURL = next
			continue
		}
		if status == 200 {
			rules = parseRobots(body)
		}
		break
	}
	if rules.delay > h.interval {
		h.interval = rules.delay
	}
	if !rules.allowed(u.Path) {
		return
	}
	status, feed, _, err := h.get(seed)
	if err != nil || status != 200 {
		return
	}
	var rss struct {
		Items []struct {
			Link string `xml:"link"`
		} `xml:"channel>item"`
	}
	if xml.Unmarshal(feed, &rss) != nil {
		return
	}
	for _, it := range rss.Items {
		a, err := url.Parse(strings.TrimSpace(it.Link))
		if err != nil || a.Host != u.Host || !rules.allowed(a.Path) {
			continue
		}
		status, _, _, err := h.get(a.String())
		if err != nil || status == 429 || status == 503 || status == 403 {
			return
		}
	}
}

// robotsRules is the "*" group of a robots.txt: enough for the benchmark's
// webs (plain prefixes), not an RFC 9309 matcher.
type robotsRules struct {
	allow, disallow []string
	delay           time.Duration
}

func parseRobots(b []byte) robotsRules {
	var r robotsRules
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	inStar := false
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch k {
		case "user-agent":
			inStar = v == "*"
		case "allow":
			if inStar && v != "" {
				r.allow = append(r.allow, v)
			}
		case "disallow":
			if inStar && v != "" {
				r.disallow = append(r.disallow, v)
			}
		case "crawl-delay":
			if inStar {
				if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
					r.delay = time.Duration(f * float64(time.Second))
				}
			}
		}
	}
	return r
}

// allowed applies the longest matching prefix, Allow winning ties.
func (r robotsRules) allowed(path string) bool {
	best, ok := -1, true
	for _, p := range r.allow {
		if strings.HasPrefix(path, p) && len(p) >= best {
			best, ok = len(p), true
		}
	}
	for _, p := range r.disallow {
		if strings.HasPrefix(path, p) && len(p) > best {
			best, ok = len(p), false
		}
	}
	return ok
}

// execOurs writes a politecrawl configuration for the seed list (the strict
// news preset, 1 s per host, every article read in full; with images, each
// story's share image checked too, S7, else none read, so that it reads the
// pages the other crawlers read) and replaces this process with politecrawl
// crawl -once, so that politecheck measures politecrawl's own process.
func execOurs(politecrawl string, images bool) error {
	list, err := seeds()
	if err != nil {
		return err
	}
	dir := filepath.Dir(os.Getenv("POLITECHECK_SEEDS"))
	var b strings.Builder
	b.WriteString("crawler:\n  name: PolitecheckBench\n  version: \"1\"\n  info_url: https://politefetch.example/bench\n  contact: \"\"\n")
	b.WriteString("policy:\n  preset: strict-news\n  interval: 1s\n  robots_ttl: 1h\n")
	if !images {
		b.WriteString("crawl:\n  share_images: skip\n")
	}
	b.WriteString("sources:\n")
	for i, s := range list {
		u, err := url.Parse(s)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "  - id: src-%d\n    name: Source %d\n    category: World\n    trigger:\n      feeds: [%s]\n"+
			"    admitted: [%s]\n    full_text: true\n    read:\n      method: page\n    active: true\n", i+1, i+1, s, u.Hostname())
	}
	cfg := filepath.Join(dir, "politecrawl.yaml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		return err
	}
	store := os.Getenv("POLITECHECK_BENCH_STORE")
	if store == "" {
		store = filepath.Join(dir, "politecrawl.db")
	}
	args := []string{politecrawl, "crawl", "-config", cfg, "-store", store, "-once",
		"-live", "off", "-log-level", "warn",
		"-connect-to", os.Getenv("POLITECHECK_ADDR"), "-ca", os.Getenv("POLITECHECK_CA"), "-admit-private", "127.0.0.0/8"}
	out := os.Getenv("POLITECHECK_BENCH_IO")
	if out == "" {
		return syscall.Exec(politecrawl, args, os.Environ())
	}
	return runMeasured(args, out)
}

// ioStats is what the table shows of politecrawl's writes: the bytes it
// caused to be written to the storage layer (its rusage's output blocks,
// the write_bytes of /proc/PID/io, 512-byte units), which runMeasured
// writes, and, read from the store once politecheck is done (readStore),
// the store's files as politecrawl left them and the deposits in it.
type ioStats struct {
	WriteBytes int64 `json:"write_bytes"`
	StoreBytes int64 `json:"store_bytes"` // the file, its -wal and -shm
	WALBytes   int64 `json:"wal_bytes"`
	Deposits   int64 `json:"deposits"`
	// DepositBytes is what the deposits hold: each one's envelope (the
	// bytes read, with their headers and proof) and its JSON columns.
	DepositBytes int64 `json:"deposit_bytes"`
}

// readStore fills in the store's sizes and its deposits. It runs after
// politecheck has measured the crawl (POLITECHECK_BENCH_STORE names a store
// that outlives politecheck's own directory), so that the crawler's wall
// time holds none of it.
func (st *ioStats) readStore(store string) error {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(store + suffix); err == nil {
			st.StoreBytes += fi.Size()
			if suffix == "-wal" {
				st.WALBytes = fi.Size()
			}
		}
	}
	var err error
	if st.Deposits, st.DepositBytes, err = deposited(store); err != nil {
		return fmt.Errorf("reading the store: %w", err)
	}
	return nil
}

// deposited counts the deposits in the store and the bytes they hold.
func deposited(store string) (n, size int64, err error) {
	db, err := sql.Open("sqlite", "file:"+store+"?mode=ro")
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	// Stores of schema 9 keep each certificate chain once, outside the
	// proof; their deposit_proof view gives each proof whole, so a deposit
	// is counted at its full size whatever the store shares. Older stores
	// (a -repo of an older tree) keep their proofs whole.
	const sizes = `SELECT count(*), coalesce(sum(coalesce(e.length, 0) + coalesce(length(PROOF), 0) + coalesce(length(d.article), 0)
		+ coalesce(length(d.excerpt), 0) + coalesce(length(d.image), 0)), 0) FROM deposit d LEFT JOIN envelope e ON e.id = d.envelope_id`
	err = db.QueryRow(strings.Replace(sizes, "PROOF", "(SELECT p.proof FROM deposit_proof p WHERE p.deposit_id = d.id)", 1)).Scan(&n, &size)
	if err != nil && strings.Contains(err.Error(), "no such table: deposit_proof") {
		err = db.QueryRow(strings.Replace(sizes, "PROOF", "d.proof", 1)).Scan(&n, &size)
	}
	return n, size, err
}

// runMeasured runs politecrawl as a child (so that its rusage can be read
// after it ends: exec would leave nothing to read it), forwarding the
// interrupt politecheck sends at its timeout, and writes the bytes it
// wrote (ioStats.WriteBytes) to out. politecheck's figures for this
// process are the child's too: a process's rusage at wait includes the
// children it waited for, and this wrapper itself only waits.
func runMeasured(args []string, out string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		for s := range sig {
			cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	st := ioStats{}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		st.WriteBytes = int64(ru.Oublock) * 512
	}
	b, jerr := json.Marshal(st)
	if jerr == nil {
		jerr = os.WriteFile(out, b, 0o600)
	}
	if jerr != nil {
		return jerr
	}
	if ee, ok := err.(*exec.ExitError); ok {
		os.Exit(ee.ExitCode())
	}
	return err
}
