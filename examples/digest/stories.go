package main

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/digest"
	"github.com/politefetch/politefetch/digest/digesttest"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
	"github.com/politefetch/politefetch/store/sqlite"
)

// library is where the stories come from: a crawl's deposits and the
// publishers whose deposits are digested.
type library struct {
	deps  crawl.Deposits
	pubs  []digest.Publisher
	close func() error
	// summaries remembers each article's summary across builds, so that
	// serve summarizes an article once, not on every request.
	summaries *digest.Cache
}

func (l *library) Close() error {
	if l.close != nil {
		return l.close()
	}
	return nil
}

// stories returns the deposits read in the window before now as stories.
func (l *library) stories(ctx context.Context, now time.Time, window time.Duration) ([]digest.Story, error) {
	return digest.Stories(ctx, l.deps, l.pubs, now.Add(-cmp.Or(window, digest.DefaultWindow)))
}

func open(ctx context.Context, o options, log io.Writer) (*library, error) {
	l := &library{summaries: &digest.Cache{}}
	if o.summarizer != "" {
		l.summaries.Summarizer = &digest.HTTP{URL: o.summarizer}
	}
	var cfg *config
	if o.config != "" {
		c, err := readConfig(o.config)
		if err != nil {
			return nil, err
		}
		cfg = c
		if o.store == "" && c.storePath != "" {
			o.store = c.storePath
			if !filepath.IsAbs(o.store) {
				o.store = filepath.Join(filepath.Dir(o.config), o.store)
			}
		}
	}
	if o.store == "" && !o.demo {
		return nil, errors.New("no store: give -store, or a -config whose store.path names one")
	}
	if o.store != "" {
		// A reader of the store: it must exist (only -demo writes one), and
		// this process sweeps nothing of the crawler's state.
		opts := &sqlite.Options{SweepEvery: -1}
		open := sqlite.OpenReadOnly // a reader: nothing created, migrated or locked
		if o.demo {
			open = sqlite.Open
		}
		db, err := open(ctx, o.store, opts)
		if err != nil {
			return nil, err
		}
		l.deps, l.close = db.Deposits(), db.Close
	} else {
		l.deps = &crawl.MemoryDeposits{}
	}
	if o.demo {
		pubs, err := demoCrawl(ctx, l.deps, log)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.pubs = pubs
		return l, nil
	}
	if cfg != nil {
		for _, s := range cfg.Sources {
			p := digest.PublisherOf(s.Source)
			p.Logo = s.Logo
			l.pubs = append(l.pubs, p)
		}
		return l, nil
	}
	ids, err := storedSources(ctx, o.store)
	if err != nil {
		l.Close()
		return nil, err
	}
	for _, id := range ids {
		l.pubs = append(l.pubs, digest.Publisher{Source: id})
	}
	return l, nil
}

// config is the part of a crawl configuration the digest reads: its
// sources (with an optional logo each) and its store's path. The other
// sections of politecrawl's configuration are accepted as they stand (the
// crawl checks them); any other key is an error naming its line.
type config struct {
	Crawler yaml.Node `yaml:"crawler"`
	Policy  yaml.Node `yaml:"policy"`
	Crawl   yaml.Node `yaml:"crawl"`
	Outputs yaml.Node `yaml:"outputs"`
	Store   yaml.Node `yaml:"store"`
	Sources []struct {
		crawl.Source `yaml:",inline"`
		Logo         string `yaml:"logo"`
	} `yaml:"sources"`

	storePath string
}

func readConfig(path string) (*config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// As strict as politecrawl's: a key this reader does not know is an
	// error naming its line, not a setting silently ignored.
	var c config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Store.Kind != 0 {
		var st struct {
			Path string `yaml:"path"`
		}
		if err := c.Store.Decode(&st); err != nil {
			return nil, fmt.Errorf("%s: store: %w", path, err)
		}
		c.storePath = st.Path
	}
	return &c, nil
}

// storedSources lists the sources that have deposits in the store, with the
// query the store documents; the store's Go API lists deposits of a named
// source only.
func storedSources(ctx context.Context, path string) ([]string, error) {
	db, err := sql.Open("sqlite", sqlite.ReadOnlyURI(path))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT DISTINCT source FROM deposit ORDER BY source")
	if err != nil {
		return nil, fmt.Errorf("sources of %s: %w", path, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// The demo crawler's identity and pace: the digest engine's policy with
// its 2–5 s interval scaled down to 100 ms, so ten sites are read in
// seconds.
const (
	demoName     = "PoliteDigestDemo"
	demoInfoURL  = "https://politefetch.example/digest-demo"
	demoContact  = "digest-demo@politefetch.example"
	demoInterval = 100 * time.Millisecond
)

// demoCrawl publishes the digesttest demo on a politetest web, crawls it
// once with package crawl into deps, and checks the politeness auditor
// found nothing. It returns the demo's publishers.
func demoCrawl(ctx context.Context, deps crawl.Deposits, log io.Writer) ([]digest.Publisher, error) {
	web, err := politetest.Start()
	if err != nil {
		return nil, err
	}
	defer web.Close()
	demo, err := digesttest.Demo(web, time.Now())
	if err != nil {
		return nil, err
	}
	pol := fetch.Digest()
	pol.Name, pol.Version, pol.InfoURL, pol.Contact = demoName, "1", demoInfoURL, demoContact
	pol.Interval, pol.IntervalMax = demoInterval, 0
	client, err := fetch.New(pol,
		fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
			Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	if err != nil {
		return nil, err
	}
	defer client.Close()
	var srcs []crawl.Source
	var pubs []digest.Publisher
	for _, p := range demo {
		srcs = append(srcs, p.Source)
		pub := digest.PublisherOf(p.Source)
		pub.Logo = p.Logo
		pubs = append(pubs, pub)
	}
	c := &crawl.Crawler{Client: client, Sources: srcs, Deposits: deps}
	reports, err := c.RunOnce(ctx)
	if err != nil {
		return nil, err
	}
	var read, excerpts, refused int
	for _, r := range reports {
		if r.Err != nil {
			return nil, fmt.Errorf("demo crawl of %s: %w", r.Source, r.Err)
		}
		read += r.Deposited
		excerpts += r.Excerpted
		refused += r.Refused
	}
	audit := web.Audit(politetest.Policy{
		Interval:       pol.Interval,
		MaxInFlight:    1,
		StrictRobots:   true,
		UserAgent:      regexp.MustCompile("^" + regexp.QuoteMeta(pol.UserAgent()) + "$"),
		RobotsAgent:    pol.Name,
		Slack:          politetest.Slack(demoInterval / 5),
		HTTPSOnly:      true,
		AllowedHeaders: []string{"User-Agent", "Accept", "Accept-Encoding", "If-None-Match", "If-Modified-Since"},
	})
	fmt.Fprintf(log, "demo: crawled %d simulated publishers in %d requests: %d articles read in full; kept as the feeds' excerpts: %d refused by robots.txt, %d without a full-text licence; the auditor found %d violations\n",
		len(srcs), len(web.Requests()), read, refused, excerpts, len(audit.Violations))
	if !audit.OK() {
		return nil, fmt.Errorf("demo crawl was not polite:\n%s", audit)
	}
	return pubs, nil
}
