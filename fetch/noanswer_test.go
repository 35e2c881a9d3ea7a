package fetch

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestGet_HangUpIsErrNoAnswer: a server that closes a fresh connection
// without answering (politetest's HangUp) fails the Get with ErrNoAnswer,
// which names the failure and keeps net/http's io.EOF, instead of a bare
// io.EOF that says neither what nor where (found by the hostile crawl).
func TestGet_HangUpIsErrNoAnswer(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("hangup.example")
	a := s.AddArticle(politetest.Article{})
	s.Misbehave("/robots.txt", politetest.Behaviour{Kind: politetest.CloseConnection}) // the article gets a connection of its own
	s.Misbehave(a.Path, politetest.Behaviour{Kind: politetest.HangUp})
	c := newClient(t, web, testPolicy(Digest(), 20*time.Millisecond))
	_, err := c.Get(context.Background(), s.URL(a.Path))
	if !errors.Is(err, ErrNoAnswer) || !errors.Is(err, io.EOF) {
		t.Fatalf("got %T %v, want ErrNoAnswer wrapping io.EOF", err, err)
	}
	if n := len(web.Requests()); n != 2 {
		t.Errorf("%d requests, want robots.txt and the article once", n)
	}
}
