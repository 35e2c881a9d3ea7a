package main

// Where a crawl keeps what it knows. Deposits always go to the SQLite file
// (-store, or store.path beside the config). The state, the schedule's
// claims and slots, the refusal ledger, robots.txt records, validators and
// the crawl state (schedules, pass leases, references, per-pass counters),
// go to the same file, or, when store.redis is set, to that Redis, which
// every worker of the crawl shares: one budget per host however many
// processes ask.
//
// Workers on one machine may share one SQLite file (it is opened in WAL
// mode, and each deposit is one transaction); workers on several machines
// each keep their own file beside their config, and every article is
// deposited in exactly one of them, since whether it was read is decided
// by the crawl state in Redis.

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/robots"
	"github.com/politefetch/politefetch/store/redis"
	"github.com/politefetch/politefetch/store/sqlite"
)

// redisWatchEvery is how often a crawl on Redis checks that it answers.
const redisWatchEvery = time.Second

// stores are a command's stores: the SQLite file, and the Redis holding the
// state when the config names one. Its methods shadow the file's, so a
// caller asks stores for the ledger and gets the one the crawl uses. Close
// closes both.
type stores struct {
	*sqlite.DB
	rs   *redis.Store    // nil: everything is in the file
	rc   *goredis.Client // rs's client, closed by Close
	addr string          // rc's address, for messages

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

// openStores opens the SQLite file at path and, when cfg sets store.redis,
// connects to that Redis and checks that it answers, so an unreachable
// server is an error naming its address and what the OS said, before
// anything is fetched.
func openStores(ctx context.Context, cfg *Config, path string) (*stores, error) {
	return openStoresMode(ctx, cfg, path, false)
}

// openStoresMode is openStores, the SQLite file opened for reading only
// when readOnly (report, export, verify): nothing created, migrated or
// locked, so a store on a read-only medium, or one a crawl is writing, reads.
func openStoresMode(ctx context.Context, cfg *Config, path string, readOnly bool) (*stores, error) {
	var s stores
	if rc := cfg.Store.Redis; rc != nil {
		pw, err := rc.passwordValue()
		if err != nil {
			return nil, err
		}
		// go-redis logs its pool's failed dials to stderr, through one
		// logger for the whole process: silenced, since the crawl says
		// once when Redis stops answering (watch) and every failed call
		// is an error the layers report.
		logging.Disable()
		timeout := rc.timeout()
		s.addr = rc.Addr
		s.rc = goredis.NewClient(&goredis.Options{
			Addr:                  rc.Addr,
			Username:              rc.Username,
			Password:              pw,
			DB:                    rc.DB,
			DialTimeout:           timeout,
			ReadTimeout:           timeout,
			WriteTimeout:          timeout,
			ContextTimeoutEnabled: true, // a call ends at its deadline: the store refuses a client without
			MaxRetries:            -1,   // a failed call is a refusal, not retried behind the schedule's back
		})
		s.rs = &redis.Store{Client: s.rc, Prefix: rc.Prefix, Timeout: timeout}
		if err := s.ping(ctx); err != nil {
			s.rc.Close()
			return nil, err
		}
	}
	var db *sqlite.DB
	var err error
	if readOnly {
		db, err = sqlite.OpenReadOnly(ctx, path, nil)
	} else {
		db, err = sqlite.Open(ctx, path, &sqlite.Options{SyncDeposits: cfg.Store.SyncDeposits})
	}
	if err != nil {
		if s.rc != nil {
			s.rc.Close()
		}
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	s.DB = db
	return &s, nil
}

// ping asks Redis for an answer within the store's timeout.
func (s *stores) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.rs.Timeout)
	defer cancel()
	if err := s.rc.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("store redis %s: %w", s.addr, err)
	}
	return nil
}

// Close closes the file and the connection to Redis.
func (s *stores) Close() error {
	err := s.DB.Close()
	if s.rc != nil {
		if cerr := s.rc.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// where names the state's store for a log line: the file, or the Redis.
func (s *stores) where() string {
	if s.rs == nil {
		return s.Path()
	}
	p := s.rs.Prefix
	if p == "" {
		p = redis.DefaultPrefix
	}
	return "redis " + s.addr + " (prefix " + strconv.Quote(p) + "), deposits in " + s.Path()
}

// Ledger is the refusal ledger's store.
func (s *stores) Ledger() backoff.Store {
	if s.rs != nil {
		return s.rs.Ledger()
	}
	return s.DB.Ledger()
}

// Robots is the robots.txt records' store.
func (s *stores) Robots() robots.Store {
	if s.rs != nil {
		return countingRobots{s.rs.Robots(), &s.robotsFetches}
	}
	return countingRobots{s.DB.Robots(), &s.robotsFetches}
}

// Validators is the ETag and Last-Modified store.
func (s *stores) Validators() fetch.ValidatorStore {
	if s.rs != nil {
		return s.rs.Validators()
	}
	return s.DB.Validators()
}

// Schedule is the pacing schedule: claims and in-flight slots per host.
func (s *stores) Schedule() fetch.Schedule {
	if s.rs != nil {
		return s.rs.Schedule()
	}
	return s.DB.Schedule()
}

// CrawlState is the crawl's state: schedules, pass leases, references.
func (s *stores) CrawlState() crawl.State {
	if s.rs != nil {
		return s.rs.State()
	}
	return s.DB.CrawlState()
}

// watch logs, until ctx ends, each time Redis stops answering and each
// time it answers again: while it is down every layer refuses (nothing is
// fetched without its claim and slot), and the operator is told so once,
// not once per refused request. Without Redis it returns at once.
func (s *stores) watch(ctx context.Context, logger *slog.Logger) {
	if s.rs == nil {
		return
	}
	t := time.NewTicker(redisWatchEvery)
	defer t.Stop()
	down := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := s.ping(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !down:
			down = true
			logger.Error("redis is not answering: nothing is fetched until it does (the crawl fails closed)", "addr", s.addr, "err", err)
		case err == nil && down:
			down = false
			logger.Warn("redis answers again: the crawl resumes", "addr", s.addr)
		}
	}
}

// crawlStores returns the crawl state and the deposits of st.
func crawlStores(st *stores) (crawl.State, crawl.Deposits) {
	return st.CrawlState(), st.Deposits()
}

// passwordValue reads the password from where Password points; "" when
// none is set.
func (r *RedisConfig) passwordValue() (string, error) {
	if r.Password == "" {
		return "", nil
	}
	v, err := crawl.CredentialRef{Header: "store.redis.password", Value: r.Password}.Resolve()
	if err != nil {
		return "", fmt.Errorf("store redis %s: %w", r.Addr, err)
	}
	return v, nil
}
