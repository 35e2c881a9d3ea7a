package crawltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/provenance"
	"github.com/politefetch/politefetch/sharecheck"
)

// RunDeposits checks that the Deposits newDeposits returns behave as
// crawl.Deposits documents: a deposit and an excerpt round-trip (with their
// share-image checks, whose Err is not kept but whose Reason is), a repeated
// digest is stored once (also under concurrent puts), List filters by
// source and instant in put order, a put deposit cannot be changed through
// the caller's slice, and Withdraw removes one source's deposits only.
// Durability across a restart is the backend's own test: this suite sees
// only one store value.
func RunDeposits(t *testing.T, newDeposits func(t *testing.T) crawl.Deposits) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, ds crawl.Deposits)
	}{
		{"RoundTrip", testDepositRoundTrip},
		{"DedupByDigest", testDepositDedup},
		{"DedupConcurrent", testDepositDedupConcurrent},
		{"ListBySourceSince", testDepositList},
		{"Withdraw", testDepositWithdraw},
		{"NoDigestRefused", testDepositNoDigest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newDeposits(t))
		})
	}
}

func fullDeposit(source, key string, at time.Time) *crawl.Deposit {
	env := []byte("<html><body><p>article " + key + "</p></body></html>")
	d := &crawl.Deposit{
		Source: source, Key: key, URL: "https://a.example/" + key, ReadAt: at,
		Envelope: env, MediaType: "text/html",
		Proof: &provenance.Proof{Schema: provenance.Schema, RequestedURL: "https://a.example/" + key, FinalURL: "https://a.example/" + key,
			ReadAt: at, Digest: provenance.DigestOf(env), Length: int64(len(env))},
	}
	d.Digest = d.Sum()
	return d
}

func excerptDeposit(source, key string, at time.Time) *crawl.Deposit {
	d := &crawl.Deposit{
		Source: source, Key: key, URL: "https://a.example/" + key, ReadAt: at,
		Excerpt: &feed.Excerpt{Label: feed.ExcerptLabel, Headline: "Story " + key, Description: "What the feed says.",
			Link: "https://a.example/" + key, ID: key},
	}
	d.Digest = d.Sum()
	return d
}

func put(t *testing.T, ds crawl.Deposits, d *crawl.Deposit) bool {
	t.Helper()
	added, err := ds.Put(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return added
}

func list(t *testing.T, ds crawl.Deposits, source string, since time.Time) []*crawl.Deposit {
	t.Helper()
	out, err := ds.List(context.Background(), source, since)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testDepositRoundTrip(t *testing.T, ds crawl.Deposits) {
	d := fullDeposit("s", "1", t0)
	d.Image = &sharecheck.Result{URL: "https://img.example/1.jpg", FinalURL: "https://cdn.example/1.jpg",
		MediaType: "image/jpeg", Width: 1200, Height: 675, Bytes: 48213, Credit: "Photo: A. Lens"}
	e := excerptDeposit("s", "2", t0.Add(time.Second))
	e.Image = &sharecheck.Result{URL: "https://img.example/fake.jpg", FinalURL: "https://img.example/fake.jpg", Bytes: 120,
		Reason: sharecheck.NotImage, Err: &sharecheck.UnusableError{URL: "https://img.example/fake.jpg", Reason: sharecheck.NotImage}}
	if !put(t, ds, d) || !put(t, ds, e) {
		t.Fatal("a new deposit was not added")
	}
	d.Envelope[0] = 'X' // the store keeps its own bytes
	got := list(t, ds, "s", time.Time{})
	if len(got) != 2 {
		t.Fatalf("List = %d deposits, want 2", len(got))
	}
	g := got[0]
	if g.Key != "1" || g.URL != "https://a.example/1" || !g.ReadAt.Equal(t0) || g.MediaType != "text/html" ||
		g.Digest != provenance.DigestOf(g.Envelope) || !bytes.HasPrefix(g.Envelope, []byte("<html>")) {
		t.Fatalf("full deposit came back as %+v", g)
	}
	if g.Proof == nil || g.Proof.Digest != g.Digest {
		t.Fatalf("proof came back as %+v", g.Proof)
	}
	if g.Image == nil || *g.Image != *d.Image || !g.Image.Usable() {
		t.Fatalf("full deposit's image check came back as %+v, want %+v", g.Image, d.Image)
	}
	x := got[1]
	if x.Excerpt == nil || x.Excerpt.Label != feed.ExcerptLabel || x.Excerpt.Headline != "Story 2" || x.Excerpt.Link != "https://a.example/2" || x.Envelope != nil {
		t.Fatalf("excerpt deposit came back as %+v", x)
	}
	want := *e.Image
	want.Err = nil
	if x.Image == nil || *x.Image != want || x.Image.Usable() {
		t.Fatalf("excerpt's image check came back as %+v, want %+v (not usable, its Err not kept)", x.Image, want)
	}
}

func testDepositDedup(t *testing.T, ds crawl.Deposits) {
	d := fullDeposit("s", "1", t0)
	put(t, ds, d)
	again := fullDeposit("s", "1", t0.Add(time.Hour))
	if put(t, ds, again) {
		t.Fatal("the same digest was added twice")
	}
	if n := len(list(t, ds, "s", time.Time{})); n != 1 {
		t.Fatalf("%d deposits after a duplicate, want 1", n)
	}
	if !put(t, ds, fullDeposit("other", "1", t0)) {
		t.Fatal("the same digest under another source was not added")
	}
}

func testDepositDedupConcurrent(t *testing.T, ds crawl.Deposits) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	added := 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := ds.Put(context.Background(), fullDeposit("s", "1", t0))
			if err != nil {
				t.Error(err)
			}
			if a {
				mu.Lock()
				added++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if added != 1 || len(list(t, ds, "s", time.Time{})) != 1 {
		t.Fatalf("%d concurrent puts of one digest added, want 1", added)
	}
}

func testDepositList(t *testing.T, ds crawl.Deposits) {
	for i := range 5 {
		put(t, ds, fullDeposit("s", fmt.Sprint(i), t0.Add(time.Duration(i)*time.Hour)))
	}
	put(t, ds, fullDeposit("other", "9", t0.Add(10*time.Hour)))
	got := list(t, ds, "s", t0.Add(2*time.Hour))
	var keys []string
	for _, d := range got {
		keys = append(keys, d.Key)
	}
	if fmt.Sprint(keys) != "[2 3 4]" {
		t.Fatalf("List since +2h = %v, want [2 3 4]", keys)
	}
	if n := len(list(t, ds, "nobody", time.Time{})); n != 0 {
		t.Fatalf("unknown source listed %d deposits", n)
	}
}

func testDepositWithdraw(t *testing.T, ds crawl.Deposits) {
	put(t, ds, fullDeposit("s", "1", t0))
	put(t, ds, excerptDeposit("s", "2", t0))
	put(t, ds, fullDeposit("keep", "1", t0))
	n, err := ds.Withdraw(context.Background(), "s")
	if err != nil || n != 2 {
		t.Fatalf("Withdraw = %d, %v; want 2", n, err)
	}
	if len(list(t, ds, "s", time.Time{})) != 0 {
		t.Fatal("deposits left after Withdraw")
	}
	if len(list(t, ds, "keep", time.Time{})) != 1 {
		t.Fatal("Withdraw removed another source's deposit")
	}
	if !put(t, ds, fullDeposit("s", "1", t0)) {
		t.Fatal("a withdrawn digest could not be deposited again")
	}
}

func testDepositNoDigest(t *testing.T, ds crawl.Deposits) {
	d := fullDeposit("s", "1", t0)
	d.Digest = ""
	if _, err := ds.Put(context.Background(), d); !errors.Is(err, crawl.ErrNoDigest) {
		t.Fatalf("Put without a digest: %v, want ErrNoDigest", err)
	}
}
