package redis

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// unsent fails every request as the fetch chain does when it sent nothing
// (a cool-down, the schedule unreachable).
type unsent struct{}

func (unsent) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("%w: the host is cooling down", robots.ErrNotSent)
}

// TestRobots_UnsentFetchReleasesItsLease: a process whose robots.txt
// request was never sent stores no record and releases the host's fetch
// lease, so another process does not wait out the lease for a record that
// will not come: it takes the lease and fetches robots.txt itself.
func TestRobots_UnsentFetchReleasesItsLease(t *testing.T) {
	web := politetest.NewWeb(t)
	site := web.Site("news.example")
	path := site.AddArticle(politetest.Article{}).Path
	a := realStore(t)
	b := &Store{Client: a.Client, Prefix: a.Prefix}
	u := mustURL(t, site.URL(path))
	ctx := context.Background()
	ca := &robots.Cache{Transport: unsent{}, UserAgent: "RedisWorkerBot/1", Store: a.Robots()}
	if err := ca.Allow(ctx, u); !errors.Is(err, robots.ErrNotSent) {
		t.Fatalf("Allow with nothing sent = %v, want ErrNotSent", err)
	}
	if exists(t, a, a.key("robotsfetch", "news.example")) {
		t.Fatal("the fetch lease is still held after a request that was not sent")
	}
	if exists(t, a, a.key("robots", "news.example")) {
		t.Fatal("a record was stored for a request that was not sent")
	}
	cb := &robots.Cache{Transport: web.Transport(), UserAgent: "RedisWorkerBot/1", Store: b.Robots()}
	if err := cb.Allow(ctx, u); err != nil {
		t.Fatal(err)
	}
	if n := len(web.Requests()); n != 1 {
		t.Fatalf("%d requests reached the web, want robots.txt once", n)
	}
}
