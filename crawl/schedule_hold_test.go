package crawl

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
)

// scheduleDownState is a MemoryState whose SetSchedule fails while down.
type scheduleDownState struct {
	MemoryState
	down atomic.Bool
}

var errSetScheduleDown = errors.New("test: the state store did not take the schedule")

func (s *scheduleDownState) SetSchedule(ctx context.Context, id string, sc Schedule) error {
	if s.down.Load() {
		return errSetScheduleDown
	}
	return s.MemoryState.SetSchedule(ctx, id, sc)
}

// A trigger read that reached the publisher is a read even when the State
// did not take its schedule: Run starts no pass of the source before the
// interval has passed, though the State still says due (V7, S2: a feed
// that refused us, asked again a minute later, would be asked inside its
// cool-down).
func TestCrawler_V7_TriggerReadHeldWhenScheduleNotWritten(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("unwritten.example")
	s.AddArticle(politetest.Article{})
	p := testPolicy(t, StrictNews, testInterval)
	st := &scheduleDownState{}
	st.down.Store(true)
	clk := clock.NewManual(t0)
	src := siteSource(s.Name(), StrictNews, false)
	c := &Crawler{Client: newClient(t, web, p), Clock: clk, Sources: []Source{src}, State: st}
	rep := mustPass(t, c, src.ID)
	if !rep.TriggerRead || rep.Trigger.Err != nil {
		t.Fatalf("pass: %+v, want the trigger read", rep)
	}
	sc, err := st.Schedule(context.Background(), src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sc.NextTrigger.After(t0) {
		t.Fatalf("the State took the schedule: %+v", sc)
	}
	want := rep.Start.Add(src.interval())
	if got := nextStart(context.Background(), rep, nil, rep.End); !got.Equal(want) {
		t.Fatalf("next start %v, want %v: the read's interval, not at once or after RetryAfterError", got, want)
	}
	// A pass that ended in an error is held to the read's interval too, not
	// to RetryAfterError.
	if got := nextStart(context.Background(), rep, errSetScheduleDown, rep.End); !got.Equal(want) {
		t.Errorf("next start after an error %v, want %v", got, want)
	}
	// Once the State takes it, the State decides again.
	st.down.Store(false)
	clk.Advance(src.interval())
	rep = mustPass(t, c, src.ID)
	if got := nextStart(context.Background(), rep, nil, rep.End); !got.IsZero() {
		t.Errorf("next start %v after a written read, want zero (the State's schedule)", got)
	}
	if sc, _ := st.Schedule(context.Background(), src.ID); !sc.NextTrigger.Equal(rep.Start.Add(src.interval())) {
		t.Errorf("schedule %+v, want the second read's", sc)
	}
	audit(t, web, p)
}
