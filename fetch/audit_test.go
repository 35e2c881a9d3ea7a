package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// buildWeb makes hosts sites of pages articles each. Every tenth site disallows a
// section and sets a short Crawl-delay; when rude is set, every tenth site (offset)
// answers one article with a 429 and Retry-After, and another with a challenge
// page. It returns the article URLs page-major, so that concurrent workers spread
// over the hosts.
func buildWeb(web *politetest.Web, hosts, pages int, rude bool) []string {
	var urls []string
	paths := make([][]string, hosts)
	for h := range hosts {
		s := web.Site(fmt.Sprintf("news-%d.example", h+1))
		for range pages {
			a := s.AddArticle(politetest.Article{})
			paths[h] = append(paths[h], s.URL(a.Path))
		}
		switch {
		case h%10 == 3:
			s.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /2026/01/01/\nCrawl-delay: 0.03\n"})
		case rude && h%10 == 5:
			s.Misbehave(s.Articles()[2].Path, politetest.Behaviour{Kind: politetest.TooManyRequests, RetryAfter: 2 * time.Second})
		case rude && h%10 == 7:
			// The challenge announces its own cool-down too: the vault preset
			// honours a refusal's Retry-After and has no back-off of its own
			// (V12), so the auditor holds it to the announced 2 s (the strict
			// and digest presets back off longer than the auditor's 5 min).
			s.Misbehave(s.Articles()[4].Path, politetest.Behaviour{Kind: politetest.Challenge, RetryAfter: 2 * time.Second})
		}
	}
	for p := range pages {
		for h := range hosts {
			urls = append(urls, paths[h][p])
		}
	}
	return urls
}

// crawl fetches urls with workers goroutines sharing c, and counts outcomes. Any
// error other than our own refusal fails the test.
func crawl(t *testing.T, c *Client, urls []string, workers int) (ok, refused int) {
	t.Helper()
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range work {
				res, err := c.Get(context.Background(), u)
				var re *RefusedError
				mu.Lock()
				switch {
				case errors.As(err, &re):
					refused++
				case err != nil:
					t.Errorf("%s: %v", u, err)
				case res.Status == http.StatusOK:
					ok++
				}
				mu.Unlock()
			}
		}()
	}
	for _, u := range urls {
		work <- u
	}
	close(work)
	wg.Wait()
	return ok, refused
}

// TestAudit_P1_200Hosts64Goroutines drives 200 hosts × 10 pages with 64 goroutines
// sharing one Client, under each preset (with auditInterval so it runs in
// seconds), and asks the politetest auditor: zero violations of interval,
// Crawl-delay, in-flight, connections, robots-first, disallowed, cool-down, header,
// cookie and User-Agent rules (P1, D2, S2, V7, V9, S3, S4, D5).
func TestAudit_P1_200Hosts64Goroutines(t *testing.T) {
	presets := []struct {
		name string
		p    Policy
		rude bool
	}{
		{"strict", StrictNews(), true},
		{"digest", Digest(), true},
		{"vault", Vault(), true}, // no back-off of its own, but a server's Retry-After honoured (V12)
	}
	for _, tc := range presets {
		// One preset at a time: three 64-goroutine crawls at once starve the web's
		// handlers on two cores, and its arrival stamps then lag the client's writes
		// by more than the auditor's slack.
		t.Run(tc.name, func(t *testing.T) {
			web := politetest.NewWeb(t)
			urls := buildWeb(web, 200, 10, tc.rude)
			p := testPolicy(tc.p, auditInterval)
			c := newClient(t, web, p)
			ok, refused := crawl(t, c, urls, 64)
			// Robots.txt disallows 20 hosts' pages (200); a rude host's later pages
			// are refused while it cools down.
			if want := map[bool]int{false: 1800, true: 1600}[tc.rude]; ok < want {
				t.Errorf("only %d of %d pages read (%d refused)", ok, len(urls), refused)
			}
			ap := auditPolicy(p)
			if tc.name == "vault" {
				ap.ChallengeCooldown = 2 * time.Second // the challenge's Retry-After, see buildWeb
			}
			rep := web.Audit(ap)
			if !rep.OK() {
				t.Fatal(rep)
			}
			t.Logf("%s: %d read, %d refused by us, %d requests audited, 0 violations", tc.name, ok, refused, rep.Requests)
		})
	}
}
