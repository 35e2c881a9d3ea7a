package politetest

import (
	"net/http"
	"testing"
	"time"
)

// TestAuditIntervalInStartOrder: the interval rule compares requests in the
// order they started (their bytes arrived), not the order the web handled them.
// Over two connections a request can be handled before one that arrived
// earlier; starts 150 ms apart at a 100 ms interval are polite whatever the
// handling order, and two starts 40 ms apart are caught whatever it is.
func TestAuditIntervalInStartOrder(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	req := func(seq, conn int, start time.Duration) Request {
		at := t0.Add(start)
		return Request{Seq: seq, Conn: conn, Host: "news.example", Method: http.MethodGet, Path: "/a", Target: "/a",
			Header: http.Header{"User-Agent": {"PoliteBot/1"}}, Arrived: at.Add(200 * time.Millisecond),
			Start: at, Finished: at.Add(210 * time.Millisecond)}
	}
	p := Policy{Interval: 100 * time.Millisecond, MaxInFlight: 5, Ignore: []Rule{RuleRobotsFirst}}
	// Handled in the order 2, 1, 3; started 1, 2, 3 (0, 150, 300 ms).
	polite := []Request{req(1, 2, 150*time.Millisecond), req(2, 1, 0), req(3, 1, 300*time.Millisecond)}
	if rep := audit(p, polite, nil); !rep.OK() {
		t.Errorf("starts 150 ms apart, handled out of order:\n%v", rep)
	}
	rude := []Request{req(1, 2, 40*time.Millisecond), req(2, 1, 0), req(3, 1, 300*time.Millisecond)}
	rep := audit(p, rude, nil)
	if n := len(rep.Violations); n != 1 || rep.Violations[0].Rule != RuleInterval {
		t.Fatalf("starts 40 ms apart, handled out of order: %d violations, want 1 interval:\n%v", n, rep)
	}
	if v := rep.Violations[0]; v.Request.Seq != 1 || v.Other.Seq != 2 {
		t.Errorf("violation names #%d after #%d, want #1 (started at +40ms) after #2 (at +0)", v.Request.Seq, v.Other.Seq)
	}
}
