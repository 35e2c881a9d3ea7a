package redis

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/crawl"
)

// TestState_PendingBuiltOnceFromOlderRefs: references stored without the
// pending set (as a version of this package before it wrote them) are
// not given a partial set by a See; the first Pending builds the set from
// them, with the references' retention, and See and Settle keep it from
// then on.
func TestState_PendingBuiltOnceFromOlderRefs(t *testing.T) {
	s := realStore(t)
	s.CallerClock = true
	st := s.State()
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, k := range []string{"c", "b", "a"} {
		if _, _, err := st.See(ctx, "s", crawl.RefState{Key: k, URL: "https://a.example/" + k}, t0.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Settle(ctx, "s", "b", crawl.Excluded, "gated", t0); err != nil {
		t.Fatal(err)
	}
	pk := st.pendingKey("s")
	if err := s.Client.Del(ctx, pk).Err(); err != nil { // as stored before the set was kept
		t.Fatal(err)
	}
	if _, _, err := st.See(ctx, "s", crawl.RefState{Key: "d", URL: "https://a.example/d"}, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := s.Client.Exists(ctx, pk).Val(); n != 0 {
		t.Fatal("a See made a pending set that does not hold the older references")
	}
	checkPendingKeys(t, st, "s", "[c a d]")
	checkMembers(t, s, pk, "[ a c d]")
	if d := s.Client.PTTL(ctx, pk).Val(); d <= 0 {
		t.Fatalf("the built set expires in %v, want the references' retention", d)
	}
	if err := st.Settle(ctx, "s", "a", crawl.Deposited, "", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	checkPendingKeys(t, st, "s", "[c d]")
	checkMembers(t, s, pk, "[ c d]")
}

// TestState_PendingSetOutlivingItsRefs: a pending set left by a
// references hash that expired before it is made anew by the next See, so
// the keys of the references gone do not stay in it.
func TestState_PendingSetOutlivingItsRefs(t *testing.T) {
	s := realStore(t)
	s.CallerClock = true
	st := s.State()
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, _, err := st.See(ctx, "s", crawl.RefState{Key: "old", URL: "https://a.example/old"}, t0); err != nil {
		t.Fatal(err)
	}
	_, _, _, rk := st.keys("s")
	if err := s.Client.Del(ctx, rk).Err(); err != nil { // expired first
		t.Fatal(err)
	}
	checkPendingKeys(t, st, "s", "[]")
	if _, _, err := st.See(ctx, "s", crawl.RefState{Key: "new", URL: "https://a.example/new"}, t0); err != nil {
		t.Fatal(err)
	}
	checkPendingKeys(t, st, "s", "[new]")
	checkMembers(t, s, st.pendingKey("s"), "[ new]")
}

func checkPendingKeys(t *testing.T, st *State, source, want string) {
	t.Helper()
	refs, err := st.Pending(context.Background(), source)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range refs {
		keys = append(keys, r.Key)
	}
	if got := fmt.Sprint(keys); got != want {
		t.Fatalf("Pending(%s) = %s, want %s", source, got, want)
	}
}

func checkMembers(t *testing.T, s *Store, key, want string) {
	t.Helper()
	m, err := s.Client.SMembers(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	if got := fmt.Sprint(m); got != want {
		t.Fatalf("%s holds %s, want %s", key, got, want)
	}
}

// BenchmarkState_PassList is what a pass's list of the references to
// queue costs a source of n references all settled (a source with nothing
// new), on a real redis-server: Refs, which a pass read before Pending
// existed, and Pending, which it reads now. It reports the Redis round
// trips per list and, with -benchmem, the allocations.
func BenchmarkState_PassList(b *testing.B) {
	for _, n := range []int{10, 50, 500} {
		s := realStore(b)
		s.CallerClock = true
		cnt := &counter{}
		s.Client.(*goredis.Client).AddHook(cnt)
		st := s.State()
		ctx := context.Background()
		t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		for i := range n {
			k := fmt.Sprint(i)
			if _, _, err := st.See(ctx, "s", crawl.RefState{Key: k, URL: "https://a.example/" + k, FeedID: k}, t0); err != nil {
				b.Fatal(err)
			}
			if err := st.Settle(ctx, "s", k, crawl.Deposited, "", t0); err != nil {
				b.Fatal(err)
			}
		}
		for _, l := range []struct {
			name string
			list func(context.Context, string) ([]crawl.RefState, error)
		}{{"Refs", st.Refs}, {"Pending", st.Pending}} {
			b.Run(fmt.Sprintf("refs=%d/%s", n, l.name), func(b *testing.B) {
				trips := cnt.trips.Load()
				for b.Loop() {
					if _, err := l.list(ctx, "s"); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cnt.trips.Load()-trips)/float64(b.N), "roundtrips/op")
			})
		}
	}
}
