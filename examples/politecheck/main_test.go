package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// The test binary doubles as the crawlers politecheck judges: run with
// POLITECHECK_TEST_CRAWLER set, it is that crawler and nothing else.
func TestMain(m *testing.M) {
	switch mode := os.Getenv("POLITECHECK_TEST_CRAWLER"); mode {
	case "":
		os.Exit(m.Run())
	case "rude":
		os.Exit(rudeCrawler())
	case "polite":
		os.Exit(politeCrawler())
	default:
		fmt.Fprintln(os.Stderr, "unknown POLITECHECK_TEST_CRAWLER", mode)
		os.Exit(2)
	}
}

// webClient is a client that reaches the web the way politecheck tells a
// crawler to: every host at POLITECHECK_ADDR, trusting SSL_CERT_FILE (Go's
// system pool reads it on Linux; POLITECHECK_CA is read explicitly so the
// test does not depend on that).
func webClient() (*http.Client, error) {
	c, err := webClientFor(os.Getenv("POLITECHECK_ADDR"), os.Getenv("POLITECHECK_CA"))
	if err == nil && os.Getenv("POLITECHECK_TEST_VIA_PROXY") != "" {
		// Through HTTPS_PROXY, as a crawler that cannot be told where to
		// connect would go.
		tr := c.Transport.(*http.Transport)
		tr.DialContext, tr.Proxy = nil, http.ProxyFromEnvironment
	}
	return c, err
}

func webClientFor(addr, caFile string) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, errors.New("no CA in POLITECHECK_CA")
	}
	var d net.Dialer
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2: false,
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}, nil
}

func seedURLs() ([]string, error) {
	b, err := os.ReadFile(os.Getenv("POLITECHECK_SEEDS"))
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

var linkRE = regexp.MustCompile(`<link>([^<]+/news/[^<]+)</link>`)

// rudeCrawler fetches every feed and every article at once, with Go's
// default User-Agent, never asking for robots.txt.
func rudeCrawler() int {
	c, err := webClient()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = 100
	seeds, err := seedURLs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var wg sync.WaitGroup
	for _, s := range seeds {
		wg.Go(func() {
			resp, err := c.Get(s)
			if err != nil {
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, m := range linkRE.FindAllStringSubmatch(string(body), -1) {
				wg.Go(func() {
					if resp, err := c.Get(m[1]); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				})
			}
		})
	}
	wg.Wait()
	return 0
}

// politeCrawler reads robots.txt, then the feed, then each article, one
// request at a time per host, POLITECHECK_TEST_INTERVAL apart, with its own
// name. (The test's webs allow everything, so it does not parse robots.txt.)
func politeCrawler() int {
	c, err := webClient()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	interval, err := time.ParseDuration(os.Getenv("POLITECHECK_TEST_INTERVAL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	seeds, err := seedURLs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	get := func(u string) string {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("User-Agent", "PoliteTestBot/1 (+https://politefetch.example/bot)")
		resp, err := c.Do(req)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return string(b)
	}
	var wg sync.WaitGroup
	for _, s := range seeds {
		wg.Go(func() {
			base := s[:strings.Index(s[len("https://"):], "/")+len("https://")]
			urls := []string{base + "/robots.txt", s}
			for i := 0; i < len(urls); i++ {
				if i > 0 {
					time.Sleep(interval)
				}
				body := get(urls[i])
				if urls[i] == s {
					for _, m := range linkRE.FindAllStringSubmatch(body, -1) {
						urls = append(urls, strings.Replace(m[1], "https://", s[:strings.Index(s, "://")+3], 1))
					}
				}
			}
		})
	}
	wg.Wait()
	return 0
}

// self is a command running this test binary as the named crawler.
func self(t *testing.T, mode string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"env", "POLITECHECK_TEST_CRAWLER=" + mode, "POLITECHECK_TEST_INTERVAL=150ms", exe}
}

type result struct {
	code   int
	err    error
	rep    report
	stdout string
	stderr string
}

// check runs politecheck with -json and decodes its report.
func check(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, err := run(ctx, append([]string{"-json", "-q"}, args...), &out, &errOut)
	r := result{code: code, err: err, stdout: out.String(), stderr: errOut.String()}
	if err == nil {
		if jerr := json.Unmarshal(out.Bytes(), &r.rep); jerr != nil {
			t.Fatalf("report is not JSON: %v\n%s", jerr, out.String())
		}
	}
	return r
}

// politecrawl builds this repository's CLI.
func politecrawl(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "politecrawl")
	cmd := exec.Command("go", "build", "-o", bin, "../politecrawl")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ../politecrawl: %v\n%s", err, out)
	}
	return bin
}

// crawlConfig is a politecrawl configuration reading every site of a
// politecheck web of n hosts in full, under the strict news preset (1 s per
// host).
func crawlConfig(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("crawler:\n  name: PolitecheckBot\n  version: \"1\"\n  info_url: https://politefetch.example/bot\n  contact: \"\"\n")
	b.WriteString("policy:\n  preset: strict-news\n  interval: 1s\n  robots_ttl: 1h\n")
	b.WriteString("sources:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - id: news-%d\n    name: News %d\n    category: World\n    trigger:\n      feeds: [https://news-%d.example/feed.xml]\n"+
			"    admitted: [news-%d.example]\n    full_text: true\n    read:\n      method: page\n    active: true\n", i, i, i, i)
	}
	path := filepath.Join(t.TempDir(), "check.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// politecheck certifies our crawler: politecrawl crawl -once, built from
// this repository, reads every article of the web with no violation of one
// request per second per host, robots.txt first (the strict reading of its
// 4xx), one connection per host, HTTPS only and its declared User-Agent
// (P1, S2, S3, D2, V9, V11).
func TestCertifiesPolitecrawl_P1(t *testing.T) {
	t.Parallel()
	bin := politecrawl(t)
	cfg := crawlConfig(t, 2)
	store := filepath.Join(t.TempDir(), "crawl.db")
	r := check(t, "-hosts", "2", "-articles", "2", "-latency", "5ms-20ms", "-strict-robots", "-https-only",
		"-user-agent", `^PolitecheckBot/1 \(\+https://politefetch\.example/bot\)$`,
		"--", bin, "crawl", "-config", cfg, "-store", store, "-once", "-live", "off",
		"-connect-to", "{addr}", "-ca", "{ca}", "-admit-private", "127.0.0.0/8")
	if r.err != nil || r.code != exitOK {
		t.Fatalf("exit %d, %v; report:\n%s\n%s", r.code, r.err, r.stdout, r.stderr)
	}
	rep := r.rep
	if !rep.OK || rep.Violations != 0 || rep.Crawler == nil || rep.Crawler.ExitCode != 0 {
		t.Errorf("not certified:\n%s", r.stdout)
	}
	if rep.Pages.Expected != 4 || rep.Pages.Fetched != 4 || rep.Pages.Missing != 0 {
		t.Errorf("pages %+v, want all 4 fetched", rep.Pages)
	}
	if rep.Duplicates != 0 {
		t.Errorf("%d duplicates: %v", rep.Duplicates, rep.DuplicateExamples)
	}
	// robots.txt, the feed and two articles a second apart: 3 s at least.
	if rep.IdealSeconds != 3 || rep.WallSeconds < 3 {
		t.Errorf("ideal %v s, wall %v s; want 3 s and at least that", rep.IdealSeconds, rep.WallSeconds)
	}
	if rep.Crawler.CPUSeconds <= 0 {
		t.Errorf("CPU %v s: the process's usage was not read", rep.Crawler.CPUSeconds)
	}
	if rep.Crawler.PeakRSSBytes <= 0 && peakRSSKnown {
		t.Errorf("peak RSS %d: not read", rep.Crawler.PeakRSSBytes)
	}
}

// A crawler that fetches everything at once with Go's default User-Agent
// and never reads robots.txt is flagged on every count, and politecheck
// exits 1.
func TestFlagsRudeCrawler(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "requests.jsonl")
	r := check(t, append([]string{"-hosts", "3", "-articles", "4", "-latency", "20ms", "-requests", log, "--"}, self(t, "rude")...)...)
	if r.err != nil || r.code != exitViolation {
		t.Fatalf("exit %d, %v; want %d\n%s", r.code, r.err, exitViolation, r.stdout)
	}
	for _, rule := range []string{"robots-first", "interval", "in-flight", "connections", "user-agent"} {
		if r.rep.ByRule[rule] == 0 || len(r.rep.Examples[rule]) == 0 {
			t.Errorf("no %s violation reported; by rule %v", rule, r.rep.ByRule)
		}
	}
	if r.rep.Pages.Fetched != 12 {
		t.Errorf("%d pages fetched, want the 12 it grabbed", r.rep.Pages.Fetched)
	}
	if b, err := os.ReadFile(log); err != nil || bytes.Count(b, []byte("\n")) != r.rep.Requests || !bytes.Contains(b, []byte(`"user_agent":"Go-http-client/1.1"`)) {
		t.Errorf("-requests: %v; want %d lines naming Go's User-Agent:\n%s", err, r.rep.Requests, b)
	}
	if r.rep.Crawler.ExitCode != 0 || r.rep.OK {
		t.Errorf("crawler exit %d, ok %v", r.rep.Crawler.ExitCode, r.rep.OK)
	}
}

// A careful crawler other than ours passes too, over HTTPS and over plain
// HTTP through the relay, at the policy it keeps (150 ms here, so that the
// test is short), and fails at a policy stricter than it keeps.
func TestCertifiesOtherCrawler(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scheme, interval string
		proxy            bool
		code             int
	}{
		{"https", "100ms", false, exitOK},
		{"http", "100ms", false, exitOK},
		{"https", "100ms", true, exitOK},
		{"https", "1s", false, exitViolation},
	} {
		t.Run(fmt.Sprintf("%s-%s-proxy=%v", tc.scheme, tc.interval, tc.proxy), func(t *testing.T) {
			t.Parallel()
			args := []string{"-scheme", tc.scheme, "-interval", tc.interval, "-hosts", "3", "-articles", "2", "-latency", "0-10ms"}
			if tc.scheme == "http" || tc.proxy {
				args = append(args, "-slack", "20ms") // the relay's or the proxy's scheduling
			}
			cmd := self(t, "polite")
			if tc.proxy {
				args = append(args, "-proxy")
				cmd = append([]string{cmd[0], "POLITECHECK_TEST_VIA_PROXY=1"}, cmd[1:]...)
			}
			r := check(t, append(append(args, "--"), cmd...)...)
			if r.err != nil || r.code != tc.code {
				t.Fatalf("exit %d, %v; want %d\n%s", r.code, r.err, tc.code, r.stdout)
			}
			if tc.code == exitOK && (r.rep.Pages.Fetched != 6 || r.rep.Requests != 12) {
				t.Errorf("pages %+v, %d requests; want 6 and 12", r.rep.Pages, r.rep.Requests)
			}
			if tc.code == exitViolation && r.rep.ByRule["interval"] == 0 {
				t.Errorf("by rule %v, want interval", r.rep.ByRule)
			}
		})
	}
}

// A crawler that exits non-zero, or outlives -timeout, is not certified
// even when polite (exit 3); a command that cannot start is politecheck's
// own failure (exit 2); a crawler that exits 0 having read nothing is not
// certified (exit 4, the missing pages named).
func TestCrawlerFailure(t *testing.T) {
	t.Parallel()
	if r := check(t, "-hosts", "2", "--", "true"); r.code != exitIncomplete || r.rep.OK || r.rep.Pages.Missing != r.rep.Pages.Expected || r.rep.Pages.Expected == 0 {
		t.Errorf("politecheck -- true: exit %d, report %+v; want %d, not OK, every page missing", r.code, r.rep.Pages, exitIncomplete)
	}
	var text bytes.Buffer
	if code, _ := run(context.Background(), []string{"-q", "-hosts", "1", "--", "true"}, &text, io.Discard); code != exitIncomplete ||
		!strings.Contains(text.String(), "politecheck: INCOMPLETE: ") {
		t.Errorf("politecheck -- true: exit %d, want %d and a verdict saying so:\n%s", code, exitIncomplete, text.String())
	}
	if r := check(t, "-hosts", "1", "--", "sh", "-c", "exit 4"); r.code != exitCrawler || r.rep.Crawler.ExitCode != 4 {
		t.Errorf("exit %d (crawler %+v), want %d", r.code, r.rep.Crawler, exitCrawler)
	}
	r := check(t, "-hosts", "1", "-timeout", "200ms", "--", "sleep", "30")
	if r.code != exitCrawler || !r.rep.Crawler.TimedOut {
		t.Errorf("exit %d (crawler %+v), want %d and timed out", r.code, r.rep.Crawler, exitCrawler)
	}
	if r := check(t, "-hosts", "1", "--", filepath.Join(t.TempDir(), "no-such-crawler")); r.code != exitUsage || r.err == nil {
		t.Errorf("exit %d, %v; want %d and an error", r.code, r.err, exitUsage)
	}
}

// The placeholders reach the command's arguments, and the variables its
// environment.
func TestPlaceholdersAndEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "seen")
	script := `printf '%s|%s|%s\n' "$1" "$POLITECHECK_ADDR" "$SSL_CERT_FILE" > ` + out + `; cat "$POLITECHECK_SEEDS" >> ` + out
	r := check(t, "-hosts", "2", "-dir", dir, "-requests", filepath.Join(dir, "requests.jsonl"), "--", "sh", "-c", script, "sh", "{addr} {seeds} {ca}")
	if r.code != exitIncomplete { // the script reads nothing

		t.Fatalf("exit %d, %v\n%s", r.code, r.err, r.stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	parts := strings.Split(lines[0], "|")
	args := strings.Fields(parts[0])
	ca := filepath.Join(dir, "ca.pem")
	if len(args) != 3 || args[0] != parts[1] || args[1] != filepath.Join(dir, "seeds.txt") || args[2] != ca || parts[2] != ca {
		t.Errorf("placeholders and variables disagree: %q", lines[0])
	}
	if _, err := net.ResolveTCPAddr("tcp", parts[1]); err != nil || !strings.HasPrefix(parts[1], "127.") {
		t.Errorf("POLITECHECK_ADDR %q is not a loopback ip:port", parts[1])
	}
	if want := []string{"https://news-1.example/feed.xml", "https://news-2.example/feed.xml"}; strings.Join(lines[1:], " ") != strings.Join(want, " ") {
		t.Errorf("seeds %q, want %q", lines[1:], want)
	}
	if _, err := os.Stat(ca); err != nil {
		t.Errorf("-dir: the CA file was not kept: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "requests.jsonl")); err != nil || len(b) != 0 {
		t.Errorf("-requests: %q, %v; want an empty file (no request was made)", b, err)
	}
}

// -serve prints the variables, keeps the web up for a crawler driven by
// hand, and prints the audit when it ends.
func TestServe(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code, _ := run(ctx, []string{"-serve", "-hosts", "2", "-latency", "0"}, pw, io.Discard)
		pw.Close()
		done <- code
	}()
	sc := bufio.NewScanner(pr)
	vars := map[string]string{}
	for len(vars) < 4 && sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "="); ok {
			vars[k] = strings.Trim(v, "'")
		}
	}
	// A request by hand, as a person would make with curl: Go's default
	// User-Agent, no robots.txt first.
	c, err := webClientFor(vars["POLITECHECK_ADDR"], vars["POLITECHECK_CA"])
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get("https://news-2.example/feed.xml")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	if code := <-done; code != exitViolation {
		t.Errorf("exit %d, want %d", code, exitViolation)
	}
	if !strings.Contains(rest.String(), "politecheck: IMPOLITE: 2 violations, 1 requests to 1 hosts") {
		t.Errorf("no audit after the web closed:\n%s", rest.String())
	}
	if len(vars) != 4 || vars["POLITECHECK_CA"] != vars["SSL_CERT_FILE"] {
		t.Errorf("variables %v", vars)
	}
}

// The proxy tunnels CONNECT to a site, answers 404 for a name that is not
// one, and 405 for anything but CONNECT.
func TestProxyAnswers(t *testing.T) {
	t.Parallel()
	e, err := startEnv(&config{sc: politeScenario(1), scheme: "https", proxy: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	for _, tc := range []struct{ req, want string }{
		{"CONNECT news-1.example:443 HTTP/1.1\r\nHost: news-1.example:443\r\n\r\n", "HTTP/1.1 200 "},
		{"CONNECT elsewhere.example:443 HTTP/1.1\r\nHost: elsewhere.example:443\r\n\r\n", "HTTP/1.1 404 "},
		{"GET http://news-1.example/ HTTP/1.1\r\nHost: news-1.example\r\n\r\n", "HTTP/1.1 405 "},
	} {
		c, err := net.Dial("tcp", strings.TrimPrefix(e.proxyURL(), "http://"))
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, tc.req)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.HasPrefix(line, tc.want) {
			t.Errorf("%q: answered %q, %v; want %q", tc.req, line, err, tc.want)
		}
	}
}

func politeScenario(hosts int) politetest.Scenario { return politetest.Scenario{Hosts: hosts, Seed: 1} }

func TestFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no crawler command"},
		{[]string{"-serve", "--", "curl"}, "-serve takes no crawler command"},
		{[]string{"-hosts", "0", "--", "x"}, "Hosts"},
		{[]string{"-rude", "2", "--", "x"}, "RudeShare"},
		{[]string{"-latency", "fast", "--", "x"}, "-latency"},
		{[]string{"-latency", "200ms-20ms", "--", "x"}, "Latency"},
		{[]string{"-scheme", "ftp", "--", "x"}, "-scheme"},
		{[]string{"-max-conns", "0", "--", "x"}, "-max-conns"},
		{[]string{"-user-agent", "(", "--", "x"}, "-user-agent"},
		{[]string{"-proxy", "-scheme", "http", "--", "x"}, "-proxy"},
	} {
		code, err := run(context.Background(), tc.args, io.Discard, io.Discard)
		if code != exitUsage || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %d, %v; want %d and an error containing %q", tc.args, code, err, exitUsage, tc.want)
		}
	}
	for args, rude := range map[string]float64{"-hostile": 0.8, "-hostile -rude 0.5": 0.5} {
		cfg, err := parseFlags(append(strings.Fields(args), "--", "x"), io.Discard)
		if err != nil || cfg.sc.RudeShare != rude || !slices.Equal(cfg.sc.Traits, politetest.HostileTraits()) {
			t.Errorf("%s: %v, rude %v, traits %v; want rude %v and every hostile trait", args, err, cfg.sc.RudeShare, cfg.sc.Traits, rude)
		}
	}
	if code, err := run(context.Background(), []string{"-h"}, io.Discard, io.Discard); code != exitUsage || !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %d, %v", code, err)
	}
}
