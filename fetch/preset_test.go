package fetch

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/internal/clock"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// TestPresets_BuiltFromTheirPackages: each fetch preset holds the robots.txt
// and refusal policies of its document as robots and backoff define them,
// not a restatement of them, and says in fields (not in its name) what a
// crawler keeps and checks.
func TestPresets_BuiltFromTheirPackages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                           string
		p                              Policy
		robots                         robots.Policy
		backoff                        backoff.Policy
		excerpts, images, noCredential bool
	}{
		{"strict-news", StrictNews(), robots.StrictNews(), backoff.StrictNews(), true, true, true},
		{"digest", Digest(), robots.Digest(), backoff.Digest(), true, false, false},
		{"vault", Vault(), robots.Vault(), backoff.Vault(), false, false, false},
	} {
		if tc.p.Robots != tc.robots {
			t.Errorf("%s: robots %+v, want robots' preset %+v", tc.name, tc.p.Robots, tc.robots)
		}
		if !reflect.DeepEqual(tc.p.Backoff, tc.backoff) {
			t.Errorf("%s: backoff %+v, want backoff's preset %+v", tc.name, tc.p.Backoff, tc.backoff)
		}
		if tc.p.KeepExcerpts != tc.excerpts || tc.p.CheckShareImages != tc.images || tc.p.NoCredential != tc.noCredential {
			t.Errorf("%s: KeepExcerpts %v CheckShareImages %v NoCredential %v", tc.name, tc.p.KeepExcerpts, tc.p.CheckShareImages, tc.p.NoCredential)
		}
	}
}

// TestPreset_S3_StrictNewsRobots: the strict news preset reads robots.txt
// with 401, 403 and 429 disallowing the site, cached one hour, and hands
// exactly that to the Client's robots.txt cache.
func TestPreset_S3_StrictNewsRobots(t *testing.T) {
	t.Parallel()
	s := StrictNews()
	if s.Robots.TTL != time.Hour || s.Robots.Status != robots.Strict {
		t.Fatalf("strict news robots policy %+v, want Strict cached 1h", s.Robots)
	}
	for _, st := range []int{401, 403, 429, 500} {
		if got := s.Robots.Status.Decide(st, nil); got != robots.DisallowAll {
			t.Errorf("robots.txt %d: %v, want disallow-all", st, got)
		}
	}
	c, err := New(withIdentity(s))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.robots.Policy != s.Robots {
		t.Fatalf("the cache got %+v, want %+v", c.robots.Policy, s.Robots)
	}
}

// TestPreset_D2_DigestInterval: the digest preset spaces requests 2 to 5 s,
// one in flight, per host.
func TestPreset_D2_DigestInterval(t *testing.T) {
	t.Parallel()
	d := Digest()
	if d.Interval != 2*time.Second || d.IntervalMax != 5*time.Second || d.InFlight != 1 || d.PerSite {
		t.Fatalf("digest pacing: interval %v..%v, %d in flight, per site %v; want 2s..5s, 1, per host",
			d.Interval, d.IntervalMax, d.InFlight, d.PerSite)
	}
}

// pacingKeys reads robots.txt of a.news.example at the start, then, a
// second later, of b.news.example, under p on a manual clock; it returns
// the next pacing slot of a.news.example after the second read, and the
// start.
func pacingAfterTwoHosts(t *testing.T, p Policy) (next, start time.Time) {
	t.Helper()
	web := politetest.NewWeb(t)
	a, b := web.Site("a.news.example"), web.Site("b.news.example")
	start = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := clock.NewManual(start)
	c := newClient(t, web, withIdentity(p), WithClock(clk))
	ctx := context.Background()
	if _, err := c.Explain(ctx, a.URL("/x")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(p.IntervalMax + p.Interval) // past any band: b's turn is due, per host or per site
	if _, err := c.Explain(ctx, b.URL("/y")); err != nil {
		t.Fatal(err)
	}
	e, err := c.Explain(ctx, a.URL("/z"))
	if err != nil {
		t.Fatal(err)
	}
	return e.NextSlot, clk.Now()
}

// TestPreset_S2_StrictNewsOneBudgetPerSite: under the strict news preset two
// hosts of one registrable domain share one budget: once b.news.example was
// read, a.news.example's next turn is an interval later too.
func TestPreset_S2_StrictNewsOneBudgetPerSite(t *testing.T) {
	t.Parallel()
	next, now := pacingAfterTwoHosts(t, StrictNews())
	if next.Sub(now) < time.Second {
		t.Fatalf("a.news.example may go %v after b.news.example was read: two hosts of one site are paced apart", next.Sub(now))
	}
}

// TestPreset_D2_DigestPacesEachHost: "per domain" in the digest document is
// the host a URL names: reading b.news.example does not delay
// a.news.example (each host has its own bucket and connection).
func TestPreset_D2_DigestPacesEachHost(t *testing.T) {
	t.Parallel()
	next, now := pacingAfterTwoHosts(t, Digest())
	if next.After(now) {
		t.Fatalf("a.news.example waits %v after b.news.example was read: the digest paces per host", next.Sub(now))
	}
}

// TestTighten_OnlyMorePolite: an override that makes a policy more polite is
// applied; one that makes it less polite, or lies outside its range, is
// refused with an *OverrideError naming the field, and the policy is
// returned unchanged.
func TestTighten_OnlyMorePolite(t *testing.T) {
	t.Parallel()
	got, err := Digest().Tighten(Overrides{Interval: 10 * time.Second, RobotsTTL: time.Hour, RobotsRetry: time.Hour,
		MaxRedirects: 2, Timeout: 10 * time.Second, MaxWire: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if got.Interval != 10*time.Second || got.IntervalMax != 10*time.Second || got.Robots.TTL != time.Hour ||
		got.Robots.RetryInterval != time.Hour || got.MaxRedirects != 2 || got.Timeout != 10*time.Second || got.MaxWire != 4096 {
		t.Fatalf("tightened digest: %+v", got)
	}
	if got, err := StrictNews().Tighten(Overrides{MaxRedirects: 2}); err != nil || got.ImageMaxRedirects != 2 {
		t.Fatalf("image redirects follow the limit down: %v, %v", got.ImageMaxRedirects, err)
	}
	if got, err := Digest().Tighten(Overrides{IntervalMax: 9 * time.Second}); err != nil || got.IntervalMax != 9*time.Second {
		t.Fatalf("a wider band: %v, %v", got.IntervalMax, err)
	}
	for _, tc := range []struct {
		field string
		p     Policy
		o     Overrides
	}{
		{"Interval", StrictNews(), Overrides{Interval: 500 * time.Millisecond}},
		{"Interval", Policy{}, Overrides{Interval: DefaultInterval / 2}},
		{"IntervalMax", Digest(), Overrides{IntervalMax: 4 * time.Second}},
		{"IntervalMax", Digest(), Overrides{Interval: 8 * time.Second, IntervalMax: 6 * time.Second}},
		{"RobotsTTL", StrictNews(), Overrides{RobotsTTL: 2 * time.Hour}},
		{"RobotsTTL", Vault(), Overrides{RobotsTTL: time.Second}},
		{"RobotsRetry", Vault(), Overrides{RobotsRetry: time.Minute}},
		{"MaxRedirects", Vault(), Overrides{MaxRedirects: 6}},
		{"MaxRedirects", Vault(), Overrides{MaxRedirects: -1}},
		{"Timeout", Digest(), Overrides{Timeout: 2 * DefaultTimeout}},
		{"Timeout", Digest(), Overrides{Timeout: time.Millisecond}},
		{"MaxWire", Digest(), Overrides{MaxWire: DefaultMaxWire + 1}},
		{"MaxWire", Digest(), Overrides{MaxWire: 10}},
	} {
		got, err := tc.p.Tighten(tc.o)
		var oe *OverrideError
		if !errors.As(err, &oe) || oe.Field != tc.field || !errors.Is(err, ErrLessPolite) {
			t.Errorf("%+v on %q: err %v, want an OverrideError for %s", tc.o, tc.p.Backoff.Name, err, tc.field)
			continue
		}
		if !reflect.DeepEqual(got, tc.p) {
			t.Errorf("%+v: the refused policy changed: %+v", tc.o, got)
		}
	}
}
