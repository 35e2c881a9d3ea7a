package politetest

import (
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// BenchmarkScenarioBuild builds the one-liner web: 500 hosts × 20
// articles, 10 % rude.
func BenchmarkScenarioBuild(b *testing.B) {
	w := NewWeb(b)
	sc := Scenario{Hosts: 500, ArticlesPerHost: 20, RudeShare: 0.1, Seed: 1,
		Latency: [2]time.Duration{50 * time.Millisecond, 200 * time.Millisecond}}
	for b.Loop() {
		if _, err := sc.Build(w); err != nil {
			b.Fatal(err)
		}
	}
}

// synthetic makes a careful-looking log: per host, robots.txt then n-1
// requests 100 ms apart.
func synthetic(hosts, perHost int) []Request {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var reqs []Request
	for i := 0; i < perHost; i++ {
		for h := 0; h < hosts; h++ {
			at := t0.Add(time.Duration(i)*100*time.Millisecond + time.Duration(h)*time.Microsecond)
			path := "/feed.xml"
			if i == 0 {
				path = "/robots.txt"
			}
			reqs = append(reqs, Request{
				Seq: len(reqs) + 1, Conn: h + 1, Arrived: at, Finished: at.Add(time.Millisecond),
				Host: "news-" + strconv.Itoa(h) + ".example", Method: "GET", Target: path, Path: path,
				Header:     http.Header{"User-Agent": {botUA}, "Accept": {"*/*"}},
				Status:     200,
				robotsBody: "User-agent: *\nDisallow: /private/\n",
			})
		}
	}
	return reqs
}

// BenchmarkAudit judges 10 000 requests: 500 hosts × 20.
func BenchmarkAudit(b *testing.B) {
	reqs := synthetic(500, 20)
	for b.Loop() {
		if rep := audit(testPolicy(), reqs, nil); !rep.OK() {
			b.Fatal(rep)
		}
	}
}

// BenchmarkAuditOneBusyHost judges 2 000 requests to one host (the audit is
// quadratic in the requests per host).
func BenchmarkAuditOneBusyHost(b *testing.B) {
	reqs := synthetic(1, 2000)
	for b.Loop() {
		if rep := audit(testPolicy(), reqs, nil); !rep.OK() {
			b.Fatal(rep)
		}
	}
}

// BenchmarkFeedRoundTrip fetches a 20-item feed over a kept-alive TLS
// connection.
func BenchmarkFeedRoundTrip(b *testing.B) {
	w := NewWeb(b)
	s := w.Site("news-1.example")
	for range 20 {
		s.AddArticle(Article{})
	}
	c := w.Client()
	url := s.URL("/feed.xml")
	for b.Loop() {
		resp, err := c.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
