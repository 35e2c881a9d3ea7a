package redirect

import "testing"

func TestIs(t *testing.T) {
	t.Parallel()
	for st := 100; st < 600; st++ {
		want := st == 301 || st == 302 || st == 303 || st == 307 || st == 308
		if got := Is(st); got != want {
			t.Errorf("Is(%d) = %v, want %v", st, got, want)
		}
	}
}
