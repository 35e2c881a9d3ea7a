package crawl

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
)

// The feed-interval floor is 15 minutes, exactly: a source may declare 15
// minutes or more, never a second less; one that declares none is read
// every 15 minutes; and a Crawler refuses a source below the floor before
// sending anything (S2, V7).
func TestSource_S2_V7_FeedIntervalFloorIsFifteenMinutes(t *testing.T) {
	t.Parallel()
	if MinInterval != 15*time.Minute {
		t.Fatalf("MinInterval = %v, want 15m", MinInterval)
	}
	for _, tc := range []struct {
		interval time.Duration
		ok       bool
	}{
		{0, true}, {15 * time.Minute, true}, {20 * time.Minute, true}, {24 * time.Hour, true},
		{15*time.Minute - time.Second, false}, {15*time.Minute - time.Nanosecond, false},
		{14 * time.Minute, false}, {10 * time.Minute, false}, {time.Minute, false},
	} {
		s := validSource()
		s.Interval = Duration(tc.interval)
		err := s.Validate()
		var se *SourceError
		switch {
		case tc.ok && err != nil:
			t.Errorf("interval %v refused: %v", tc.interval, err)
		case !tc.ok && (!errors.As(err, &se) || se.Field != "interval"):
			t.Errorf("interval %v: %v, want a *SourceError naming interval", tc.interval, err)
		}
	}
	if s := validSource(); s.interval() != 15*time.Minute {
		t.Fatalf("a source declaring no interval is read every %v, want 15m", s.interval())
	}

	web := politetest.NewWeb(t)
	site := web.Site("floor.example")
	site.AddArticle(politetest.Article{})
	p := testPolicy(t, StrictNews, testInterval)
	fast := siteSource(site.Name(), StrictNews, false)
	fast.Interval = Duration(10 * time.Minute)
	c := &Crawler{Client: newClient(t, web, p), Sources: []Source{fast}}
	var se *SourceError
	if _, err := c.Pass(context.Background(), fast.ID); !errors.As(err, &se) || se.Field != "interval" {
		t.Fatalf("a Crawler over a 10-minute source: %v, want its *SourceError naming interval", err)
	}
	if n := len(web.Requests()); n != 0 {
		t.Fatalf("%d requests sent for a source below the floor", n)
	}

	clk := clock.NewManual(t0)
	src := siteSource(site.Name(), StrictNews, false)
	c = &Crawler{Client: newClient(t, web, p), Clock: clk, Sources: []Source{src}}
	mustPass(t, c, src.ID)
	sc, err := c.StateStore().Schedule(context.Background(), src.ID)
	if err != nil || !sc.NextTrigger.Equal(t0.Add(15*time.Minute)) {
		t.Fatalf("schedule after a read: %+v, %v; want the trigger next due 15 minutes on", sc, err)
	}
}
