package crawl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// One stream of deposits, fanned out: every deposit the store adds is
// written once to each sink (here a JSONL export), in the store's order, and
// a second pass over what is kept writes nothing again.
func TestTee_EachAddedDepositReachesEverySinkOnce(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("tee.example")
	for range 3 {
		s.AddArticle(politetest.Article{})
	}
	var jsonl bytes.Buffer
	enc := json.NewEncoder(&jsonl)
	store := &MemoryDeposits{}
	n := 0
	tee := &Tee{Store: store, Sinks: []Sink{
		SinkFunc(func(_ context.Context, d *Deposit) error {
			return enc.Encode(map[string]string{"source": d.Source, "url": d.URL, "digest": d.Digest})
		}),
		SinkFunc(func(context.Context, *Deposit) error { n++; return nil }),
	}}
	p := testPolicy(t, Vault, testInterval)
	c := &Crawler{Client: newClient(t, web, p), Deposits: tee, Sources: []Source{siteSource(s.Name(), Vault, false)}}
	if rep := mustPass(t, c, s.Name()); rep.Deposited != 3 {
		t.Fatalf("pass %+v, want 3 deposited", rep)
	}
	mustPass(t, c, s.Name()) // nothing new
	kept, err := tee.List(context.Background(), s.Name(), time.Time{})
	if err != nil || len(kept) != 3 {
		t.Fatalf("store holds %d, %v; want 3", len(kept), err)
	}
	var lines []map[string]string
	sc := bufio.NewScanner(&jsonl)
	for sc.Scan() {
		var m map[string]string
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 3 || n != 3 {
		t.Fatalf("%d JSONL lines and %d writes to the second sink, want 3 each", len(lines), n)
	}
	for i, d := range kept {
		if lines[i]["digest"] != d.Digest || lines[i]["url"] != d.URL {
			t.Fatalf("line %d %v, want deposit %s %s in the store's order", i, lines[i], d.URL, d.Digest)
		}
	}
	audit(t, web, p)
}

// A sink that cannot write is a failure of ours to deposit: the store keeps
// the deposit, Put says which sink failed, and ten in a row stop the pass.
func TestTee_V12_FailingSinkIsOurDepositFailure(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("teefull.example")
	for range 12 {
		s.AddArticle(politetest.Article{})
	}
	errFull := errors.New("test: no space left on the export's disk")
	tee := &Tee{Store: &MemoryDeposits{}, Sinks: []Sink{SinkFunc(func(context.Context, *Deposit) error { return errFull })}}
	var ev events
	c := &Crawler{Client: newClient(t, web, testPolicy(t, Vault, testInterval)), Deposits: tee, OnEvent: ev.on,
		Sources: []Source{siteSource(s.Name(), Vault, false)}}
	rep := mustPass(t, c, s.Name())
	if !rep.Stopped || rep.Failed != 10 {
		t.Fatalf("pass %+v, want stopped after 10 failed writes", rep)
	}
	for _, e := range ev.of(EventFailed) {
		var se *SinkError
		if !errors.As(e.Err, &se) || se.Sink != 0 || !errors.Is(e.Err, errFull) {
			t.Fatalf("failure %v, want a *SinkError of sink 0 wrapping the sink's error", e.Err)
		}
	}
	if kept, _ := tee.List(context.Background(), s.Name(), time.Time{}); len(kept) != 10 {
		t.Fatalf("store holds %d deposits, want the 10 the sink could not write", len(kept))
	}
	if _, err := (&Tee{}).Put(context.Background(), &Deposit{}); !errors.Is(err, ErrNoStore) {
		t.Fatalf("zero Tee's Put = %v, want ErrNoStore", err)
	}
}
