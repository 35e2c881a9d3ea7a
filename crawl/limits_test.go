package crawl

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// A library user cannot set a limit the crawl's bounds refuse: a
// RefreshGuard of a second (S2: a few minutes, at least one), four reads of
// an article in a pass or eleven deposit failures before a pass stops (V12:
// three and ten), a backlog walked every minute, a negative queue. Every
// call is refused with a *LimitError naming the field and the rule, and
// nothing is sent; zero (the default) and each bound itself are accepted.
func TestCrawler_S2_V12_LimitsRefusedBeyondTheirBounds(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("limits.example")
	s.AddArticle(politetest.Article{})
	p := testPolicy(t, Vault, testInterval)
	client := newClient(t, web, p)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		field, rule string
		set         func(*Crawler)
	}{
		{"RefreshGuard", "shorter than 1m0s", func(c *Crawler) { c.RefreshGuard = time.Second }},
		{"RefreshGuard", "shorter than 1m0s", func(c *Crawler) { c.RefreshGuard = -time.Minute }},
		{"BacklogInterval", "shorter than 1h0m0s", func(c *Crawler) { c.BacklogInterval = time.Minute }},
		{"LeaseTTL", "shorter than 1s", func(c *Crawler) { c.LeaseTTL = time.Millisecond }},
		{"MaxReads", "from 1 to 3 reads", func(c *Crawler) { c.MaxReads = 4 }},
		{"MaxReads", "from 1 to 3 reads", func(c *Crawler) { c.MaxReads = -1 }},
		{"MaxFailures", "from 1 to 10 consecutive", func(c *Crawler) { c.MaxFailures = 11 }},
		{"HostQueue", "negative", func(c *Crawler) { c.HostQueue = -1 }},
		{"QueueSize", "negative", func(c *Crawler) { c.QueueSize = -1 }},
		{"Extractors", "negative", func(c *Crawler) { c.Extractors = -1 }},
		{"Starting", "negative", func(c *Crawler) { c.Starting = -1 }},
	} {
		c := &Crawler{Client: client, Sources: []Source{siteSource(s.Name(), Vault, false)}}
		tc.set(c)
		if err := (&Crawler{}).CheckLimits(); err != nil {
			t.Fatalf("the zero Crawler's limits: %v", err)
		}
		var noClient Crawler
		tc.set(&noClient)
		if err := noClient.CheckLimits(); !errors.Is(err, ErrInvalidLimit) {
			t.Errorf("CheckLimits without a Client, %s out of bounds: %v", tc.field, err)
		}
		for name, call := range map[string]func() error{
			"Pass":    func() error { _, err := c.Pass(context.Background(), s.Name()); return err },
			"Refresh": func() error { _, err := c.Refresh(context.Background(), s.Name()); return err },
			"RunOnce": func() error { _, err := c.RunOnce(context.Background()); return err },
			"Run":     func() error { return c.Run(ended) }, // refused before it looks at ctx
		} {
			err := call()
			var le *LimitError
			if !errors.As(err, &le) || !errors.Is(err, ErrInvalidLimit) || le.Field != tc.field || !strings.Contains(le.Reason, tc.rule) {
				t.Errorf("%s with %s out of bounds: %v, want a *LimitError on %s saying %q", name, tc.field, err, tc.field, tc.rule)
			}
		}
	}
	if n := len(web.Requests()); n != 0 {
		t.Fatalf("%d requests sent by crawlers refused at configuration", n)
	}
	// The bounds themselves are accepted.
	c := &Crawler{Client: client, Sources: []Source{siteSource(s.Name(), Vault, false)}, RefreshGuard: MinRefreshGuard,
		BacklogInterval: MinBacklogInterval, LeaseTTL: MinLeaseTTL, MaxReads: DefaultMaxReads, MaxFailures: DefaultMaxFailures}
	if rep, err := c.Pass(context.Background(), s.Name()); err != nil || rep.Deposited != 1 {
		t.Fatalf("a crawler at its bounds: %+v, %v; want one deposit", rep, err)
	}
}
