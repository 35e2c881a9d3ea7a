package main

// Where a crawl keeps what it knows, chosen in one place (backends below).
// Deposits always go to the SQLite file (-store, or store.path beside the
// config). The state (the schedule's claims and slots, the refusal ledger,
// robots.txt records, validators and the crawl state: schedules, pass
// leases, references, per-source counters) goes to the same file, or, when
// the configuration's store names a backend of the table (store.redis), to
// that backend, which every worker of the crawl shares: one budget per host
// however many processes ask.
//
// Workers on one machine may share one SQLite file (it is opened in WAL
// mode, and each deposit is one transaction); workers on several machines
// each keep their own file beside their config, and every article is
// deposited in exactly one of them, since whether it was read is decided
// by the crawl state in the shared backend.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/robots"
	"github.com/politefetch/politefetch/store/sqlite"
)

// backend is where a crawl's state lives, as every store of the library
// hands it out (sqlite.DB.Stores, redis.Store.Stores): the fetch side for
// fetch.WithStores, the crawl side for a crawl.Crawler. A backend that keeps
// no deposits leaves the crawl side's Deposits nil, and the SQLite file
// keeps them.
type backend interface {
	Stores() (fetch.Stores, crawl.Stores)
	Close() error
}

// stateSection is a section of the configuration's store that puts the
// state in a backend other than the SQLite file.
type stateSection interface {
	// check validates the section (key is its place, "store.redis"),
	// resolving its paths relative to the config's folder.
	check(c *Config, key string) error
	// open connects to the backend and checks that it answers, so an
	// unreachable one is an error naming it before anything is fetched.
	open(ctx context.Context) (backend, error)
	// where names the backend for log lines and sources check.
	where() string
}

// backends is the one table of the state's backends besides the SQLite
// file: the key of the store section that names it, and that section. At
// most one is set; none, and the file keeps everything. A Postgres backend
// is its package (store/postgres, whose store has Stores), a section type
// (PostgresConfig, with check, open and where, in store_postgres.go), its
// field in StoreConfig and one row here.
var backends = []struct {
	key     string
	section func(*StoreConfig) (stateSection, bool)
}{
	{"redis", func(s *StoreConfig) (stateSection, bool) { return s.Redis, s.Redis != nil }},
}

// stateSection returns the configured state backend's key and section;
// ok is false when the file keeps the state.
func (s *StoreConfig) stateSection() (key string, sec stateSection, ok bool) {
	for _, b := range backends {
		if sec, set := b.section(s); set {
			return "store." + b.key, sec, true
		}
	}
	return "", nil, false
}

// watchEvery is how often a crawl checks that a backend that is a server
// answers.
const watchEvery = time.Second

// pinger is a backend that may stop answering (a server), watched while a
// crawl runs.
type pinger interface {
	ping(ctx context.Context) error
	name() string // "redis": what the log says is not answering
	addr() string
}

// stores are a command's stores: the SQLite file, and the backend holding
// the state (the file itself when the configuration names none). Close
// closes both.
type stores struct {
	file  *sqlite.DB
	state backend      // the state's backend; the file when sec is nil
	sec   stateSection // its section of the configuration; nil: the file
	fetch fetch.Stores // the state's fetch side, robots.txt records counted
	crawl crawl.Stores // the state's crawl side, deposits in the file

	// robotsFetches counts the robots.txt records written: one per
	// robots.txt fetch the chain made (answered or not), for the summary.
	robotsFetches atomic.Int64
}

// countingRobots counts the records put: each is a robots.txt fetch's end.
type countingRobots struct {
	robots.Store
	n *atomic.Int64
}

func (c countingRobots) Put(ctx context.Context, host string, r robots.Record) error {
	c.n.Add(1)
	return c.Store.Put(ctx, host, r)
}

// countingReleaser is a countingRobots over a store that holds something
// for a robots.txt fetch (store/redis's fetch lease): the wrapper keeps
// its ReleaseFetch, or the other workers would wait out the lease.
type countingReleaser struct {
	countingRobots
	robots.FetchReleaser
}

// countRobots wraps s so that every record put adds one to n, keeping
// s's robots.FetchReleaser when it is one.
func countRobots(s robots.Store, n *atomic.Int64) robots.Store {
	c := countingRobots{s, n}
	if fr, ok := s.(robots.FetchReleaser); ok {
		return countingReleaser{c, fr}
	}
	return c
}

// openStores opens the SQLite file at path and the state's backend the
// configuration names, if any.
func openStores(ctx context.Context, cfg *Config, path string) (*stores, error) {
	return openStoresMode(ctx, cfg, path, false)
}

// openStoresMode is openStores, the SQLite file opened for reading only
// when readOnly (report, export, verify): nothing created, migrated or
// locked, so a store on a read-only medium, or one a crawl is writing, reads.
func openStoresMode(ctx context.Context, cfg *Config, path string, readOnly bool) (*stores, error) {
	s := &stores{}
	if _, sec, ok := cfg.Store.stateSection(); ok {
		b, err := sec.open(ctx)
		if err != nil {
			return nil, err
		}
		s.state, s.sec = b, sec
	}
	var db *sqlite.DB
	var err error
	if readOnly {
		db, err = sqlite.OpenReadOnly(ctx, path, nil)
	} else {
		db, err = sqlite.Open(ctx, path, &sqlite.Options{SyncDeposits: cfg.Store.SyncDeposits})
	}
	if err != nil {
		if s.state != nil {
			s.state.Close()
		}
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	s.file = db
	if s.state == nil {
		s.state = db
	}
	s.fetch, s.crawl = s.state.Stores()
	s.fetch.Robots = countRobots(s.fetch.Robots, &s.robotsFetches)
	if t, ok := s.crawl.State.(crawl.Tallier); ok {
		// Each robots.txt fetch a source's read asked for, in that
		// source's counters (report's robots.txt column).
		s.fetch.Robots = crawl.CountRobots(s.fetch.Robots, t)
	}
	if s.crawl.Deposits == nil {
		_, fileSide := db.Stores()
		s.crawl.Deposits = fileSide.Deposits
	}
	return s, nil
}

// holdSchedule has the fetch side pace through the file's schedule held
// by this process (store.schedule: held, the default), when the state is
// in the file; a file another process fetches through is refused with
// what to do.
func (s *stores) holdSchedule(ctx context.Context, cfg *Config) error {
	if s.sec != nil || cfg.Store.Schedule == "shared" {
		return nil
	}
	h, err := s.file.HoldSchedule(ctx)
	if errors.Is(err, sqlite.ErrHeld) {
		return fmt.Errorf("store %s: another process fetches through this file (%w); wait for it to end, or set store.schedule: shared in the configuration of every process that crawls from it", s.file.Path(), err)
	}
	if err != nil {
		return fmt.Errorf("store %s: %w", s.file.Path(), err)
	}
	s.fetch.Schedule = h
	return nil
}

// Fetch is the state's fetch side, for fetch.WithStores.
func (s *stores) Fetch() fetch.Stores { return s.fetch }

// Crawl is the state's crawl side: the crawl state, and the file's deposits.
func (s *stores) Crawl() crawl.Stores { return s.crawl }

// Path is the SQLite file's path.
func (s *stores) Path() string { return s.file.Path() }

// Close closes the file and the state's backend.
func (s *stores) Close() error {
	err := s.file.Close()
	if s.sec != nil {
		if cerr := s.state.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// where names the state's store for a log line: the file, or the backend.
func (s *stores) where() string {
	if s.sec == nil {
		return s.Path()
	}
	return s.sec.where() + ", deposits in " + s.Path()
}

// watch logs, until ctx ends, each time the state's backend stops
// answering and each time it answers again: while it is down every layer
// refuses (nothing is fetched without its claim and slot), and the
// operator is told so once, not once per refused request. A backend that
// is no server (the file) is not watched: it returns at once.
func (s *stores) watch(ctx context.Context, logger *slog.Logger) {
	p, ok := s.state.(pinger)
	if !ok {
		return
	}
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	down := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := p.ping(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !down:
			down = true
			logger.Error(p.name()+" is not answering: nothing is fetched until it does (the crawl fails closed)", "addr", p.addr(), "err", err)
		case err == nil && down:
			down = false
			logger.Warn(p.name()+" answers again: the crawl resumes", "addr", p.addr())
		}
	}
}
