package crawl_test

import (
	"errors"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
)

// TestSource_S2_V7_FeedIntervalAtLeast15Min: a feed is read every 15 minutes
// or less often, to the minute: a source declaring 15 min is valid, one
// declaring 14 min 59 s (or 10 min) is refused, naming its interval.
func TestSource_S2_V7_FeedIntervalAtLeast15Min(t *testing.T) {
	t.Parallel()
	src := func(d time.Duration) crawl.Source {
		return crawl.Source{
			ID: "daily", Name: "The Daily",
			Trigger:  crawl.Trigger{Feeds: []string{"https://daily.example/feed.xml"}},
			Admitted: []string{"daily.example"},
			Policy:   crawl.PolicySpec{Preset: crawl.StrictNews},
			Interval: crawl.Duration(d),
		}
	}
	for _, d := range []time.Duration{0, 15 * time.Minute, time.Hour} {
		s := src(d)
		if err := s.Validate(); err != nil {
			t.Errorf("interval %v: %v", d, err)
		}
	}
	for _, d := range []time.Duration{15*time.Minute - time.Second, 10 * time.Minute, time.Minute} {
		s := src(d)
		var se *crawl.SourceError
		if err := s.Validate(); !errors.As(err, &se) || se.Field != "interval" {
			t.Errorf("interval %v: %v, want the interval refused", d, err)
		}
	}
}
