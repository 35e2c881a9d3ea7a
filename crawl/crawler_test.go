package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/provenance"
)

// articleRequests counts the web's requests for the pages of arts.
func articleRequests(web *politetest.Web, host string, arts []politetest.Article) int {
	paths := map[string]bool{}
	for _, a := range arts {
		paths[a.Path] = true
	}
	n := 0
	for _, r := range web.Requests() {
		if r.Host == host && paths[r.Path] {
			n++
		}
	}
	return n
}

// A pass reads the trigger, walks the backlog, reads every article once and
// deposits each final complete 200 with its envelope, proof and extracted
// article (V12), every identifier agreeing (V3); the web's auditor finds
// nothing to fault.
func TestCrawler_V12_PassDepositsCompleteReads(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 3, ArticlesPerHost: 6, Seed: 3})
	p := testPolicy(t, StrictNews, testInterval)
	var ev events
	c := &Crawler{Client: newClient(t, web, p), OnEvent: ev.on}
	for i, s := range info.Sites {
		c.Sources = append(c.Sources, siteSource(s.Name, StrictNews, i == 0))
	}
	reps, err := c.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, rep := range reps {
		site := info.Sites[i]
		if rep.Err != nil {
			t.Fatalf("%s: %v", site.Name, rep.Err)
		}
		if rep.Deposited != len(site.Articles) || rep.Failed+rep.Mismatched+rep.Refused != 0 {
			t.Errorf("%s: %+v, want %d deposited", site.Name, rep, len(site.Articles))
		}
		if n := articleRequests(web, site.Name, site.Articles); n != len(site.Articles) {
			t.Errorf("%s: %d article requests, want %d (one read each)", site.Name, n, len(site.Articles))
		}
		deps, _ := c.Deposited().List(context.Background(), site.Name, time.Time{})
		for _, d := range deps {
			if d.Proof == nil || d.Digest != provenance.DigestOf(d.Envelope) || d.Article == nil || d.Excerpt != nil {
				t.Fatalf("%s: deposit %+v lacks its proof, digest or article", site.Name, d)
			}
			if _, err := provenance.Verify(d.Proof, d.Envelope, provenance.VerifyOptions{Roots: web.RootCAs(), AllowPrefixes: []netip.Prefix{loopback}}); err != nil {
				t.Fatalf("%s: proof does not verify: %v", d.URL, err)
			}
			if !d.Article.Headline.Present() {
				t.Errorf("%s: extracted article has no headline", d.URL)
			}
		}
	}
	if !reps[0].BacklogRead || reps[1].BacklogRead {
		t.Errorf("backlog walked: %v %v, want only the first source's", reps[0].BacklogRead, reps[1].BacklogRead)
	}
	// A second pass: nothing due, nothing pending, nothing sent.
	before := len(web.Requests())
	rep := mustPass(t, c, info.Sites[0].Name)
	if rep.TriggerRead || rep.BacklogRead || rep.Queued != 0 || len(web.Requests()) != before {
		t.Fatalf("second pass %+v sent %d requests", rep, len(web.Requests())-before)
	}
	audit(t, web, p)
	if got := c.SourceCounts()[info.Sites[1].Name].Deposits; got != len(info.Sites[1].Articles) {
		t.Errorf("SourceCounts deposits = %d", got)
	}
}

// Without a full-text licence no article is read: each story is kept as the
// feed describes it, labelled an excerpt, with its link (S5, S6).
func TestCrawler_S6_ExcerptsWithoutLicence(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 4, Seed: 4})
	p := testPolicy(t, StrictNews, testInterval)
	site := info.Sites[0]
	src := siteSource(site.Name, StrictNews, false)
	src.FullText = false
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{src}}
	rep := mustPass(t, c, src.ID)
	if rep.Excerpted != len(site.Articles) || rep.Deposited != 0 {
		t.Fatalf("report %+v, want %d excerpts", rep, len(site.Articles))
	}
	if n := articleRequests(web, site.Name, site.Articles); n != 0 {
		t.Fatalf("%d article pages read without a licence", n)
	}
	deps, _ := c.Deposited().List(context.Background(), src.ID, time.Time{})
	for _, d := range deps {
		if d.Envelope != nil || d.Excerpt == nil || d.Excerpt.Label != feed.ExcerptLabel || d.Excerpt.Link == "" || d.Excerpt.Headline == "" {
			t.Fatalf("deposit %+v is not a labelled excerpt with a link", d)
		}
	}
}

// Under the vault policy nothing of the trigger is kept: references only,
// never an excerpt (V1).
func TestCrawler_V1_VaultKeepsNothingOfTheTrigger(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 3, Seed: 5})
	p := testPolicy(t, Vault, testInterval)
	site := info.Sites[0]
	full := siteSource(site.Name, Vault, false)
	none := full
	none.ID, none.FullText = "no-licence", false
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{full, none}}
	reps, err := c.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if reps[0].Deposited != len(site.Articles) || reps[1].Excerpted != 0 || reps[1].Excluded != len(site.Articles) {
		t.Fatalf("reports %+v / %+v", reps[0], reps[1])
	}
	for _, id := range []string{full.ID, none.ID} {
		refs, _ := c.StateStore().Refs(context.Background(), id)
		for _, r := range refs {
			if r.Excerpt != nil {
				t.Fatalf("%s: the trigger's content was kept: %+v", id, r.Excerpt)
			}
		}
		deps, _ := c.Deposited().List(context.Background(), id, time.Time{})
		for _, d := range deps {
			if d.Excerpt != nil {
				t.Fatalf("%s: an excerpt was deposited under the vault policy", id)
			}
		}
	}
	audit(t, web, p)
}

// An article whose feed identifier differs from the one the page states is
// not deposited, and the mismatch is recorded with the values (V3).
func TestCrawler_V3_IdentifierMismatchDepositsNothing(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("mismatch.example")
	a := s.AddArticle(politetest.Article{ID: 7})
	b := s.AddArticle(politetest.Article{ID: 8})
	// The feed names article 7's page under id 999.
	s.Handle("/feed.xml", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>%s</link><description>d</description>
<item><title>A</title><link>%s</link><guid isPermaLink="false">https://mismatch.example/?p=999</guid></item>
<item><title>B</title><link>%s</link><guid isPermaLink="false">https://mismatch.example/?p=8</guid></item>
</channel></rss>`, s.URL("/"), s.URL(a.Path), s.URL(b.Path))
	}))
	p := testPolicy(t, StrictNews, testInterval)
	var ev events
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{siteSource(s.Name(), StrictNews, false)}, OnEvent: ev.on}
	rep := mustPass(t, c, s.Name())
	if rep.Mismatched != 1 || rep.Deposited != 1 {
		t.Fatalf("report %+v, want 1 mismatch and 1 deposit", rep)
	}
	m := ev.of(EventMismatch)
	if len(m) != 1 || m[0].IDs != [3]string{"999", "", "7"} {
		t.Fatalf("mismatch events %+v, want the feed's 999 and the article's 7", m)
	}
	r, ok, _ := c.StateStore().Ref(context.Background(), s.Name(), "999")
	if !ok || r.Outcome != Mismatch || !strings.Contains(r.Note, `"999"`) || !strings.Contains(r.Note, `"7"`) {
		t.Fatalf("state of 999: %+v", r)
	}
	deps, _ := c.Deposited().List(context.Background(), s.Name(), time.Time{})
	if len(deps) != 1 || deps[0].Key != "8" {
		t.Fatalf("deposits %v, want only 8's", deps)
	}
}

// An answer that is not a final complete 200 is not deposited; the
// article stays pending and is read again on the next pass (V12).
func TestCrawler_V12_OnlyACompleteFinal200IsDeposited(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("flaky.example")
	var arts []politetest.Article
	for range 5 {
		arts = append(arts, s.AddArticle(politetest.Article{}))
	}
	s.Misbehave(arts[0].Path, politetest.Behaviour{Kind: politetest.Truncate, Times: 1})
	s.Misbehave(arts[1].Path, politetest.Behaviour{Kind: politetest.ServerError, Times: 1})
	s.Misbehave(arts[2].Path, politetest.Behaviour{Kind: politetest.UnknownEncoding, Times: 1})
	s.Misbehave(arts[3].Path, politetest.Behaviour{Kind: politetest.NoContentType, Times: 1})
	p := testPolicy(t, Vault, testInterval)
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{siteSource(s.Name(), Vault, false)}}
	rep := mustPass(t, c, s.Name())
	if rep.Deposited != 1 || rep.Failed != 4 {
		t.Fatalf("first pass %+v, want 1 deposited, 4 failed", rep)
	}
	rep = mustPass(t, c, s.Name())
	if rep.TriggerRead || rep.Queued != 4 || rep.Deposited != 4 {
		t.Fatalf("second pass %+v, want the 4 read again and deposited", rep)
	}
	audit(t, web, p)
}

// An article already read MaxReads (3) times in a pass is not read again in
// it (V12).
func TestCrawler_V12_AtMostThreeReadsPerArticlePerPass(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("reads.example")
	a := s.AddArticle(politetest.Article{ID: 1})
	s.AddArticle(politetest.Article{ID: 2})
	p := testPolicy(t, Vault, testInterval)
	st := &preReadState{key: "1", reads: 3}
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{siteSource(s.Name(), Vault, false)}, State: st}
	rep := mustPass(t, c, s.Name())
	if rep.Skipped != 1 || rep.Deposited != 1 {
		t.Fatalf("report %+v, want 1 skipped, 1 deposited", rep)
	}
	if n := articleRequests(web, s.Name(), []politetest.Article{a}); n != 0 {
		t.Fatalf("article read %d times more in a pass that had read it 3 times", n)
	}
	// The next pass starts counting afresh.
	st.reads = 0
	if rep = mustPass(t, c, s.Name()); rep.Deposited != 1 {
		t.Fatalf("next pass %+v, want article 1 deposited", rep)
	}
}

// preReadState is a MemoryState whose passes begin as if key had already
// been read reads times in them (a pass resumed by another process would).
type preReadState struct {
	MemoryState
	key   string
	reads int
}

func (s *preReadState) AcquireLease(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (Lease, error) {
	l, err := s.MemoryState.AcquireLease(ctx, source, owner, now, ttl)
	for range s.reads {
		if err == nil {
			_, err = s.MemoryState.Attempt(ctx, source, l.Pass, s.key)
		}
	}
	return l, err
}

// Two crawlers sharing one state never run two passes of one source at
// once: the second finds the lease held and sends nothing (V7, P1).
func TestCrawler_V7_NeverTwoPassesOfASourceAtOnce(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 2, Seed: 6})
	p := testPolicy(t, StrictNews, testInterval)
	client := newClient(t, web, p)
	st := new(MemoryState)
	src := siteSource(info.Sites[0].Name, StrictNews, false)
	b := &Crawler{Client: client, Sources: []Source{src}, State: st, Owner: "b"}
	var bErr error
	var bRequests int
	a := &Crawler{Client: client, Sources: []Source{src}, State: st, Owner: "a", OnEvent: func(e Event) {
		if e.Kind == EventPassStarted { // a holds the lease now
			before := len(web.Requests())
			_, bErr = b.Pass(context.Background(), src.ID)
			bRequests = len(web.Requests()) - before
		}
	}}
	rep := mustPass(t, a, src.ID)
	var le *LeaseError
	if !errors.Is(bErr, ErrLeaseHeld) || !errors.As(bErr, &le) || le.Held.Owner != "a" {
		t.Fatalf("b's pass during a's: %v, want ErrLeaseHeld naming a", bErr)
	}
	if bRequests != 0 {
		t.Fatalf("b sent %d requests without the lease", bRequests)
	}
	if rep.Deposited != 2 {
		t.Fatalf("a's pass %+v", rep)
	}
	// Released: b may run now.
	if _, err := b.Pass(context.Background(), src.ID); err != nil {
		t.Fatalf("b after a: %v", err)
	}
}

// A deactivated source is never fetched again and its deposits stay (V13);
// a withdrawn one loses them (S8).
func TestCrawler_V13_S8_DeactivateAndWithdraw(t *testing.T) {
	t.Parallel()
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 2, Seed: 7})
	p := testPolicy(t, StrictNews, testInterval)
	src := siteSource(info.Sites[0].Name, StrictNews, false)
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{src}}
	mustPass(t, c, src.ID)
	if err := c.Deactivate(src.ID); err != nil {
		t.Fatal(err)
	}
	before := len(web.Requests())
	if _, err := c.Pass(context.Background(), src.ID); !errors.Is(err, ErrInactive) {
		t.Fatalf("Pass of an inactive source: %v", err)
	}
	if _, err := c.Refresh(context.Background(), src.ID); !errors.Is(err, ErrInactive) {
		t.Fatalf("Refresh of an inactive source: %v", err)
	}
	reps, _ := c.RunOnce(context.Background())
	if len(reps) != 0 || len(web.Requests()) != before {
		t.Fatalf("inactive source fetched: %d reports, %d requests", len(reps), len(web.Requests())-before)
	}
	deps, _ := c.Deposited().List(context.Background(), src.ID, time.Time{})
	if len(deps) != 2 {
		t.Fatalf("deposits after deactivation: %d, want 2 unchanged", len(deps))
	}
	n, err := c.Withdraw(context.Background(), src.ID)
	if err != nil || n != 2 {
		t.Fatalf("Withdraw = %d, %v", n, err)
	}
	deps, _ = c.Deposited().List(context.Background(), src.ID, time.Time{})
	refs, _ := c.StateStore().Refs(context.Background(), src.ID)
	if len(deps) != 0 || len(refs) != 0 {
		t.Fatalf("after Withdraw: %d deposits, %d refs", len(deps), len(refs))
	}
}

// Invalid sources are refused at the first call, naming the field.
func TestCrawler_RefusesInvalidSources(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	bad := siteSource("a.example", StrictNews, false)
	bad.Interval = Duration(time.Minute)
	c := &Crawler{Client: newClient(t, web, testPolicy(t, StrictNews, testInterval)), Sources: []Source{bad}}
	var se *SourceError
	if _, err := c.Pass(context.Background(), bad.ID); !errors.As(err, &se) || se.Field != "interval" {
		t.Fatalf("Pass with an invalid source: %v", err)
	}
	var zero Crawler
	if err := zero.Run(context.Background()); !errors.Is(err, ErrNoClient) {
		t.Fatalf("zero Crawler's Run: %v, want ErrNoClient", err)
	}
}
