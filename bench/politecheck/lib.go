package main

// lib: the crawl library as a crawler process of its own, for politecheck
// to measure at scale without the web in the same process.

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
)

// oneAddr resolves every name to one address.
type oneAddr struct{ ip netip.Addr }

func (r oneAddr) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if host == "" {
		return nil, errors.New("empty host")
	}
	return []netip.Addr{r.ip}, nil
}

// runLib crawls the seed list once with the crawl library (the strict news
// preset at 1 s per host, in-memory state, deposits counted and dropped)
// and prints one line: deposits, goroutines at peak, and the heap retained
// per host after the pass.
func runLib() error {
	list, err := seeds()
	if err != nil {
		return err
	}
	ap, err := netip.ParseAddrPort(os.Getenv("POLITECHECK_ADDR"))
	if err != nil {
		return fmt.Errorf("POLITECHECK_ADDR: %w", err)
	}
	pem, err := os.ReadFile(os.Getenv("POLITECHECK_CA"))
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return errors.New("POLITECHECK_CA holds no certificate")
	}
	pol := fetch.StrictNews()
	pol.Name, pol.Version, pol.InfoURL = "PolitecheckBench", "1", "https://politefetch.example/bench"
	pol.Interval = time.Second
	var d net.Dialer
	client, err := fetch.New(pol, fetch.WithNetwork(fetch.Network{Resolver: oneAddr{ap.Addr()}, RootCAs: roots,
		Allow: []netip.Prefix{netip.PrefixFrom(ap.Addr(), ap.Addr().BitLen())},
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, ap.String())
		}}))
	if err != nil {
		return err
	}
	defer client.Close()
	var sources []crawl.Source
	for i, s := range list {
		u, err := url.Parse(s)
		if err != nil {
			return err
		}
		sources = append(sources, crawl.Source{
			ID: "src-" + strconv.Itoa(i+1), Name: u.Hostname(),
			Trigger:  crawl.Trigger{Feeds: []string{s}},
			Admitted: []string{u.Hostname()},
			FullText: true,
			Read:     crawl.Read{Method: crawl.ReadPage},
			Policy:   crawl.PolicySpec{Preset: crawl.StrictNews},
			Active:   true,
		})
	}
	deps := &countingDeposits{}
	c := &crawl.Crawler{Client: client, Sources: sources, Deposits: deps}
	before := heapInuse()
	var peakG atomic.Int64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if g := int64(runtime.NumGoroutine()); g > peakG.Load() {
				peakG.Store(g)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	reports, err := c.RunOnce(context.Background())
	close(stop)
	<-sampled
	if err != nil {
		return err
	}
	unread := 0
	for _, r := range reports {
		if r.Err != nil || r.Trigger.Err != nil {
			unread++
		}
	}
	after := heapInuse()
	fmt.Printf("lib: %d deposited, %d sources' feeds unread, goroutines at peak %d, heap retained per host %.1f KiB (connections open)\n",
		deps.n.Load(), unread, peakG.Load(), float64(int64(after)-int64(before))/float64(len(list))/1024)
	return nil
}
