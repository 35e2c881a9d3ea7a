package fetch

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// A Get whose deadline comes while its host's robots.txt is still being
// read sent nothing of its own: its error says so (ErrPacingDeadline, which
// a crawl reads as "not sent") and still matches the context's error; the
// page is never requested.
func TestRobots_DeadlineWhileRobotsTxtIsReadSendsNothing(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("slow.example")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s.Handle("/robots.txt", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.Write([]byte("User-agent: *\nAllow: /\n"))
	}))
	a := s.AddArticle(politetest.Article{})
	c := newClient(t, web, testPolicy(StrictNews(), time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Get(ctx, s.URL(a.Path))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get = %v, want the deadline", err)
	}
	if !errors.Is(err, ErrPacingDeadline) {
		t.Fatalf("Get = %v: does not say the page was not sent (ErrPacingDeadline)", err)
	}
	if want := "fetch: deadline reached while waiting for slow.example's robots.txt to be read: nothing was sent"; !strings.Contains(err.Error(), want) {
		t.Errorf("Get = %v, want it to say %q", err, want)
	}
	var re *RefusedError
	if errors.As(err, &re) {
		t.Fatalf("Get = %v: a refusal, but robots.txt said nothing yet", err)
	}
	if requested(web, "slow.example", a.Path) {
		t.Fatal("the page was requested before its robots.txt was read")
	}
}
