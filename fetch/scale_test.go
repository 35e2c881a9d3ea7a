package fetch

import (
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// withMaxIdle sets the base transport's MaxIdleConns (tests only).
func withMaxIdle(n int) Option { return func(o *options) { o.maxIdle = n } }

// TestAudit_P1_EvictedIdleConnsKeepInterval: with more hosts than the base
// transport keeps idle connections for, idle connections are closed as
// others go idle, and many requests are sent on a new connection (which the
// auditor counts from its opening); no request reaches a host sooner than
// its interval.
func TestAudit_P1_EvictedIdleConnsKeepInterval(t *testing.T) {
	web := politetest.NewWeb(t)
	urls := buildWeb(web, 60, 6, false)
	p := testPolicy(Digest(), auditInterval)
	c := newClient(t, web, p, withMaxIdle(8))
	ok, _ := crawl(t, c, urls, 64)
	rep := web.Audit(auditPolicy(p))
	if !rep.OK() {
		t.Fatal(rep)
	}
	if conns := len(web.Connections()); ok < 300 || conns < 2*60 {
		t.Fatalf("%d pages read over %d connections to 60 hosts: want idle connections closed, and new ones made", ok, conns)
	}
}

// TestIdleConnTimeout: an idle connection is kept for three of the policy's
// longest intervals, 5 s at least and 90 s at most.
func TestIdleConnTimeout(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want time.Duration
	}{
		{StrictNews().withDefaults(), 5 * time.Second},
		{Digest().withDefaults(), 15 * time.Second},
		{Policy{Interval: 10 * time.Millisecond}.withDefaults(), 5 * time.Second},
		{Policy{Interval: time.Minute}.withDefaults(), 90 * time.Second},
	} {
		if got := idleConnTimeout(tc.p); got != tc.want {
			t.Errorf("interval %v–%v: %v, want %v", tc.p.Interval, tc.p.IntervalMax, got, tc.want)
		}
	}
}
