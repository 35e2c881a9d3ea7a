package leaktest

import (
	"strings"
	"testing"
	"time"
)

// TestLeakedFindsABlockedGoroutine: a goroutine started after the snapshot
// and blocked for good is reported, with its stack naming where it waits.
func TestLeakedFindsABlockedGoroutine(t *testing.T) {
	before := Snapshot()
	stop := make(chan struct{})
	defer close(stop)
	go blockedUntil(stop)
	left := Leaked(before, 20*time.Millisecond)
	if len(left) != 1 || !strings.Contains(left[0], "blockedUntil") {
		t.Fatalf("Leaked = %q, want the one blocked goroutine", left)
	}
}

// TestLeakedWaitsForAGoroutineOnItsWayOut: a goroutine that ends shortly
// after the tests is not a leak.
func TestLeakedWaitsForAGoroutineOnItsWayOut(t *testing.T) {
	before := Snapshot()
	release := make(chan struct{})
	go blockedUntil(release)
	go func() { time.Sleep(10 * time.Millisecond); close(release) }()
	if left := Leaked(before, 5*time.Second); len(left) != 0 {
		t.Fatalf("Leaked = %q, want none once the goroutine ended", left)
	}
}

// TestLeakedIgnoresThoseAliveBefore: the goroutines of the snapshot, and the
// caller's own, are not counted.
func TestLeakedIgnoresThoseAliveBefore(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	go blockedUntil(stop)
	time.Sleep(time.Millisecond) // let it start, so the snapshot has it
	if left := Leaked(Snapshot(), 0); len(left) != 0 {
		t.Fatalf("Leaked = %q, want none", left)
	}
}

func blockedUntil(c chan struct{}) { <-c }

// TestParseReadsTheHeaderAndFunctions reads a block as runtime.Stack writes it.
func TestParseReadsTheHeaderAndFunctions(t *testing.T) {
	block := "goroutine 42 [chan receive, 3 minutes]:\n" +
		"example.com/p.wait(0xc000012345)\n\t/src/p/p.go:10 +0x1d\n" +
		"created by example.com/p.Start in goroutine 7\n\t/src/p/p.go:5 +0x2a"
	g, ok := parse(block)
	if !ok || g.id != 42 || len(g.funcs) != 2 || g.funcs[0] != "example.com/p.wait" || g.funcs[1] != "example.com/p.Start" {
		t.Fatalf("parse = %+v, %v", g, ok)
	}
	if _, ok := parse("not a goroutine"); ok {
		t.Fatal("parse accepted a block without a header")
	}
}

func TestMain(m *testing.M) { Main(m) }
