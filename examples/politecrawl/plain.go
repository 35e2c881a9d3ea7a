package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// plainUA is the identity of the plain demo client.
const plainUA = "PoliteDemo/1.0 (+https://politefetch.example/demo)"

// plainPolicy is what the auditor checks of the plain client: robots.txt
// first and obeyed, the interval, one request in flight and one connection
// per site, exactly three headers, its User-Agent.
func plainPolicy(interval time.Duration) politetest.Policy {
	return politetest.Policy{
		Interval:       interval,
		AllowedHeaders: []string{"User-Agent", "Accept", "Accept-Encoding"},
		UserAgent:      regexp.MustCompile("^" + regexp.QuoteMeta(plainUA) + "$"),
	}
}

// plainCrawl makes one polite request per site with a plain net/http client
// over the web's transport: robots.txt first (following up to five
// redirects), then, if robots.txt answered and allows it, the feed, at
// least interval after the previous answer. Sites are crawled in parallel,
// each sequentially. It prints one line per site, in the scenario's order,
// and returns the auditor's report.
func plainCrawl(ctx context.Context, web *politetest.Web, info *politetest.ScenarioInfo, interval time.Duration, out io.Writer) (*politetest.Report, error) {
	if interval <= 0 {
		interval = 50 * time.Millisecond
	}
	tr := web.Transport()
	tr.MaxConnsPerHost = 1
	tr.DisableCompression = true
	client := &http.Client{
		Transport:     tr,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	lines := make([]string, len(info.Sites))
	var wg sync.WaitGroup
	for i, s := range info.Sites {
		wg.Go(func() { lines[i] = plainSite(ctx, client, s.Name, interval) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
	return web.Audit(plainPolicy(interval)), nil
}

// plainSite reads one site's robots.txt, then its feed, and describes what
// happened on one line.
func plainSite(ctx context.Context, c *http.Client, site string, interval time.Duration) string {
	var last time.Time
	get := func(path string) (*http.Response, []byte, error) {
		if !last.IsZero() {
			t := time.NewTimer(time.Until(last.Add(interval)))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, nil, ctx.Err()
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+site+path, nil)
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("User-Agent", plainUA)
		req.Header.Set("Accept", "*/*")
		req.Header.Set("Accept-Encoding", "identity")
		resp, err := c.Do(req)
		if err != nil {
			last = time.Now()
			return nil, nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		last = time.Now()
		return resp, body, err
	}

	path := "/robots.txt"
	var resp *http.Response
	var body []byte
	var err error
	for hop := 0; ; hop++ {
		resp, body, err = get(path)
		if err != nil {
			return fmt.Sprintf("%-20s robots.txt: %v: site skipped", site, err)
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode >= 400 || loc == "" || hop == 5 || !strings.HasPrefix(loc, "/") {
			break
		}
		path = loc
	}
	delay := time.Duration(0)
	switch {
	case resp.StatusCode >= 500 || (resp.StatusCode >= 300 && resp.StatusCode < 400):
		return fmt.Sprintf("%-20s robots.txt %d: site off limits", site, resp.StatusCode)
	case resp.StatusCode >= 400:
		// RFC 9309: a 4xx robots.txt means no rules.
	default:
		var allowed bool
		allowed, delay = plainRobots(string(body), "PoliteDemo", "/feed.xml")
		if !allowed {
			return fmt.Sprintf("%-20s robots.txt %d: /feed.xml disallowed", site, resp.StatusCode)
		}
	}
	if delay > interval {
		interval = delay
	}
	robots := resp.StatusCode
	resp, body, err = get("/feed.xml")
	if err != nil {
		return fmt.Sprintf("%-20s robots.txt %d, feed: %v", site, robots, err)
	}
	note := fmt.Sprintf("%d items", strings.Count(string(body), "<item>"))
	switch {
	case resp.Header.Get("cf-mitigated") == "challenge":
		note = "challenge page: leave the site alone"
	case resp.StatusCode == 429 || resp.StatusCode == 503:
		note = "refused, Retry-After " + strconv.Quote(resp.Header.Get("Retry-After")) + ": leave the site alone until then"
	case resp.StatusCode != 200:
		note = "refused"
	}
	return fmt.Sprintf("%-20s robots.txt %d, feed %d: %s", site, robots, resp.StatusCode, note)
}

// plainRobots is a minimal robots.txt reading for the plain client: the
// group for agent, else "*"; longest matching Allow/Disallow prefix (no
// wildcards); Crawl-delay in seconds. The fetch chain uses the real parser.
func plainRobots(body, agent, path string) (bool, time.Duration) {
	type group struct {
		agents []string
		rules  [][2]string
		delay  time.Duration
	}
	var groups []*group
	var cur *group
	agentsOpen := false
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch k {
		case "user-agent":
			if !agentsOpen {
				cur = &group{}
				groups = append(groups, cur)
			}
			cur.agents = append(cur.agents, strings.ToLower(v))
			agentsOpen = true
		case "allow", "disallow", "crawl-delay":
			agentsOpen = false
			if cur == nil {
				continue
			}
			if k == "crawl-delay" {
				if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 86400 {
					cur.delay = time.Duration(s * float64(time.Second))
				}
			} else if v != "" {
				cur.rules = append(cur.rules, [2]string{k, v})
			}
		}
	}
	pick := func(name string) []*group {
		var out []*group
		for _, g := range groups {
			for _, a := range g.agents {
				if a == name {
					out = append(out, g)
					break
				}
			}
		}
		return out
	}
	gs := pick(strings.ToLower(agent))
	if len(gs) == 0 {
		gs = pick("*")
	}
	allowed, best := true, -1
	var delay time.Duration
	for _, g := range gs {
		delay = max(delay, g.delay)
		for _, r := range g.rules {
			if strings.HasPrefix(path, r[1]) && (len(r[1]) > best || (len(r[1]) == best && r[0] == "allow")) {
				allowed, best = r[0] == "allow", len(r[1])
			}
		}
	}
	return allowed, delay
}
