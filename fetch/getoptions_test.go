package fetch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestGetOptions_LaterNonZeroFieldsWin: a call's several GetOptions merge in
// order: a later value's non-zero fields replace the earlier ones', its zero
// fields leave them.
func TestGetOptions_LaterNonZeroFieldsWin(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("merge.example")
	s.Misbehave("/big", politetest.Behaviour{Kind: politetest.Oversize, Size: 64 << 10})
	p := testPolicy(StrictNews(), time.Millisecond)
	p.MaxWire = 128 << 10
	c := newClient(t, web, p)
	ctx := context.Background()

	small := GetOptions{MaxBody: 16 << 10}
	if _, err := c.Get(ctx, s.URL("/big"), small, GetOptions{Referer: "https://merge.example/"}); !errors.Is(err, ErrWireTooLarge) {
		t.Fatalf("a later value without MaxBody: %v, want the earlier 16 KiB cap (ErrWireTooLarge)", err)
	}
	if res, err := c.Get(ctx, s.URL("/big"), small, GetOptions{MaxBody: -1}); err != nil || res.Wire != 64<<10 {
		t.Fatalf("a later MaxBody of -1: %v, want the policy's caps and the 64 KiB body", err)
	}
	for _, tc := range []struct {
		opts []GetOptions
		want Kind
	}{
		{nil, KindArticle},
		{[]GetOptions{{Kind: KindFeed}, {Unconditional: true}}, KindFeed},
		{[]GetOptions{{Kind: KindFeed}, {Kind: KindSitemap}}, KindSitemap},
		{[]GetOptions{{Kind: KindFeed}, {Kind: KindArticle}}, KindFeed}, // the zero Kind replaces nothing
	} {
		if e, err := c.Explain(ctx, s.URL("/big"), tc.opts...); err != nil || e.Kind != tc.want {
			t.Errorf("Explain with %+v: kind %v, %v; want %v", tc.opts, e.Kind, err, tc.want)
		}
	}
}

// TestGetOptions_SourceNormalisedPerCall: a Source whose hosts are not in key
// form is applied as its normalised form would be, and is left as it was; one
// in key form is used as it is, with no copy made.
func TestGetOptions_SourceNormalisedPerCall(t *testing.T) {
	t.Parallel()
	web := politetest.NewWeb(t)
	s := web.Site("caps.example")
	a := s.AddArticle(politetest.Article{})
	p := testPolicy(Digest(), time.Millisecond)
	p.Admitted = []string{"other.example"}
	c := newClient(t, web, p)
	ctx := context.Background()

	if _, err := c.Get(ctx, s.URL(a.Path)); err == nil {
		t.Fatal("the policy's own source admitted caps.example")
	}
	src := &Source{Admitted: []string{"CAPS.Example."}}
	if _, err := c.Get(ctx, s.URL(a.Path), GetOptions{Source: src}); err != nil {
		t.Fatalf("a source admitting CAPS.Example.: %v", err)
	}
	if src.Admitted[0] != "CAPS.Example." {
		t.Fatalf("the caller's Source was changed: %q", src.Admitted)
	}
	keyed := &Source{Admitted: []string{"caps.example", "*.caps.example"}, Credential: Credential{Hosts: []string{"caps.example"}}}
	if keyedSource(keyed) != keyed {
		t.Fatal("a Source in key form was copied")
	}
	if got := keyedSource(src); got == src || got.Admitted[0] != "caps.example" {
		t.Fatalf("a Source not in key form: %q, want a copy admitting caps.example", got.Admitted)
	}
}
