package crawl

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
)

// dyingState is a MemoryState whose process "dies" at the first See: that
// See fails, and from then on every See and SetSchedule fails too, as if
// nothing after it reached the file. The MemoryState under it is what a
// restarted process finds.
type dyingState struct {
	MemoryState
	dead atomic.Bool
}

var errDied = errors.New("test: the process died")

func (s *dyingState) See(ctx context.Context, source string, r RefState, now time.Time) (RefState, bool, error) {
	s.dead.Store(true)
	return RefState{}, false, errDied
}

func (s *dyingState) SetSchedule(ctx context.Context, source string, sc Schedule) error {
	if s.dead.Load() {
		return errDied
	}
	return s.MemoryState.SetSchedule(ctx, source, sc)
}

// A list read just before the process died (its 200 arrived, its references
// were never recorded) is read again in full after the restart, and its
// references are learnt and their articles deposited: the chain was not let
// keep the list's validators before the references were in State, so the
// next read is not a 304 standing for references never recorded. Once they
// are recorded, the validators are kept, and the next read is a 304. For a
// feed, a public API trigger (whose one page is a read, not a failure), a
// WordPress backlog and a sitemap backlog (S2, V1, V4, V12).
func TestCrawler_V12_ListReadBeforeDeathReadAgainInFull(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(src *Source, site string)
		lists func(path string) bool // the paths of the source's lists
	}{
		{"feed", func(*Source, string) {}, func(p string) bool { return p == "/feed.xml" }},
		{"api trigger", func(src *Source, site string) {
			spec := feed.WordPress("https://"+site, 10)
			src.Trigger = Trigger{API: &spec}
		}, func(p string) bool { return p == "/wp-json/wp/v2/posts" }},
		{"wordpress backlog", func(src *Source, site string) {
			src.Backlog = &Backlog{Kind: BacklogWordPress, Site: "https://" + site, PerPage: 2}
		}, func(p string) bool { return p == "/feed.xml" || p == "/wp-json/wp/v2/posts" }},
		{"sitemap backlog", func(src *Source, site string) {
			src.Identifier = IDFromURL
			src.Backlog = &Backlog{Kind: BacklogSitemap, Site: "https://" + site}
		}, func(p string) bool {
			return p == "/feed.xml" || strings.HasSuffix(p, "sitemap.xml") || p == "/sitemap_index.xml"
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 3, Seed: int64(40 + i)})
			site := info.Sites[0]
			src := siteSource(site.Name, Digest, false)
			tc.setup(&src, site.Name)
			p := testPolicy(t, Digest, testInterval) // conditional reads on
			clk := clock.NewManual(site.Articles[0].Published.Add(time.Hour))
			var keep restartable
			dying := &dyingState{}
			first := &Crawler{Client: keep.client(t, web, p), Sources: []Source{src}, State: dying, Clock: clk}
			if rep, _ := first.Pass(context.Background(), src.ID); rep.Deposited != 0 {
				t.Fatalf("first pass %+v, want nothing recorded", rep)
			}
			if n := keep.validators.Len(); n != 0 {
				t.Fatalf("the dead process kept %d validators of lists whose references it never recorded", n)
			}
			first.Client.Close()

			// The restart: every store as the first process left it.
			before := len(web.Requests())
			second := &Crawler{Client: keep.client(t, web, p), Sources: []Source{src}, State: &dying.MemoryState,
				Clock: clk, RefreshGuard: time.Minute}
			rep := mustPass(t, second, src.ID)
			if rep.Deposited != 3 || rep.Trigger.Err != nil || rep.Backlog.Err != nil {
				t.Fatalf("pass after the restart %+v, want the 3 articles deposited and no list failed", rep)
			}
			lists := 0
			for _, r := range web.Requests()[before:] {
				if !tc.lists(r.Path) {
					continue
				}
				lists++
				if r.Status != http.StatusOK {
					t.Errorf("after the restart, %s?%s answered %d, want a full 200", r.Path, r.Query, r.Status)
				}
			}
			if lists == 0 {
				t.Fatal("no list read after the restart")
			}
			if keep.validators.Len() == 0 {
				t.Fatal("no validators kept once the references were recorded")
			}

			// Recorded: the next trigger read is conditional, and answered 304.
			clk.Advance(2 * time.Minute)
			before = len(web.Requests())
			if _, err := second.Refresh(context.Background(), src.ID); err != nil {
				t.Fatal(err)
			}
			trigger := 0
			for _, r := range web.Requests()[before:] {
				if r.Path == "/feed.xml" || r.Path == "/wp-json/wp/v2/posts" {
					trigger++
					if r.Status != http.StatusNotModified {
						t.Errorf("trigger read after the references were recorded: %s answered %d, want 304", r.Path, r.Status)
					}
				}
			}
			if trigger == 0 {
				t.Fatal("Refresh read no trigger")
			}
			audit(t, web, p)
		})
	}
}
