// Package crawltest holds the conformance suites every implementation of
// crawl's pluggable stores must pass: Run for a [crawl.State], RunDeposits
// for [crawl.Deposits]. A backend's test calls them with a constructor of
// fresh, empty stores:
//
//	func TestState(t *testing.T) {
//		crawltest.Run(t, func(t *testing.T) crawl.State { return newSQLiteState(t) })
//	}
//
// Every suite runs its cases as parallel subtests, each on its own store.
package crawltest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/feed"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Run checks that the States newState returns behave as crawl.State
// documents: schedules, the pass lease (with many owners contending at
// once), references and their first-seen instants, the pending ones
// (Pending), per-pass attempt and failure counters, and withdrawal; and,
// for a State that is a crawl.Tallier, each source's tally.
func Run(t *testing.T, newState func(t *testing.T) crawl.State) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, st crawl.State)
	}{
		{"ScheduleRoundTrip", testSchedule},
		{"LeaseExclusive", testLeaseExclusive},
		{"LeaseExpiresAndRenews", testLeaseRenew},
		{"LeaseContention", testLeaseContention},
		{"RefsFirstSeen", testRefs},
		{"SettleKeepsOutcome", testSettle},
		{"Pending", testPending},
		{"AttemptsPerPass", testAttempts},
		{"AttemptsConcurrent", testAttemptsConcurrent},
		{"FailuresConsecutive", testFailures},
		{"ForgetWithdraws", testForget},
		{"SourcesIndependent", testIndependent},
		{"TallyCountsWhatItRecords", testTally},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newState(t))
		})
	}
}

// ok returns v, failing t on err: ok(st.Schedule(ctx, "s"))(t).
func ok[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func testSchedule(t *testing.T, st crawl.State) {
	ctx := context.Background()
	if got := ok(st.Schedule(ctx, "s"))(t); got != (crawl.Schedule{}) {
		t.Fatalf("unknown source's schedule = %+v, want zero", got)
	}
	want := crawl.Schedule{LastTrigger: t0, NextTrigger: t0.Add(15 * time.Minute), LastBacklog: t0, NextBacklog: t0.Add(24 * time.Hour),
		Embargo: t0.Add(3 * time.Hour), Slowed: t0.Add(time.Hour)}
	if err := st.SetSchedule(ctx, "s", want); err != nil {
		t.Fatal(err)
	}
	got := ok(st.Schedule(ctx, "s"))(t)
	if !got.LastTrigger.Equal(want.LastTrigger) || !got.NextTrigger.Equal(want.NextTrigger) ||
		!got.LastBacklog.Equal(want.LastBacklog) || !got.NextBacklog.Equal(want.NextBacklog) ||
		!got.Embargo.Equal(want.Embargo) || !got.Slowed.Equal(want.Slowed) {
		t.Fatalf("schedule = %+v, want %+v", got, want)
	}
}

func testLeaseExclusive(t *testing.T, st crawl.State) {
	ctx := context.Background()
	l := ok(st.AcquireLease(ctx, "s", "a", t0, time.Minute))(t)
	if l.Owner != "a" || !l.Expires.Equal(t0.Add(time.Minute)) || l.Pass == 0 {
		t.Fatalf("lease = %+v", l)
	}
	_, err := st.AcquireLease(ctx, "s", "b", t0.Add(59*time.Second), time.Minute)
	var le *crawl.LeaseError
	if !errors.Is(err, crawl.ErrLeaseHeld) || !errors.As(err, &le) || le.Held.Owner != "a" {
		t.Fatalf("second owner: %v, want ErrLeaseHeld naming a", err)
	}
	if _, err := st.AcquireLease(ctx, "s", "a", t0.Add(time.Second), time.Minute); !errors.Is(err, crawl.ErrLeaseHeld) {
		t.Fatalf("holder re-acquiring: %v, want ErrLeaseHeld", err)
	}
	if _, err := st.RenewLease(ctx, "s", "b", t0, time.Minute); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Fatalf("non-holder renewing: %v, want ErrLeaseLost", err)
	}
	if err := st.ReleaseLease(ctx, "s", "b"); err != nil {
		t.Fatalf("releasing another's lease: %v", err)
	}
	if _, err := st.AcquireLease(ctx, "s", "b", t0.Add(time.Second), time.Minute); !errors.Is(err, crawl.ErrLeaseHeld) {
		t.Fatalf("a non-holder's release freed the lease: %v", err)
	}
	if err := st.ReleaseLease(ctx, "s", "a"); err != nil {
		t.Fatal(err)
	}
	l2 := ok(st.AcquireLease(ctx, "s", "b", t0.Add(2*time.Second), time.Minute))(t)
	if l2.Owner != "b" || l2.Pass <= l.Pass {
		t.Fatalf("after release: %+v, want b in a later pass than %d", l2, l.Pass)
	}
}

func testLeaseRenew(t *testing.T, st crawl.State) {
	ctx := context.Background()
	l := ok(st.AcquireLease(ctx, "s", "a", t0, time.Minute))(t)
	r := ok(st.RenewLease(ctx, "s", "a", t0.Add(50*time.Second), time.Minute))(t)
	if !r.Expires.Equal(t0.Add(110*time.Second)) || r.Pass != l.Pass {
		t.Fatalf("renewed = %+v", r)
	}
	if _, err := st.AcquireLease(ctx, "s", "b", t0.Add(100*time.Second), time.Minute); !errors.Is(err, crawl.ErrLeaseHeld) {
		t.Fatalf("renewed lease taken: %v", err)
	}
	// Expired: anyone may take it, and the old holder has lost it.
	b := ok(st.AcquireLease(ctx, "s", "b", t0.Add(110*time.Second), time.Minute))(t)
	if b.Owner != "b" || b.Pass <= l.Pass {
		t.Fatalf("after expiry: %+v", b)
	}
	if _, err := st.RenewLease(ctx, "s", "a", t0.Add(111*time.Second), time.Minute); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Fatalf("old holder renewing: %v, want ErrLeaseLost", err)
	}
	if _, err := st.RenewLease(ctx, "s", "b", t0.Add(170*time.Second), time.Minute); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Fatalf("renewing an expired lease: %v, want ErrLeaseLost", err)
	}
}

// testLeaseContention: many owners race for one lease at one instant;
// exactly one wins.
func testLeaseContention(t *testing.T, st crawl.State) {
	ctx := context.Background()
	const owners = 32
	for round := range 5 {
		now := t0.Add(time.Duration(round) * time.Hour)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var winners []string
		for i := range owners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := fmt.Sprintf("owner-%d", i)
				_, err := st.AcquireLease(ctx, "s", owner, now, time.Minute)
				switch {
				case err == nil:
					mu.Lock()
					winners = append(winners, owner)
					mu.Unlock()
				case !errors.Is(err, crawl.ErrLeaseHeld):
					t.Errorf("%s: %v", owner, err)
				}
			}()
		}
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("round %d: %d owners won the lease: %v", round, len(winners), winners)
		}
	}
}

func testRefs(t *testing.T, st crawl.State) {
	ctx := context.Background()
	if _, ok := must2(t)(st.Ref(ctx, "s", "1")); ok {
		t.Fatal("unknown ref found")
	}
	ex := &feed.Excerpt{Label: feed.ExcerptLabel, Headline: "H", Link: "https://a.example/1", ID: "1"}
	r, created := see(t, st, "s", crawl.RefState{Key: "1", URL: "https://a.example/1", FeedID: "1", Excerpt: ex}, t0)
	if !created || !r.FirstSeen.Equal(t0) || r.FeedID != "1" || r.Outcome != crawl.Pending {
		t.Fatalf("first See = %+v, created %v", r, created)
	}
	ex.Headline = "changed by the caller"
	r, created = see(t, st, "s", crawl.RefState{Key: "1", ListID: "1"}, t0.Add(time.Hour))
	if created {
		t.Fatal("a second See created the record again")
	}
	if !r.FirstSeen.Equal(t0) || r.FeedID != "1" || r.ListID != "1" || r.URL != "https://a.example/1" {
		t.Fatalf("second See = %+v: first-seen and earlier fields must stay", r)
	}
	if r.Excerpt == nil || r.Excerpt.Headline != "H" {
		t.Fatalf("excerpt = %+v, want the one stored", r.Excerpt)
	}
	see(t, st, "s", crawl.RefState{Key: "0", URL: "https://a.example/0"}, t0.Add(time.Hour))
	see(t, st, "s", crawl.RefState{Key: "2", URL: "https://a.example/2"}, t0.Add(time.Minute))
	refs := ok(st.Refs(ctx, "s"))(t)
	var keys []string
	for _, r := range refs {
		keys = append(keys, r.Key)
	}
	if fmt.Sprint(keys) != "[1 2 0]" {
		t.Fatalf("Refs order = %v, want [1 2 0] (first seen, then key)", keys)
	}
	got, ok := must2(t)(st.Ref(ctx, "s", "2"))
	if !ok || !got.FirstSeen.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Ref = %+v, %v", got, ok)
	}
}

// testPending: Pending returns exactly the references no Settle has
// ended, in Refs' order (first seen, then key), as Refs returns them; a
// settled reference seen again stays out, a new one comes in, another
// source's stay apart, and Forget empties it.
func testPending(t *testing.T, st crawl.State) {
	ctx := context.Background()
	if got := ok(st.Pending(ctx, "s"))(t); len(got) != 0 {
		t.Fatalf("unknown source's Pending = %v, want none", got)
	}
	ex := &feed.Excerpt{Label: feed.ExcerptLabel, Headline: "H", Link: "https://a.example/a", ID: "a"}
	for i, k := range []string{"g", "e", "f", "a", "b", "c", "d"} {
		see(t, st, "s", crawl.RefState{Key: k, URL: "https://a.example/" + k, FeedID: k, Excerpt: ex}, t0.Add(time.Duration(i/2)*time.Minute))
	}
	see(t, st, "other", crawl.RefState{Key: "x", URL: "https://b.example/x"}, t0)
	settled := map[string]crawl.Outcome{"a": crawl.Deposited, "b": crawl.Excerpted, "c": crawl.Excluded, "d": crawl.Mismatch}
	for k, o := range settled {
		if err := st.Settle(ctx, "s", k, o, "note "+k, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	checkPending(t, st, "s", "[e g f]") // g and e were first seen together
	// a settled, seen again; h new.
	see(t, st, "s", crawl.RefState{Key: "a", ListID: "a"}, t0.Add(2*time.Hour))
	see(t, st, "s", crawl.RefState{Key: "h", URL: "https://a.example/h"}, t0.Add(2*time.Hour))
	if err := st.Settle(ctx, "s", "f", crawl.Excluded, "", t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	checkPending(t, st, "s", "[e g h]")
	checkPending(t, st, "other", "[x]")
	if err := st.Forget(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	checkPending(t, st, "s", "[]")
	see(t, st, "s", crawl.RefState{Key: "a", URL: "https://a.example/a"}, t0.Add(3*time.Hour))
	checkPending(t, st, "s", "[a]")
	checkPending(t, st, "other", "[x]")
}

// checkPending fails t unless source's Pending gives the keys want (as
// fmt prints a []string) and each record as Refs gives it.
func checkPending(t *testing.T, st crawl.State, source, want string) {
	t.Helper()
	ctx := context.Background()
	got := ok(st.Pending(ctx, source))(t)
	var keys []string
	for _, r := range got {
		keys = append(keys, r.Key)
	}
	if fmt.Sprint(keys) != want {
		t.Fatalf("Pending(%s) = %v, want %s", source, keys, want)
	}
	var fromRefs []crawl.RefState
	for _, r := range ok(st.Refs(ctx, source))(t) {
		if r.Outcome == crawl.Pending {
			fromRefs = append(fromRefs, r)
		}
	}
	if describe(got) != describe(fromRefs) {
		t.Fatalf("Pending(%s) = %s,\nRefs' pending ones are %s", source, describe(got), describe(fromRefs))
	}
}

// describe prints refs' fields, for comparing two lists.
func describe(refs []crawl.RefState) string {
	s := ""
	for _, r := range refs {
		s += fmt.Sprintf("{%s %s %s %s %s %v %s %s}", r.Key, r.URL, r.FeedID, r.ListID, r.FirstSeen.UTC(), r.Outcome, r.Note, r.Settled.UTC())
		if r.Excerpt != nil {
			s += r.Excerpt.Headline
		}
	}
	return s
}

// see calls st.See, failing t on an error.
func see(t *testing.T, st crawl.State, source string, ref crawl.RefState, now time.Time) (crawl.RefState, bool) {
	t.Helper()
	r, created, err := st.See(context.Background(), source, ref, now)
	if err != nil {
		t.Fatal(err)
	}
	return r, created
}

func must2(t *testing.T) func(crawl.RefState, bool, error) (crawl.RefState, bool) {
	return func(r crawl.RefState, ok bool, err error) (crawl.RefState, bool) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r, ok
	}
}

func testSettle(t *testing.T, st crawl.State) {
	ctx := context.Background()
	see(t, st, "s", crawl.RefState{Key: "1", URL: "https://a.example/1"}, t0)
	if err := st.Settle(ctx, "s", "1", crawl.Mismatch, "feed 1, list 2, article 1", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	see(t, st, "s", crawl.RefState{Key: "1", FeedID: "1"}, t0.Add(time.Hour))
	r, _ := must2(t)(st.Ref(ctx, "s", "1"))
	if r.Outcome != crawl.Mismatch || r.Note != "feed 1, list 2, article 1" || !r.Settled.Equal(t0.Add(time.Minute)) {
		t.Fatalf("settled ref = %+v: seeing it again must not unsettle it", r)
	}
	if err := st.Settle(ctx, "s", "nope", crawl.Deposited, "", t0); err == nil {
		t.Fatal("settling an unknown ref succeeded")
	}
}

func testAttempts(t *testing.T, st crawl.State) {
	ctx := context.Background()
	l := ok(st.AcquireLease(ctx, "s", "a", t0, time.Minute))(t)
	for want := 1; want <= 3; want++ {
		if got := ok(st.Attempt(ctx, "s", l.Pass, "1"))(t); got != want {
			t.Fatalf("attempt %d counted %d", want, got)
		}
	}
	if got := ok(st.Attempt(ctx, "s", l.Pass, "2"))(t); got != 1 {
		t.Fatalf("other article's first attempt counted %d", got)
	}
	if err := st.ReleaseLease(ctx, "s", "a"); err != nil {
		t.Fatal(err)
	}
	l2 := ok(st.AcquireLease(ctx, "s", "a", t0.Add(time.Hour), time.Minute))(t)
	if got := ok(st.Attempt(ctx, "s", l2.Pass, "1"))(t); got != 1 {
		t.Fatalf("a new pass's first attempt counted %d, want 1", got)
	}
	if _, err := st.Attempt(ctx, "s", l.Pass, "1"); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Fatalf("an attempt in an older pass: %v, want ErrLeaseLost", err)
	}
	if _, err := st.Failure(ctx, "s", l.Pass, true); !errors.Is(err, crawl.ErrLeaseLost) {
		t.Fatalf("a failure in an older pass: %v, want ErrLeaseLost", err)
	}
}

func testAttemptsConcurrent(t *testing.T, st crawl.State) {
	ctx := context.Background()
	l := ok(st.AcquireLease(ctx, "s", "a", t0, time.Minute))(t)
	const n = 50
	seen := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := st.Attempt(ctx, "s", l.Pass, "1")
			if err != nil {
				t.Error(err)
			}
			seen <- c
		}()
	}
	wg.Wait()
	close(seen)
	got := map[int]bool{}
	for c := range seen {
		if got[c] {
			t.Fatalf("count %d returned twice: the increment is not atomic", c)
		}
		got[c] = true
	}
	for i := 1; i <= n; i++ {
		if !got[i] {
			t.Fatalf("count %d never returned", i)
		}
	}
}

func testFailures(t *testing.T, st crawl.State) {
	ctx := context.Background()
	l := ok(st.AcquireLease(ctx, "s", "a", t0, time.Minute))(t)
	for want := 1; want <= 4; want++ {
		if got := ok(st.Failure(ctx, "s", l.Pass, true))(t); got != want {
			t.Fatalf("failure %d counted %d", want, got)
		}
	}
	if got := ok(st.Failure(ctx, "s", l.Pass, false))(t); got != 0 {
		t.Fatalf("a success left %d consecutive failures", got)
	}
	ok(st.Failure(ctx, "s", l.Pass, true))(t)
	if err := st.ReleaseLease(ctx, "s", "a"); err != nil {
		t.Fatal(err)
	}
	l2 := ok(st.AcquireLease(ctx, "s", "a", t0.Add(time.Hour), time.Minute))(t)
	if got := ok(st.Failure(ctx, "s", l2.Pass, true))(t); got != 1 {
		t.Fatalf("new pass's first failure counted %d, want 1", got)
	}
}

func testForget(t *testing.T, st crawl.State) {
	ctx := context.Background()
	see(t, st, "s", crawl.RefState{Key: "1", URL: "https://a.example/1"}, t0)
	if err := st.SetSchedule(ctx, "s", crawl.Schedule{LastTrigger: t0}); err != nil {
		t.Fatal(err)
	}
	l := ok(st.AcquireLease(ctx, "s", "a", t0, time.Minute))(t)
	if err := st.ReleaseLease(ctx, "s", "a"); err != nil {
		t.Fatal(err)
	}
	if err := st.Forget(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if refs := ok(st.Refs(ctx, "s"))(t); len(refs) != 0 {
		t.Fatalf("refs after Forget: %v", refs)
	}
	if sc := ok(st.Schedule(ctx, "s"))(t); !sc.LastTrigger.IsZero() {
		t.Fatalf("schedule after Forget: %+v", sc)
	}
	l2 := ok(st.AcquireLease(ctx, "s", "a", t0.Add(time.Hour), time.Minute))(t)
	if l2.Pass <= l.Pass {
		t.Fatalf("pass after Forget = %d, want more than %d: pass numbers never repeat", l2.Pass, l.Pass)
	}
}

func testIndependent(t *testing.T, st crawl.State) {
	ctx := context.Background()
	ok(st.AcquireLease(ctx, "s1", "a", t0, time.Minute))(t)
	if _, err := st.AcquireLease(ctx, "s2", "b", t0, time.Minute); err != nil {
		t.Fatalf("one source's lease blocked another's: %v", err)
	}
	see(t, st, "s1", crawl.RefState{Key: "1"}, t0)
	if _, ok := must2(t)(st.Ref(ctx, "s2", "1")); ok {
		t.Fatal("a reference leaked across sources")
	}
	if err := st.Forget(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	if _, ok := must2(t)(st.Ref(ctx, "s1", "1")); !ok {
		t.Fatal("forgetting s2 removed s1's reference")
	}
}

// testTally: a Tallier counts a read per Attempt, an outcome once when a
// pending reference is settled (never again when settled anew), a deposit
// failure per Failure(true), adds what AddTally is given, keeps sources
// apart, and forgets a withdrawn source's tally.
func testTally(t *testing.T, st crawl.State) {
	tl, isTallier := st.(crawl.Tallier)
	if !isTallier {
		t.Skip("not a crawl.Tallier")
	}
	ctx := context.Background()
	if got := ok(tl.Tally(ctx, "s"))(t); got != (crawl.Tally{}) {
		t.Fatalf("unknown source's tally = %+v, want zero", got)
	}
	l := ok(st.AcquireLease(ctx, "s", "a", t0, time.Minute))(t)
	for _, k := range []string{"1", "2", "3", "4", "5"} {
		see(t, st, "s", crawl.RefState{Key: k, URL: "https://a.example/" + k}, t0)
	}
	for _, k := range []string{"1", "1", "2", "3"} {
		ok(st.Attempt(ctx, "s", l.Pass, k))(t)
	}
	for k, o := range map[string]crawl.Outcome{"1": crawl.Deposited, "2": crawl.Excerpted, "3": crawl.Excluded, "4": crawl.Mismatch} {
		if err := st.Settle(ctx, "s", k, o, "", t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Settle(ctx, "s", "1", crawl.Deposited, "", t0); err != nil { // again: counted once
		t.Fatal(err)
	}
	ok(st.Failure(ctx, "s", l.Pass, true))(t)
	ok(st.Failure(ctx, "s", l.Pass, true))(t)
	ok(st.Failure(ctx, "s", l.Pass, false))(t)
	if err := tl.AddTally(ctx, "s", crawl.Tally{TriggerReads: 2, NotModified: 1, RobotsReads: 1, ImageReads: 3, Refusals: 4, Failures: 5}); err != nil {
		t.Fatal(err)
	}
	want := crawl.Tally{Reads: 4, TriggerReads: 2, NotModified: 1, RobotsReads: 1, ImageReads: 3, Deposits: 1, Excerpts: 1,
		Excluded: 1, Mismatches: 1, Refusals: 4, Failures: 5, DepositFailures: 2}
	if got := ok(tl.Tally(ctx, "s"))(t); got != want {
		t.Fatalf("tally = %+v,\nwant %+v", got, want)
	}
	if got := ok(tl.Tally(ctx, "other"))(t); got != (crawl.Tally{}) {
		t.Fatalf("another source's tally = %+v, want zero", got)
	}
	if err := st.Forget(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if got := ok(tl.Tally(ctx, "s"))(t); got != (crawl.Tally{}) {
		t.Fatalf("tally after Forget = %+v, want zero", got)
	}
}
