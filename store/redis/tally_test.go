package redis

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/politetest"
)

// TestState_TallyOfTwoWorkers: two workers crawl one source on one Redis,
// one pass each; the source's tally in Redis counts what both did (what a
// report reads after the crawl): both trigger reads (the second's a 304
// where the policy reads conditionally), the articles read and deposited
// once, by the first. Reads and outcomes are
// counted in the script or transaction that records them (Attempt, Settle),
// the trigger reads by the crawler's AddTally after its read.
func TestState_TallyOfTwoWorkers(t *testing.T) {
	base := realStore(t)
	web, info := politetest.NewScenarioWeb(t, politetest.Scenario{Hosts: 1, ArticlesPerHost: 3, Seed: 63})
	site := info.Sites[0]
	p, err := workerPolicy(100 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	src := workerSource(site.Name)
	first := inProcessWorker(t, web, p, base, base.State(), "worker-1", site.Name)
	if rep, err := first.Pass(ctx, src.ID); err != nil || rep.Deposited != 3 {
		t.Fatalf("first pass: %+v, %v; want 3 deposited", rep, err)
	}
	first.Client.Close()
	other := otherProcess(t, base)
	second := inProcessWorker(t, web, p, other, other.State(), "worker-2", site.Name)
	defer second.Client.Close()
	// Due again: the schedule as once the interval has passed.
	sc, err := other.State().Schedule(ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	sc.NextTrigger = time.Time{}
	if err := other.State().SetSchedule(ctx, src.ID, sc); err != nil {
		t.Fatal(err)
	}
	if rep, err := second.Pass(ctx, src.ID); err != nil || !rep.TriggerRead || rep.Deposited != 0 {
		t.Fatalf("second pass: %+v, %v; want the trigger read, nothing left to deposit", rep, err)
	}
	got, err := other.State().Tally(ctx, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	var feeds, notModified int
	for _, q := range web.Requests() {
		if q.Path == "/feed.xml" {
			feeds++
			if q.Status == http.StatusNotModified {
				notModified++
			}
		}
	}
	want := crawl.Tally{Reads: 3, TriggerReads: feeds, NotModified: notModified, Deposits: 3}
	if feeds != 2 || got != want {
		t.Fatalf("tally %+v, want %+v", got, want)
	}
	if err := other.State().Forget(ctx, src.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := base.State().Tally(ctx, src.ID); err != nil || got != (crawl.Tally{}) {
		t.Fatalf("tally after Forget: %+v, %v; want none", got, err)
	}
}
