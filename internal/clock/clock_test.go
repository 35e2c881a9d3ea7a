package clock

import (
	"testing"
	"time"
)

func TestOrNilIsReal(t *testing.T) {
	if _, ok := Or(nil).(Real); !ok {
		t.Fatal("Or(nil) is not Real")
	}
	m := NewManual(time.Unix(0, 0))
	if Or(m) != Clock(m) {
		t.Fatal("Or(m) did not return m")
	}
}

// A wait worked out from one reading fires at the instant it names, even
// when the clock was moved between the reading and the wait: After would
// count its duration from the moved time and fire a whole move late.
func TestUntilCountsFromTheInstant(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewManual(start)
	due := m.Now().Add(15 * time.Minute)
	m.Advance(15 * time.Minute) // another goroutine moves the clock first
	late := m.After(due.Sub(start))
	select {
	case got := <-Until(m, due):
		if !got.Equal(due) {
			t.Fatalf("Until fired at %v, want %v", got, due)
		}
	default:
		t.Fatal("Until did not fire although the clock reads its instant")
	}
	select {
	case <-late:
		t.Fatal("After fired early") // shows what Until avoids
	default:
	}
	m.Advance(time.Minute)
	at := Until(m, due.Add(2*time.Minute))
	m.Advance(time.Minute)
	if got := <-at; !got.Equal(due.Add(2 * time.Minute)) {
		t.Fatalf("Until fired at %v", got)
	}

	// A clock without At is asked for the time left from its own reading.
	var plain Clock = struct{ Clock }{m}
	if _, ok := plain.(At); ok {
		t.Fatal("the wrapped clock still has At")
	}
	at = Until(plain, m.Now().Add(2*time.Minute))
	m.Advance(time.Minute)
	select {
	case <-at:
		t.Fatal("Until without At fired a minute early")
	default:
	}
	m.Advance(time.Minute)
	select {
	case <-at:
	default:
		t.Fatal("Until without At did not fire at its instant")
	}
}
