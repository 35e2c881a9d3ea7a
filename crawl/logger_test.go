package crawl

import (
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/politefetch/politefetch/politetest"
)

// The logger gets a line per pass with its counts; no logger, no output.
func TestCrawler_LoggerLinesPerPass(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 2, Seed: 12})
	var buf strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil))
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), Logger: log,
		Sources: []Source{siteSource(info.Sites[0].Name, StrictNews, false)}}
	mustPass(t, c, info.Sites[0].Name)
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	for _, want := range []string{`msg="crawl: pass-ended" source=news-1.example`, "deposited=2", `msg="crawl: trigger-read"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "level=DEBUG") {
		t.Errorf("debug lines at the default level:\n%s", out)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
