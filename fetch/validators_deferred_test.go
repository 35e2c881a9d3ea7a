package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestDeferValidators: a read with DeferValidators still sends the
// validators kept for its URL, but keeps none from its 200, whose header
// still carries them; so a "restart" (a new Client on the same store) after
// such a read gets a full 200 again, until SaveValidators keeps them, and
// from then on the feed answers 304.
func TestDeferValidators(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("news.example")
	s.AddArticle(politetest.Article{})
	store := &MemoryStore{}
	p := testPolicy(Digest(), time.Millisecond)
	ctx := context.Background()
	// The feed's address as configured, with a tracking parameter the chain
	// strips: SaveValidators keys it as a Get's request is keyed.
	u := s.URL("/feed.xml") + "?utm_source=x"

	read := func(c *Client, opts ...GetOptions) (status int, h http.Header, sent bool) {
		t.Helper()
		resp, err := c.Doer(KindFeed, opts...).Do(mustRequest(t, u))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatal(err)
		}
		reqs := web.Requests()
		last := reqs[len(reqs)-1]
		return resp.StatusCode, resp.Header, last.Header.Get("If-None-Match") != "" || last.Header.Get("If-Modified-Since") != ""
	}

	c1 := newClient(t, web, p, WithStores(Stores{Validators: store}))
	status, h, _ := read(c1, GetOptions{DeferValidators: true})
	if status != http.StatusOK {
		t.Fatalf("first read: status %d", status)
	}
	if h.Get("ETag") == "" && h.Get("Last-Modified") == "" {
		t.Fatalf("the deferred read's header carries no validators: %v", h)
	}
	if store.Len() != 0 {
		t.Fatalf("a deferred read kept %d validators", store.Len())
	}

	// The process "dies" here: a new Client on the same store reads the
	// feed in full again, as often as it is read with nothing saved.
	c2 := newClient(t, web, p, WithStores(Stores{Validators: store}))
	for i := range 2 {
		status, h, sent := read(c2, GetOptions{DeferValidators: true})
		if status != http.StatusOK || sent {
			t.Fatalf("read %d after the restart: status %d, validators sent %v", i, status, sent)
		}
		if i == 1 {
			// What the caller learnt is recorded: now keep the validators.
			if err := c2.SaveValidators(ctx, u, h); err != nil {
				t.Fatal(err)
			}
		}
	}
	if store.Len() != 1 {
		t.Fatalf("SaveValidators kept %d entries, want 1", store.Len())
	}

	// Saved: a deferred read sends them and gets a 304, after a restart too,
	// and so does an ordinary Get (the key is the chain's own).
	c3 := newClient(t, web, p, WithStores(Stores{Validators: store}))
	if status, _, sent := read(c3, GetOptions{DeferValidators: true}); status != http.StatusNotModified || !sent {
		t.Fatalf("deferred read after SaveValidators: status %d, validators sent %v", status, sent)
	}
	if res, err := c3.Get(ctx, u, GetOptions{Kind: KindFeed}); err != nil || !res.NotModified {
		t.Fatalf("Get after SaveValidators: %v, %+v", err, res)
	}
}

// TestSaveValidators_Nothing: a header without validators keeps nothing, a
// Client without conditional GET keeps nothing, and a URL that cannot be a
// request's is an error.
func TestSaveValidators_Nothing(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("news.example")
	ctx := context.Background()
	store := &MemoryStore{}
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond), WithStores(Stores{Validators: store}))
	if err := c.SaveValidators(ctx, s.URL("/feed.xml"), http.Header{"Content-Type": {"text/xml"}}); err != nil {
		t.Fatal(err)
	}
	if store.Len() != 0 {
		t.Fatalf("a header without validators kept %d", store.Len())
	}
	if err := c.SaveValidators(ctx, "https://127.1/feed", http.Header{"Etag": {`"x"`}}); err == nil {
		t.Fatal("a URL with no valid host: no error")
	}
	p := testPolicy(Digest(), time.Millisecond)
	p.NoConditional = true
	nc := newClient(t, web, p, WithStores(Stores{Validators: store}))
	if err := nc.SaveValidators(ctx, s.URL("/feed.xml"), http.Header{"Etag": {`"x"`}}); err != nil {
		t.Fatal(err)
	}
	if store.Len() != 0 {
		t.Fatalf("a Client without conditional GET kept %d", store.Len())
	}
}

// TestSaveValidators_StoreError: the store's failure is SaveValidators's.
func TestSaveValidators_StoreError(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("news.example")
	c := newClient(t, web, testPolicy(Digest(), time.Millisecond), WithStores(Stores{Validators: &failingPut{}}))
	err := c.SaveValidators(context.Background(), s.URL("/feed.xml"), http.Header{"Etag": {`"x"`}})
	if err == nil || !errors.Is(err, errPut) {
		t.Fatalf("err = %v, want the store's", err)
	}
}

var errPut = errors.New("test: put failed")

// failingPut is a ValidatorStore whose Put fails.
type failingPut struct{ MemoryStore }

func (*failingPut) Put(context.Context, string, Validator) error { return errPut }
