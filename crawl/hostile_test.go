package crawl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/robots"
)

// hostileMemoryBound is the most memory the process may hold at any moment
// of the hostile crawl at 200 hosts (the web's sites, its recorder and the
// crawler together): Go's heap, stacks and runtime as runtime/metrics counts
// them, less what was given back to the system. The client holds a body up
// to its cap while it reads it, so most of it is the bodies past the caps
// read at once: at 200 hosts, three or four sites each of gzip bombs (held
// up to MaxDecoded, 32 MiB), oversize and endless bodies (MaxWire, 16 MiB).
const hostileMemoryBound = 512 << 20

// politetest's hostile web at 200 hosts, every misbehaviour at once on a
// few sites each (four in five sites rude), crawled in one pass of each
// source under the strict news preset, every source with its WordPress
// backlog: the auditor finds no violation; every refusal and failure the
// crawler reports is one of the documented types; nothing is read
// without bound (requests per host, backlog pages, an article read at most
// once, no request to a host the sources do not admit); every article of a
// site that leaves its articles alone is deposited; and the process's
// memory stays under hostileMemoryBound (P1, S2, S3, S4, D2, V7, V9, V11).
// Intervals are scaled down to 50 ms and the time-outs to 2 s (first
// byte) and 8 s (a whole read, its waits included). With -short, 60 hosts;
// under the race detector, whose TLS is several times slower, 100 (every
// trait still on a site).
func TestCrawler_P1_HostileWebHasNoViolation(t *testing.T) {
	hosts := 200
	switch {
	case testing.Short():
		hosts = 60
	case raceEnabled:
		hosts = 100
	}
	web, info := politetest.NewScenarioWeb(t, politetest.Hostile(19, hosts))
	shown := map[string]bool{}
	for _, s := range info.Rude() {
		shown[s.Trait] = true
	}
	for _, tr := range politetest.HostileTraits() {
		if !shown[tr] {
			t.Fatalf("trait %s on no site of %d", tr, hosts)
		}
	}

	p := testPolicy(t, StrictNews, testInterval)
	p.FirstByte, p.Timeout = 2*time.Second, 8*time.Second
	ev := &events{}
	c := &Crawler{Client: newClient(t, web, p), OnEvent: ev.on}
	for _, s := range info.Sites {
		c.Sources = append(c.Sources, siteSource(s.Name, StrictNews, true))
	}

	peak := watchMemory(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang fails, it does not stall CI
	defer cancel()
	reps, err := c.RunOnce(ctx)
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	mem := peak()
	slowest := slices.Clone(reps)
	slices.SortFunc(slowest, func(a, b *PassReport) int { return cmp.Compare(b.End.Sub(b.Start), a.End.Sub(a.Start)) })
	for _, r := range slowest[:3] {
		t.Logf("slowest pass: %s (%s) %v", r.Source, info.Site(r.Source).Trait, r.End.Sub(r.Start).Round(time.Millisecond))
	}

	// Politeness.
	rep := web.Audit(auditPolicy(p))
	if !rep.OK() {
		t.Errorf("auditor: %v", rep)
		for host := range rep.ByHost { // what each host wronged did, and was asked
			if s := info.Site(host); s != nil {
				t.Logf("%s is %q:", host, s.Trait)
			}
			for _, r := range web.Requests() {
				if r.Host == host {
					t.Logf("  #%d %s %s conn %d: %d, start %s, finished %s", r.Seq, r.Method, r.Target, r.Conn, r.Status,
						r.Start.Format("15:04:05.000"), r.Finished.Format("15:04:05.000"))
				}
			}
			for _, cn := range web.Connections() {
				if cn.Host == host {
					t.Logf("  conn %d: opened %s, closed %s", cn.ID, cn.Opened.Format("15:04:05.000"), cn.Closed.Format("15:04:05.000"))
				}
			}
		}
	}

	// Every refusal and failure typed.
	kinds := map[string]int{}
	check := func(where string, err error) {
		if err == nil {
			return
		}
		k := errorKind(err)
		if k == "" {
			t.Errorf("%s: untyped error %T: %v", where, err, err)
			return
		}
		kinds[k]++
	}
	for _, r := range reps {
		check(r.Source+" pass", r.Err)
		check(r.Source+" trigger", r.Trigger.Err)
		check(r.Source+" backlog", r.Backlog.Err)
	}
	for _, e := range ev.all {
		switch e.Kind {
		case EventRefused, EventFailed, EventTriggerFailed, EventBacklogFailed, EventStoreError, EventLeaseLost:
			if e.Err == nil && e.Kind != EventFailed {
				t.Errorf("%v %s %s: no error", e.Kind, e.Source, e.URL)
			}
			check(fmt.Sprintf("%v %s", e.Kind, e.URL), e.Err)
		}
	}

	// Nothing unbounded: each host's requests, its article reads, its
	// backlog pages; and no request to a host no source admits.
	byHost := map[string][]politetest.Request{}
	for _, r := range web.Requests() {
		byHost[r.Host] = append(byHost[r.Host], r)
	}
	for _, other := range info.Others {
		if n := len(byHost[other]); n > 0 {
			t.Errorf("%d requests to %s, which no source admits", n, other)
		}
	}
	sites := map[string]politetest.SiteInfo{}
	for _, s := range info.Sites {
		sites[s.Name] = s
	}
	for host, rs := range byHost {
		s, ok := sites[host]
		if !ok {
			if !strings.HasPrefix(host, "news-") {
				t.Errorf("%d requests to %s, not a site of the web", len(rs), host)
			}
			continue
		}
		// robots.txt (and its redirects), the feed, two backlog pages, the
		// articles (and their redirects).
		if limit := (1 + fetch.DefaultMaxRedirects) * (3 + len(s.Articles)); len(rs) > limit {
			t.Errorf("%s (%s): %d requests, more than %d", host, s.Trait, len(rs), limit)
		}
		reads, pages := map[string]int{}, 0
		for _, r := range rs {
			if r.Path == "/wp-json/wp/v2/posts" {
				pages++
			}
			if r.Status == 200 && strings.HasPrefix(r.Path, "/news/") {
				reads[r.Path]++
			}
		}
		if pages > 2 {
			t.Errorf("%s (%s): %d backlog pages read", host, s.Trait, pages)
		}
		for path, n := range reads {
			if n > 1 {
				t.Errorf("%s (%s): %s answered 200 %d times", host, s.Trait, path, n)
			}
		}
	}

	// The sites that leave their articles alone have every one deposited.
	deps := c.Deposited()
	want, got := 0, 0
	for i, s := range info.Sites {
		n := 0
		if ds, err := deps.List(context.Background(), s.Name, time.Time{}); err == nil {
			n = len(ds)
		}
		got += n
		if !s.Readable {
			continue
		}
		want += len(s.Articles)
		if n != len(s.Articles) {
			t.Errorf("%s (%s): %d of %d articles deposited; pass: %+v", s.Name, s.Trait, n, len(s.Articles), *reps[i])
		}
	}

	if mem.peak > hostileMemoryBound {
		t.Errorf("memory peaked at %.1f MiB, over the bound of %d MiB", float64(mem.peak)/(1<<20), hostileMemoryBound>>20)
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	names := make([]string, 0, len(kinds))
	for k, n := range kinds {
		names = append(names, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(names)
	t.Logf("%d hosts (%d rude), %d requests, %d violations; %d articles deposited (%d from the readable sites); memory peak %.1f MiB (heap %.1f MiB), peak RSS %.1f MiB; errors: %s",
		hosts, len(info.Rude()), rep.Requests, len(rep.Violations), got, want,
		float64(mem.peak)/(1<<20), float64(mem.heap)/(1<<20), float64(ru.Maxrss)/1024, strings.Join(names, " "))
}

// errorKind names the documented type an error of the crawl is, or "" for
// an error of none.
func errorKind(err error) string {
	var (
		refused   *fetch.RefusedError
		disallow  *robots.DisallowedError
		cool      *backoff.CooldownError
		status    *feed.StatusError
		parse     *feed.ParseError
		opErr     *net.OpError
		leaseErr  *LeaseError
		sourceErr *SourceError
	)
	switch {
	case errors.As(err, &refused):
		return "refused:" + refused.Reason.String()
	case errors.As(err, &disallow):
		return "robots"
	case errors.As(err, &cool):
		return "cool-down"
	case errors.Is(err, robots.ErrNotSent):
		return "robots-not-sent"
	case errors.Is(err, fetch.ErrPacingDeadline):
		return "pacing-deadline"
	case errors.As(err, &status):
		return fmt.Sprintf("feed-status:%d", status.StatusCode)
	case errors.As(err, &parse):
		return "feed-parse"
	case errors.As(err, &leaseErr):
		return "lease"
	case errors.As(err, &sourceErr):
		return "source"
	}
	for _, s := range []struct {
		err  error
		name string
	}{
		{fetch.ErrNotOK, "not-ok"}, {fetch.ErrNoMediaType, "no-media-type"}, {fetch.ErrTruncated, "truncated"},
		{fetch.ErrUnknownCoding, "unknown-coding"}, {fetch.ErrWireTooLarge, "wire-too-large"},
		{fetch.ErrDecodedTooLarge, "decoded-too-large"}, {fetch.ErrCorrupt, "corrupt"},
		{fetch.ErrTooManyCodings, "too-many-codings"}, {fetch.ErrHeaderTimeout, "header-timeout"},
		{fetch.ErrHeaderTooLarge, "header-too-large"}, {fetch.ErrNotResent, "not-resent"}, {fetch.ErrNoAnswer, "no-answer"},
		{feed.ErrTooLarge, "feed-too-large"}, {feed.ErrTooMany, "feed-too-many"}, {feed.ErrMalformed, "feed-malformed"},
		{feed.ErrNotFeed, "not-feed"}, {feed.ErrStatus, "feed-status"},
		{context.DeadlineExceeded, "deadline"},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	switch {
	case errors.As(err, &opErr):
		return "network:" + opErr.Op
	case errors.Is(err, syscall.ECONNRESET):
		return "network:reset"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "network:unexpected-eof"
	}
	return ""
}

// memPeak is the most memory seen: Go's total (heap, stacks, runtime), and
// the heap's objects at that moment.
type memPeak struct{ peak, heap uint64 }

// watchMemory samples the process's memory every 5 ms from now until the
// returned function is called, which returns the peak.
func watchMemory(t *testing.T) func() memPeak {
	t.Helper()
	runtime.GC()
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/released:bytes"}}
	var (
		mu   sync.Mutex
		best memPeak
	)
	measure := func() {
		metrics.Read(samples)
		total := samples[0].Value.Uint64() - samples[2].Value.Uint64() // mapped and not given back to the OS
		mu.Lock()
		if total > best.peak {
			best = memPeak{peak: total, heap: samples[1].Value.Uint64()}
		}
		mu.Unlock()
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			measure()
			select {
			case <-tick.C:
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	stop := func() memPeak {
		once.Do(func() { close(done); <-stopped })
		measure()
		mu.Lock()
		defer mu.Unlock()
		return best
	}
	t.Cleanup(func() { stop() })
	return stop
}
