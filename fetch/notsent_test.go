package fetch

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// flakySchedule is a MemorySchedule whose Acquire fails while down is set, as
// a shared store does while it is unreachable.
type flakySchedule struct {
	MemorySchedule
	down atomic.Bool
}

var errScheduleDown = errors.New("schedule store unreachable")

func (s *flakySchedule) Acquire(ctx context.Context, c Claim) (time.Duration, bool, error) {
	if s.down.Load() {
		return 0, false, errScheduleDown
	}
	return s.MemorySchedule.Acquire(ctx, c)
}

// lossySchedule is a MemorySchedule whose Acquire, while lose is set, is
// carried out but answered with an error, as a shared store's is when its
// answer is lost (a time-out after the script ran).
type lossySchedule struct {
	MemorySchedule
	lose atomic.Bool
}

var errAnswerLost = errors.New("schedule store: answer lost")

func (s *lossySchedule) Acquire(ctx context.Context, c Claim) (time.Duration, bool, error) {
	wait, ok, err := s.MemorySchedule.Acquire(ctx, c)
	if s.lose.Load() {
		return 0, false, errAnswerLost
	}
	return wait, ok, err
}

// TestSchedule_LostGrantIsReleased: a claim the store granted but whose
// answer was lost sends nothing and leaves no lease behind, so the host's
// next request is granted at once rather than a lease's TTL later.
func TestSchedule_LostGrantIsReleased(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	web := politetest.NewWeb(t)
	site := web.Site("news.example")
	path := site.AddArticle(politetest.Article{}).Path
	sched := &lossySchedule{}
	c := newClient(t, web, testPolicy(Vault(), time.Millisecond), WithStores(Stores{Schedule: sched}))
	sched.lose.Store(true)
	if _, err := c.Get(ctx, site.URL(path)); !errors.Is(err, errAnswerLost) {
		t.Fatalf("Get with the store's answer lost = %v, want its error", err)
	}
	if n := len(web.Requests()); n != 0 {
		t.Fatalf("%d requests reached the web on a claim whose grant was lost", n)
	}
	sched.lose.Store(false)
	wait, ok, err := sched.Acquire(ctx, Claim{Key: "news.example", Owner: "probe", Now: time.Now(), Limit: 1, TTL: time.Minute})
	if err != nil || !ok {
		t.Fatalf("a claim after the lost grant = wait %v, ok %v, %v; want granted: the lost grant's lease still holds the host", wait, ok, err)
	}
	if err := sched.Release(ctx, "news.example", "probe", time.Now()); err != nil {
		t.Fatal(err)
	}
	res, err := c.Get(ctx, site.URL(path))
	if err != nil || !res.Complete() {
		t.Fatalf("Get once the store answers = %v, %v; want the page", res, err)
	}
}

// TestRobots_NotSentIsOurs: a robots.txt request that never left the process
// (the shared schedule failed, the host's ledger refused it) refuses the Get
// that needed it and sends nothing, but records nothing in the robots store
// shared with other workers: once our side works, the next Get reads
// robots.txt and the page. Under the vault policy a recorded "unreachable"
// would have kept the host unread for 15 minutes.
func TestRobots_NotSentIsOurs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("schedule down", func(t *testing.T) {
		t.Parallel()
		web := politetest.NewWeb(t)
		site := web.Site("news.example")
		path := site.AddArticle(politetest.Article{}).Path
		sched := &flakySchedule{}
		store := &robots.MemoryStore{}
		c := newClient(t, web, testPolicy(Vault(), time.Millisecond), WithStores(Stores{Schedule: sched}), WithStores(Stores{Robots: store}))
		sched.down.Store(true)
		_, err := c.Get(ctx, site.URL(path))
		if !errors.Is(err, errScheduleDown) || !errors.Is(err, robots.ErrNotSent) {
			t.Fatalf("Get with the schedule down = %v, want its error, robots.txt not requested", err)
		}
		if want := "fetch: robots.txt of news.example not requested, so nothing was sent: schedule store unreachable"; !strings.HasSuffix(err.Error(), want) {
			t.Fatalf("text %q, want it to end with %q", err, want)
		}
		var re *RefusedError
		if errors.As(err, &re) {
			t.Fatalf("Get with the schedule down = %v: a robots refusal, but robots.txt said nothing", err)
		}
		if n := len(web.Requests()); n != 0 {
			t.Fatalf("%d requests reached the web with the schedule down", n)
		}
		if r, ok, _ := store.Get(ctx, "news.example"); ok {
			t.Fatalf("robots store holds %+v for a request never sent", r)
		}
		if _, err := c.Explain(ctx, site.URL(path)); !errors.Is(err, robots.ErrNotSent) {
			t.Fatalf("Explain with the schedule down = %v, want robots.txt not requested", err)
		}
		sched.down.Store(false)
		res, err := c.Get(ctx, site.URL(path))
		if err != nil || !res.Complete() {
			t.Fatalf("Get once the schedule is back = %v, %v; want the page", res, err)
		}
		if !requested(web, "news.example", "/robots.txt") {
			t.Fatal("robots.txt not read")
		}
	})
	t.Run("cooling down", func(t *testing.T) {
		t.Parallel()
		web := politetest.NewWeb(t)
		site := web.Site("cool.example")
		path := site.AddArticle(politetest.Article{}).Path
		store := &robots.MemoryStore{}
		ledger := &backoff.MemoryStore{}
		until := time.Now().Add(time.Hour)
		if err := ledger.Update(ctx, "cool.example", func(backoff.State, bool) (backoff.State, bool) {
			return backoff.State{Strikes: 1, LastStatus: 429, LastAt: time.Now(), Until: until}, true
		}); err != nil {
			t.Fatal(err)
		}
		c := newClient(t, web, testPolicy(Vault(), time.Millisecond), WithStores(Stores{Robots: store}), WithStores(Stores{Ledger: ledger}))
		_, err := c.Get(ctx, site.URL(path))
		if re := refusal(t, err, Cooldown); !re.Until.Equal(until) {
			t.Fatalf("refused until %v, want the cool-down's end %v", re.Until, until)
		}
		if n := len(web.Requests()); n != 0 {
			t.Fatalf("%d requests reached a host cooling down", n)
		}
		if r, ok, _ := store.Get(ctx, "cool.example"); ok {
			t.Fatalf("robots store holds %+v for a request never sent", r)
		}
	})
}
