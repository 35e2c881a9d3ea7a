package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestOpenBody_HoldsTheTurnVisibly: a response body read through
// HTTPClient and left open holds its host's turn. The next Get to the host
// waits for it and fails with its deadline, and both its error and Explain
// say why: a response body from this host is still open, and since when.
// Once the body is closed, the host's next request goes.
func TestOpenBody_HoldsTheTurnVisibly(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("open.example")
	s.Handle("/big", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(strings.Repeat("x", 1<<20)))
	}))
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond))
	resp, err := c.HTTPClient().Get(s.URL("/big"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = c.Get(ctx, s.URL("/next"))
	cancel()
	if !errors.Is(err, ErrPacingDeadline) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get behind an open body: err %v, want the pacing deadline", err)
	}
	if !strings.Contains(err.Error(), "response body from open.example is still open (since ") {
		t.Errorf("Get behind an open body: %q does not say a body is still open", err)
	}
	e, err := c.Explain(context.Background(), s.URL("/next"))
	if err != nil {
		t.Fatal(err)
	}
	if e.BodyOpenSince.IsZero() || time.Since(e.BodyOpenSince) > time.Minute {
		t.Errorf("Explain: BodyOpenSince %v, want the moment the body was handed over", e.BodyOpenSince)
	}
	if !strings.Contains(e.String(), "a response body from this host is still open since") {
		t.Errorf("Explanation.String does not say the body is open:\n%s", e)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if e, _ := c.Explain(context.Background(), s.URL("/next")); !e.BodyOpenSince.IsZero() {
		t.Errorf("Explain after Close: BodyOpenSince %v, want zero", e.BodyOpenSince)
	}
	if _, err := c.Get(context.Background(), s.URL("/next")); err != nil {
		t.Fatalf("Get after the body was closed: %v", err)
	}
}

// TestExplanation_String says what an Explanation says, in words: the URL,
// the answer and why, robots.txt's rule with its line, the next slot.
func TestExplanation_String(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("explain.example")
	s.SetRobots(politetest.Robots{Body: "User-agent: *\nDisallow: /private\n"})
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond))
	e, err := c.Explain(context.Background(), s.URL("/private/a"))
	if err != nil {
		t.Fatal(err)
	}
	got := e.String()
	for _, want := range []string{"https://explain.example/private/a", ": refused: ", "robots.txt: Disallow: /private (line 2)", "next slot: "} {
		if !strings.Contains(got, want) {
			t.Errorf("String() lacks %q:\n%s", want, got)
		}
	}
	e, _ = c.Explain(context.Background(), s.URL("/public"))
	if got := e.String(); !strings.Contains(got, "https://explain.example/public: allowed") {
		t.Errorf("String() of an allowed URL:\n%s", got)
	}
}
