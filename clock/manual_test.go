package clock

import (
	"fmt"
	"testing"
	"time"
)

func TestManualFiresInOrder(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewManual(start)
	a := m.After(6 * time.Hour)
	b := m.After(5 * time.Minute)
	now := m.After(0)
	if got := <-now; !got.Equal(start) {
		t.Fatalf("After(0) fired at %v, want %v", got, start)
	}
	m.Advance(5 * time.Minute)
	select {
	case got := <-b:
		if want := start.Add(5 * time.Minute); !got.Equal(want) {
			t.Fatalf("b fired at %v, want %v", got, want)
		}
	default:
		t.Fatal("b did not fire after 5 min")
	}
	select {
	case <-a:
		t.Fatal("a fired early")
	default:
	}
	if m.Waiters() != 1 {
		t.Fatalf("Waiters = %d, want 1", m.Waiters())
	}
	m.Set(start.Add(7 * time.Hour))
	if got := <-a; !got.Equal(start.Add(7 * time.Hour)) {
		t.Fatalf("a fired at %v", got)
	}
	m.Set(start) // never backwards
	if !m.Now().Equal(start.Add(7 * time.Hour)) {
		t.Fatalf("clock went backwards to %v", m.Now())
	}
}

func ExampleManual() {
	clk := NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	due := clk.After(6 * time.Hour) // a six-hour cool-down, say
	clk.Advance(6 * time.Hour)
	fmt.Println((<-due).Format(time.RFC3339))
	// Output: 2026-01-01T06:00:00Z
}
