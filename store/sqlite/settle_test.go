package sqlite

import (
	"strconv"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/feed"
)

// TestDeposits_V12_PutSettlesItsReference: a full deposit settles its
// pending reference as deposited in the deposit's own transaction (a kill
// right after the Put leaves nothing to read again), and the crawler's
// Settle that follows keeps it so; an excerpt deposit settles nothing, and
// a reference settled otherwise before is left as it was.
func TestDeposits_V12_PutSettlesItsReference(t *testing.T) {
	db := openTest(t, nil)
	st, deps := db.CrawlState(), db.Deposits()
	now := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	for _, k := range []string{"full", "excerpt", "excluded"} {
		if _, _, err := st.See(ctx, "s", crawl.RefState{Key: k, URL: "https://news.example/" + k}, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Settle(ctx, "s", "excluded", crawl.Excluded, "gated", now); err != nil {
		t.Fatal(err)
	}
	put := func(d *crawl.Deposit) {
		t.Helper()
		if d.Digest == "" {
			d.Digest = d.Sum()
		}
		if _, err := deps.Put(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	outcome := func(k string) crawl.Outcome {
		t.Helper()
		r, ok, err := st.Ref(ctx, "s", k)
		if err != nil || !ok {
			t.Fatalf("Ref(%s) = %v, %v", k, ok, err)
		}
		return r.Outcome
	}
	full := benchDeposit(1)
	full.Source, full.Key = "s", "full"
	put(full)
	if got := outcome("full"); got != crawl.Deposited {
		t.Errorf("after the full deposit's Put: %v, want deposited", got)
	}
	if err := st.Settle(ctx, "s", "full", crawl.Deposited, "", now); err != nil || outcome("full") != crawl.Deposited {
		t.Errorf("Settle after the Put: %v, %v", err, outcome("full"))
	}
	put(&crawl.Deposit{Source: "s", Key: "excerpt", URL: "https://news.example/excerpt", ReadAt: now, Excerpt: &feed.Excerpt{Headline: "t"}})
	if got := outcome("excerpt"); got != crawl.Pending {
		t.Errorf("after an excerpt deposit: %v, want pending", got)
	}
	gated := benchDeposit(2)
	gated.Source, gated.Key = "s", "excluded"
	put(gated)
	if got := outcome("excluded"); got != crawl.Excluded {
		t.Errorf("a reference settled before, after a deposit of it: %v, want excluded still", got)
	}
	if err := st.Settle(ctx, "s", "unknown", crawl.Deposited, "", now); err == nil {
		t.Error("Settle of an unknown reference succeeded")
	}
}

// TestDeposits_PutSettledRemembered: the Settle that follows a full
// deposit's Put, which settled its reference, is answered from memory
// (the reference is remembered from the Put's commit until that Settle);
// a Put that settled nothing (its reference settled otherwise before) is
// not remembered, and its Settle reads the file.
func TestDeposits_PutSettledRemembered(t *testing.T) {
	db := openTest(t, nil)
	st, deps := db.CrawlState(), db.Deposits()
	now := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	for _, k := range []string{"full", "excluded"} {
		if _, _, err := st.See(ctx, "s", crawl.RefState{Key: k, URL: "https://news.example/" + k}, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Settle(ctx, "s", "excluded", crawl.Excluded, "gated", now); err != nil {
		t.Fatal(err)
	}
	remembered := func(k string) bool {
		db.putSettled.mu.Lock()
		defer db.putSettled.mu.Unlock()
		_, ok := db.putSettled.m[refID{"s", k}]
		return ok
	}
	for _, k := range []string{"full", "excluded"} {
		d := benchDeposit(int64(len(k)))
		d.Source, d.Key = "s", k
		if _, err := deps.Put(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if !remembered("full") || remembered("excluded") {
		t.Fatalf("after the Puts: full remembered %v, excluded %v; want true, false", remembered("full"), remembered("excluded"))
	}
	if err := st.Settle(ctx, "s", "full", crawl.Deposited, "", now); err != nil || remembered("full") {
		t.Fatalf("Settle after the Put: %v, still remembered %v", err, remembered("full"))
	}
	if err := st.Settle(ctx, "s", "excluded", crawl.Deposited, "", now); err != nil {
		t.Fatal(err)
	}
	if r, _, err := st.Ref(ctx, "s", "excluded"); err != nil || r.Outcome != crawl.Deposited {
		t.Fatalf("Settle of a reference its Put did not settle: %v, %v; want it written", r.Outcome, err)
	}
}

// TestDeposits_PutSettledForgotten: a reference whose Put settled it, then
// forgotten with its source and seen anew (pending), is written as
// deposited by its Settle, not answered from what the old Put left.
func TestDeposits_PutSettledForgotten(t *testing.T) {
	db := openTest(t, nil)
	st, deps := db.CrawlState(), db.Deposits()
	now := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	ref := crawl.RefState{Key: "k", URL: "https://news.example/k"}
	if _, _, err := st.See(ctx, "s", ref, now); err != nil {
		t.Fatal(err)
	}
	d := benchDeposit(1)
	d.Source, d.Key = "s", "k"
	if _, err := deps.Put(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := st.Forget(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.See(ctx, "s", ref, now); err != nil {
		t.Fatal(err)
	}
	if err := st.Settle(ctx, "s", "k", crawl.Deposited, "", now); err != nil {
		t.Fatal(err)
	}
	if r, _, err := st.Ref(ctx, "s", "k"); err != nil || r.Outcome != crawl.Deposited {
		t.Fatalf("Settle after Forget and See: outcome %v, %v; want it written as deposited", r.Outcome, err)
	}
}

// TestPutSettled_FullStartsAfresh: past maxPutSettled references kept, the
// set starts afresh with the new one, so that references whose Settle never
// came neither fill it for good nor stay.
func TestPutSettled_FullStartsAfresh(t *testing.T) {
	var p putSettled
	for i := range maxPutSettled {
		p.add(refID{"s", strconv.Itoa(i)})
	}
	p.add(refID{"s", "last"})
	if len(p.m) != 1 || !p.take(refID{"s", "last"}) || p.take(refID{"s", "0"}) {
		t.Fatalf("after %d references and one more: %d kept; want only the last", maxPutSettled, len(p.m))
	}
}
