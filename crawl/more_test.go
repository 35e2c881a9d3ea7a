package crawl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
)

// An article announced with an embargo is read only once it lifts, at its
// address, on the first pass after (V8).
func TestCrawler_V8_EmbargoedArticleReadOnceItLifts(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("embargo.example")
	now := s.AddArticle(politetest.Article{ID: 1, Published: t0.Add(-time.Hour)})
	later := s.AddArticle(politetest.Article{ID: 2, Published: t0.Add(2 * time.Hour)})
	clk := clock.NewManual(t0)
	src := siteSource(s.Name(), StrictNews, false)
	src.Embargo = true
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), Clock: clk, Sources: []Source{src}}
	rep := mustPass(t, c, src.ID)
	if rep.Deposited != 1 || rep.Embargoed != 1 {
		t.Fatalf("first pass %+v, want 1 deposited, 1 embargoed", rep)
	}
	if n := articleRequests(web, s.Name(), []politetest.Article{later}); n != 0 {
		t.Fatalf("embargoed article read %d times before it lifted", n)
	}
	sc, _ := c.StateStore().Schedule(context.Background(), src.ID)
	if !sc.Embargo.Equal(later.Published) {
		t.Fatalf("schedule's embargo %v, want %v", sc.Embargo, later.Published)
	}
	clk.Set(later.Published.Add(-time.Second))
	if rep = mustPass(t, c, src.ID); rep.Embargoed != 1 || rep.Deposited != 0 {
		t.Fatalf("a second before it lifts: %+v", rep)
	}
	clk.Set(later.Published)
	if rep = mustPass(t, c, src.ID); rep.Deposited != 1 || rep.Embargoed != 0 {
		t.Fatalf("once lifted: %+v", rep)
	}
	if articleRequests(web, s.Name(), []politetest.Article{later}) != 1 || articleRequests(web, s.Name(), []politetest.Article{now}) != 1 {
		t.Fatal("each article is read exactly once")
	}
}

// The CMS API read method sends the credential, read from the file its
// reference names, to the article API only: never with the trigger, never
// with robots.txt (V2, V9, V9b).
func TestCrawler_V2_CMSAPIWithACredentialByReference(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("cms.example")
	var arts []politetest.Article
	for range 3 {
		arts = append(arts, s.AddArticle(politetest.Article{}))
	}
	s.Handle("/cms/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id := strings.TrimPrefix(r.URL.Path, "/cms/")
		for _, a := range arts {
			if fmt.Sprint(a.ID) == id {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":%d,"link":%q,"date_gmt":"2026-01-01T00:00:00","title":{"rendered":%q},"content":{"rendered":"<p>%s</p>"}}`,
					a.ID, s.URL(a.Path), a.Title, "The body of the story, as the CMS holds it.")
				return
			}
		}
		http.NotFound(w, r)
	}))
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := siteSource(s.Name(), Vault, false)
	src.Read = Read{Method: ReadCMSAPI, URL: "https://cms.example/cms/{id}", Credential: &CredentialRef{Header: "X-Api-Key", Value: "file:" + key}}
	p := testPolicy(t, Vault, testInterval)
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{src}}
	rep := mustPass(t, c, src.ID)
	if rep.Deposited != 3 || rep.Mismatched != 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range web.Requests() {
		has := r.Header.Get("X-Api-Key") != ""
		if strings.HasPrefix(r.Path, "/cms/") != has {
			t.Errorf("%s: credential sent %v", r.Target, has)
		}
	}
	ap := auditPolicy(p)
	ap.AllowedHeaders = append(ap.AllowedHeaders, "X-Api-Key")
	if rep := web.Audit(ap); !rep.OK() {
		t.Fatalf("auditor: %v", rep)
	}
	deps, _ := c.Deposited().List(context.Background(), src.ID, time.Time{})
	for _, d := range deps {
		if d.Article == nil || !d.Article.Headline.Present() {
			t.Fatalf("%s: no article extracted from the CMS document", d.URL)
		}
	}
}

// The backlog list names an article by one id and the feed by another: the
// record holds both, the article's own id makes the third, and nothing is
// deposited (V3).
func TestCrawler_V3_FeedAndListDisagree(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("twoids.example")
	a := s.AddArticle(politetest.Article{ID: 7})
	s.Handle("/feed.xml", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>%s</link><description>d</description>
<item><title>A</title><link>%s</link><guid isPermaLink="false">https://twoids.example/?p=999</guid></item>
</channel></rss>`, s.URL("/"), s.URL(a.Path))
	}))
	var ev events
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), OnEvent: ev.on,
		Sources: []Source{siteSource(s.Name(), StrictNews, true)}}
	rep := mustPass(t, c, s.Name())
	if rep.Mismatched != 1 || rep.Deposited != 0 {
		t.Fatalf("report %+v", rep)
	}
	if m := ev.of(EventMismatch); len(m) != 1 || m[0].IDs != [3]string{"999", "7", "7"} {
		t.Fatalf("mismatch %+v, want feed 999, list 7, article 7", m)
	}
}

// A pass whose lease runs out (its renewal stalled, the clock moved on)
// sends nothing more: another owner may hold the lease by then (V7).
func TestCrawler_V7_PassStopsWhenItsLeaseRunsOut(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("lease.example")
	for range 6 {
		s.AddArticle(politetest.Article{})
	}
	clk := clock.NewManual(t0)
	st := new(MemoryState)
	var other Lease
	var otherErr error
	c := &Crawler{Client: newClient(t, web, testPolicy(t, Vault, testInterval)), Clock: clk, State: st,
		Sources: []Source{siteSource(s.Name(), Vault, false)}, Owner: "a", LeaseTTL: time.Minute}
	c.OnEvent = func(e Event) {
		if e.Kind == EventDeposited && other.Owner == "" {
			// Past a's lease, all at once: b takes the source over.
			clk.Set(t0.Add(2 * time.Minute))
			other, otherErr = st.AcquireLease(context.Background(), s.Name(), "b", clk.Now(), time.Hour)
		}
	}
	rep, err := c.Pass(context.Background(), s.Name())
	if otherErr != nil || other.Owner != "b" {
		t.Fatalf("b could not take the expired lease: %v", otherErr)
	}
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a's pass ended with %v, want ErrLeaseLost", err)
	}
	// The first deposit, and at most the reads already under way: one per
	// reader of the host.
	if n := articleRequests(web, s.Name(), s.Articles()); n > 1+hostReaders {
		t.Fatalf("%d articles read by a pass whose lease had run out after the first (report %+v)", n, rep)
	}
	l, err := st.RenewLease(context.Background(), s.Name(), "b", clk.Now(), time.Hour)
	if err != nil || l.Owner != "b" {
		t.Fatalf("a's pass ending released b's lease: %+v, %v", l, err)
	}
}

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

// A store that is slow holds the readers back: with queues of one between
// the stages, a blocked deposit lets at most 4 + hostReaders reads happen
// (one being deposited, one queued for it, one held by the extractor, one
// queued for extraction, one held by each of the host's readers), and the
// rest wait in the host's queue (D7). Stages shows each queue.
func TestCrawler_D7_BoundedQueuesApplyBackPressure(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("slowstore.example")
	for range 12 {
		s.AddArticle(politetest.Article{})
	}
	ds := &blockingDeposits{release: make(chan struct{})}
	c := &Crawler{Client: newClient(t, web, testPolicy(t, Vault, 5*time.Millisecond)), Deposits: ds,
		QueueSize: 1, Extractors: 1, Sources: []Source{siteSource(s.Name(), Vault, false)}}
	done := make(chan *PassReport, 1)
	go func() {
		rep, _ := c.Pass(context.Background(), s.Name())
		done <- rep
	}()
	// Wait until the readers are held back: both queues full, all read
	// that can be.
	const most = 4 + hostReaders
	var st Stage
	n := 0
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for st.Extract != 1 || st.Deposit != 1 || st.Waiting != 12-most || n != most {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the pipeline never filled: %+v, %d reads", st, n)
		}
		if all := c.Stages(); len(all) == 1 {
			st = all[0]
		}
		if n = articleRequests(web, s.Name(), s.Articles()); n > most {
			t.Fatalf("%d reads while the store was blocked, want at most %d (%+v)", n, most, st)
		}
	}
	close(ds.release)
	if rep := <-done; rep.Deposited != 12 {
		t.Fatalf("after the store caught up: %+v", rep)
	}
	if len(c.Stages()) != 0 {
		t.Fatal("a finished pass still shows its stages")
	}
}

// blockingDeposits holds every Put until release is closed.
type blockingDeposits struct {
	MemoryDeposits
	release chan struct{}
}

func (d *blockingDeposits) Put(ctx context.Context, dep *Deposit) (bool, error) {
	<-d.release
	return d.MemoryDeposits.Put(ctx, dep)
}

// A withdrawal during a pass waits for it to end: nothing it read is
// deposited after, and the pass sends nothing more (S8, V13).
func TestCrawler_S8_WithdrawDuringAPass(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("withdrawn.example")
	for range 8 {
		s.AddArticle(politetest.Article{})
	}
	withdrawn := make(chan error, 1)
	var once sync.Once
	c := &Crawler{Client: newClient(t, web, testPolicy(t, Vault, testInterval)), Sources: []Source{siteSource(s.Name(), Vault, false)}}
	c.OnEvent = func(e Event) {
		if e.Kind == EventDeposited {
			once.Do(func() {
				_ = c.Deactivate(s.Name()) // at once; Withdraw, which waits for the pass, in the background
				go func() {
					_, err := c.Withdraw(context.Background(), s.Name())
					withdrawn <- err
				}()
			})
		}
	}
	_, err := c.Pass(context.Background(), s.Name())
	if !errors.Is(err, ErrInactive) {
		t.Fatalf("pass ended with %v, want ErrInactive", err)
	}
	if err := <-withdrawn; err != nil {
		t.Fatal(err)
	}
	deps, _ := c.Deposited().List(context.Background(), s.Name(), time.Time{})
	refs, _ := c.StateStore().Refs(context.Background(), s.Name())
	if len(deps) != 0 || len(refs) != 0 {
		t.Fatalf("after the withdrawal: %d deposits, %d refs", len(deps), len(refs))
	}
	if n := articleRequests(web, s.Name(), s.Articles()); n > 1+hostReaders {
		t.Fatalf("%d articles read: the pass went on after the withdrawal", n)
	}
}
