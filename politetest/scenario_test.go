package politetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestScenarioIsDeterministic(t *testing.T) {
	t.Parallel()
	sc := Scenario{Hosts: 40, ArticlesPerHost: 5, RudeShare: 0.25, Seed: 42,
		RobotsMix: RobotsMix{Disallow: 0.2, CrawlDelay: 0.2, Missing: 0.1, Redirect: 0.1}}
	_, a := NewScenarioWeb(t, sc)
	_, b := NewScenarioWeb(t, sc)
	if a.String() != b.String() {
		t.Fatalf("same seed, different webs:\n%s\n---\n%s", a, b)
	}
	for i := range a.Sites {
		if a.Sites[i].Articles[2].Published != b.Sites[i].Articles[2].Published || a.Sites[i].RobotsBody != b.Sites[i].RobotsBody {
			t.Fatalf("site %d differs", i)
		}
	}
	sc.Seed = 43
	_, c := NewScenarioWeb(t, sc)
	if a.String() == c.String() {
		t.Fatal("another seed built the same web")
	}
	if got := len(a.Rude()); got != 10 {
		t.Errorf("%d rude sites, want 25%% of 40 = 10", got)
	}
	kinds := map[string]int{}
	for _, s := range a.Sites {
		kinds[s.Robots]++
	}
	for _, k := range []string{"allow-all", "disallow", "crawl-delay", "missing", "redirect"} {
		if kinds[k] == 0 {
			t.Errorf("no site with robots kind %s: %v", k, kinds)
		}
	}
}

// The one-liner: 500 hosts × 20 articles, 50–200 ms latency, 10 %
// rude. Latency is real and ends when the client gives up.
func TestScenarioOneLiner(t *testing.T) {
	t.Parallel()
	w, info := NewScenarioWeb(t, Scenario{Hosts: 500, ArticlesPerHost: 20,
		Latency: [2]time.Duration{50 * time.Millisecond, 200 * time.Millisecond}, RudeShare: 0.10, Seed: 1})
	if len(info.Sites) != 500 || len(info.Rude()) != 50 || len(info.Sites[499].Articles) != 20 {
		t.Fatalf("%d sites, %d rude, %d articles on the last", len(info.Sites), len(info.Rude()), len(info.Sites[499].Articles))
	}
	if info.Site("news-500.example") == nil || len(w.Site("news-500.example").Articles()) != 20 {
		t.Fatal("news-500.example not built")
	}
	for _, s := range info.Rude() {
		switch s.Trait {
		case "429", "503", "challenge", "robots-5xx", "disallow":
		default:
			t.Errorf("%s: unknown trait %q", s.Name, s.Trait)
		}
	}
	// A client that gives up after 5 ms never gets the (≥ 50 ms) answer,
	// and the handler stops waiting: nothing is written.
	c := w.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://news-1.example/robots.txt", nil)
	if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the deadline", err)
	}
}

func TestScenarioTraitsOnTheWire(t *testing.T) {
	t.Parallel()
	w, info := NewScenarioWeb(t, Scenario{Hosts: 30, ArticlesPerHost: 2, RudeShare: 1, Seed: 3})
	p := newCareful(w, 0)
	seen := map[string]bool{}
	for _, s := range info.Sites {
		seen[s.Trait] = true
		robots, _ := p.get(t, "https://"+s.Name+"/robots.txt")
		feed, _ := p.get(t, "https://"+s.Name+"/feed.xml")
		var ok bool
		switch s.Trait {
		case "429":
			ok = feed.StatusCode == 429 && feed.Header.Get("Retry-After") == "120"
		case "503":
			_, err := http.ParseTime(feed.Header.Get("Retry-After"))
			ok = feed.StatusCode == 503 && err == nil
		case "challenge":
			ok = feed.Header.Get("cf-mitigated") == "challenge"
		case "robots-5xx":
			ok = robots.StatusCode == 503
		case "disallow":
			ok = robots.StatusCode == 200 && strings.HasPrefix(s.Articles[0].Path, "/news/") &&
				!parseRobots(s.RobotsBody, "PoliteBot").allowed(s.Articles[0].Path)
		}
		if !ok {
			t.Errorf("%s (%s): robots %d, feed %d %v", s.Name, s.Trait, robots.StatusCode, feed.StatusCode, feed.Header)
		}
	}
	for _, tr := range RudeTraits() {
		if !seen[tr] {
			t.Errorf("trait %s never chosen in 30 rude sites", tr)
		}
	}
}

// crawlCarefully is a careful client for a whole web: per host (hosts in
// parallel, each sequential) it reads robots.txt (following its redirects),
// gives up on a 5xx or no answer, honours Disallow and Crawl-delay, reads the
// feed, stops at a refusal, and reads up to two articles.
func crawlCarefully(t *testing.T, w *Web, names []string, interval time.Duration) {
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() {
			p := newCareful(w, interval)
			target := "/robots.txt"
			var resp *http.Response
			var body []byte
			for hop := 0; hop <= 5; hop++ {
				resp, body = p.get(t, "https://"+name+target)
				if resp.StatusCode < 300 || resp.StatusCode >= 400 {
					break
				}
				target = resp.Header.Get("Location")
			}
			var rules robotsRules
			switch {
			case resp.StatusCode >= 500:
				return
			case resp.StatusCode < 300:
				rules = parseRobots(string(body), "PoliteBot")
				p.interval = max(interval, rules.crawlDelay)
			}
			if !rules.allowed("/feed.xml") {
				return
			}
			feed, _ := p.get(t, "https://"+name+"/feed.xml")
			if feed.StatusCode != 200 {
				return
			}
			for _, a := range w.Site(name).Articles()[:2] {
				if rules.allowed(a.Path) {
					p.get(t, "https://"+name+a.Path)
				}
			}
		})
	}
	wg.Wait()
}

func TestCarefulCrawlOfAScenarioIsClean(t *testing.T) {
	t.Parallel()
	w, info := NewScenarioWeb(t, Scenario{Hosts: 16, ArticlesPerHost: 3, RudeShare: 0.5, Seed: 11,
		Latency:   [2]time.Duration{time.Millisecond, 5 * time.Millisecond},
		RobotsMix: RobotsMix{Disallow: 0.25, CrawlDelay: 0.15, Missing: 0.25, Redirect: 0.25}})
	crawlCarefully(t, w, info.Names(), 20*time.Millisecond)
	rep := w.Audit(testPolicy())
	if !rep.OK() {
		t.Fatalf("careful crawl judged rude:\n%s", rep)
	}
	if rep.Hosts != 16 || rep.Requests < 40 {
		t.Fatalf("crawl too small: %d requests to %d hosts", rep.Requests, rep.Hosts)
	}
}

// A careless crawl of the same web: no robots.txt, everything at once with
// Go's defaults. The auditor finds every kind of rudeness it committed.
func TestCarelessCrawlOfAScenario(t *testing.T) {
	t.Parallel()
	w, info := NewScenarioWeb(t, Scenario{Hosts: 8, ArticlesPerHost: 3, RudeShare: 0.5, Seed: 11,
		Latency: [2]time.Duration{20 * time.Millisecond, 40 * time.Millisecond}})
	c := &http.Client{Transport: w.Transport()}
	var wg sync.WaitGroup
	for _, s := range info.Sites {
		for _, a := range s.Articles {
			for range 2 {
				wg.Go(func() {
					if resp, err := c.Get("https://" + s.Name + a.Path); err == nil {
						resp.Body.Close()
					}
				})
			}
		}
	}
	wg.Wait()
	rep := w.Audit(testPolicy())
	for _, r := range []Rule{RuleRobotsFirst, RuleInterval, RuleInFlight, RuleConnections, RuleUserAgent} {
		if rep.Count(r) == 0 {
			t.Errorf("careless crawl: no %s violation\n%s", r, rep)
		}
	}
}

// TestScenario_ImpossibleValuesRefused: a Scenario that cannot describe a
// web is a *ScenarioError naming the field, from Validate and from Build
// (which then builds nothing), never a panic or a silent default.
func TestScenario_ImpossibleValuesRefused(t *testing.T) {
	t.Parallel()
	ok := Scenario{Hosts: 2, ArticlesPerHost: 1}
	for _, tc := range []struct {
		field string
		edit  func(*Scenario)
	}{
		{"Hosts", func(s *Scenario) { s.Hosts = 0 }},
		{"Hosts", func(s *Scenario) { s.Hosts = -3 }},
		{"ArticlesPerHost", func(s *Scenario) { s.ArticlesPerHost = -1 }},
		{"Latency", func(s *Scenario) { s.Latency = [2]time.Duration{-time.Millisecond, time.Millisecond} }},
		{"Latency", func(s *Scenario) { s.Latency = [2]time.Duration{time.Second, time.Millisecond} }},
		{"RudeShare", func(s *Scenario) { s.RudeShare = -0.1 }},
		{"RudeShare", func(s *Scenario) { s.RudeShare = 1.5 }},
		{"RudeShare", func(s *Scenario) { s.RudeShare = math.NaN() }},
		{"RobotsMix.Missing", func(s *Scenario) { s.RobotsMix.Missing = 2 }},
		{"RobotsMix.CrawlDelaySeconds", func(s *Scenario) { s.RobotsMix.CrawlDelaySeconds = -1 }},
		{"RobotsMix.CrawlDelaySeconds", func(s *Scenario) { s.RobotsMix.CrawlDelaySeconds = 61 }},
		{"RobotsMix", func(s *Scenario) { s.RobotsMix = RobotsMix{Disallow: 0.6, CrawlDelay: 0.6} }},
		{"Domain", func(s *Scenario) { s.Domain = "exa mple" }},
		{"Domain", func(s *Scenario) { s.Domain = "a/b" }},
		{"Furniture", func(s *Scenario) { s.Furniture = -1 }},
		{"Furniture", func(s *Scenario) { s.Furniture = 9 << 20 }},
	} {
		sc := ok
		tc.edit(&sc)
		var se *ScenarioError
		if err := sc.Validate(); !errors.As(err, &se) || se.Field != tc.field || !errors.Is(err, ErrScenario) {
			t.Errorf("%+v: Validate() = %v; want a ScenarioError for %s", sc, err, tc.field)
		}
		w := NewWeb(t)
		if info, err := sc.Build(w); err == nil || info != nil || len(w.Sites()) != 0 {
			t.Errorf("%+v: Build = %v, %v, %d sites; want the error and nothing built", sc, info, err, len(w.Sites()))
		}
	}
	for _, sc := range []Scenario{ok, {Hosts: 1}, {Hosts: 3, RudeShare: 1, RobotsMix: RobotsMix{Disallow: 0.5, Missing: 0.5}, Domain: "test.example."}} {
		if err := sc.Validate(); err != nil {
			t.Errorf("%+v: Validate() = %v, want nil", sc, err)
		}
	}
}

// TestScenario_CrawlDelaySeconds: the sites asking for a Crawl-delay ask for
// the seconds given (an outside benchmark's webs ask for 2), 1 by default.
func TestScenario_CrawlDelaySeconds(t *testing.T) {
	t.Parallel()
	for _, secs := range []int{0, 2} {
		_, info := NewScenarioWeb(t, Scenario{Hosts: 6, ArticlesPerHost: 1, Seed: 3,
			RobotsMix: RobotsMix{CrawlDelay: 1, CrawlDelaySeconds: secs}})
		want := time.Duration(max(secs, 1)) * time.Second
		for _, s := range info.Sites {
			line := fmt.Sprintf("Crawl-delay: %d\n", max(secs, 1))
			if s.Robots != "crawl-delay" || s.CrawlDelay != want || !strings.Contains(s.RobotsBody, line) {
				t.Errorf("CrawlDelaySeconds %d: %s has robots %q, delay %v, body %q; want %q and %v",
					secs, s.Name, s.Robots, s.CrawlDelay, s.RobotsBody, line, want)
			}
		}
	}
}

// TestScenario_Furniture: a scenario's pages carry the furniture asked for
// (as real news pages weigh 50 to 200 KB), after the story, which is
// unchanged; without it they stay about 1.2 KB.
func TestScenario_Furniture(t *testing.T) {
	t.Parallel()
	page := func(furniture int) string {
		w, info := NewScenarioWeb(t, Scenario{Hosts: 1, ArticlesPerHost: 1, Seed: 5, Furniture: furniture})
		resp, err := w.Client().Get("https://" + info.Sites[0].Name + info.Sites[0].Articles[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("article: %d, %v", resp.StatusCode, err)
		}
		return string(b)
	}
	plain, heavy := page(0), page(100<<10)
	if len(plain) > 4<<10 {
		t.Errorf("a page without furniture weighs %d bytes", len(plain))
	}
	if n := len(heavy) - len(plain); n < 100<<10 || n > 101<<10 {
		t.Errorf("100 KiB of furniture added %d bytes", n)
	}
	story := plain[:strings.Index(plain, "</footer>")]
	if !strings.HasPrefix(heavy, story) || !strings.Contains(heavy[len(story):], "<script>window.__data") {
		t.Errorf("the furniture is not after the unchanged story")
	}
}
