package sqlite

import (
	"context"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// A 304 answered to validators kept in the file says how many bytes it
// saved, the wire length of the body they were kept from, also for a
// Client opened after the one that kept them (a restart): the length is
// stored with the validators (schema 10).
func TestValidators_LengthKeptForTheNextClient(t *testing.T) {
	web := politetest.NewWeb(t)
	site := web.Site("news.example")
	page := strings.Repeat("<p>A paragraph.</p>\n", 100)
	site.Handle("/page", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		_, _ = w.Write([]byte(page))
	}))
	db := openTest(t, nil)
	p := fetch.Vault()
	p.Name, p.Version, p.InfoURL, p.Contact = "TestBot", "1", "https://crawler.example/about", "bot@crawler.example"
	p.Interval, p.IntervalMax = 5*time.Millisecond, 0
	p.NoConditional = false
	var mu sync.Mutex
	var saved []int64
	client := func() *fetch.Client {
		fs, _ := db.Stores()
		c, err := fetch.New(p, fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
			Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}), fetch.WithStores(fs),
			fetch.WithObserver(func(e fetch.Event) {
				if e.Kind == fetch.EventNotModified {
					mu.Lock()
					saved = append(saved, e.Saved)
					mu.Unlock()
				}
			}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	ctx := context.Background()
	first := client()
	res, err := first.Get(ctx, site.URL("/page"))
	if err != nil || res.NotModified || res.Wire != int64(len(page)) {
		t.Fatalf("first Get: %+v, %v; want the page, %d bytes on the wire", res, err, len(page))
	}
	if v, ok, err := db.Validators().Get(ctx, site.URL("/page")); err != nil || !ok || v.Length != int64(len(page)) {
		t.Fatalf("validators on file %+v, %v, %v; want the ETag with length %d", v, ok, err, len(page))
	}
	first.Close()
	res, err = client().Get(ctx, site.URL("/page"))
	if err != nil || !res.NotModified {
		t.Fatalf("second Get, a new Client: %+v, %v; want a 304", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(saved) != 1 || saved[0] != int64(len(page)) {
		t.Fatalf("304s saved %v bytes, want one that saved %d", saved, len(page))
	}
}
