package redis

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/feed"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/robots"
)

// childEnv carries a worker's configuration (JSON) when the test binary is
// re-executed as a worker process.
const childEnv = "POLITEFETCH_REDIS_WORKER"

// workerConfig is what a worker process is told.
type workerConfig struct {
	ID       int
	Redis    string   // the Redis address, or
	Cluster  []string // the cluster's nodes
	Prefix   string
	Web      string // the politetest web's address
	CA       string // the web's CA certificate, PEM
	Sites    []string
	Interval time.Duration
	LeaseTTL time.Duration
	Skew     time.Duration // added to this worker's clock
	Verbose  bool          // print every pass that did not finish
}

// quiet drops go-redis's own log lines (each failed dial while Redis is
// down); the worker says what failed itself.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// skewedClock is real time moved by a constant.
type skewedClock struct{ d time.Duration }

func (c skewedClock) Now() time.Time                         { return time.Now().Add(c.d) }
func (c skewedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// webResolver answers every name with the loopback address the web serves.
type webResolver struct{}

func (webResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// workerPolicy is the fetch policy of every worker (and of the audit).
func workerPolicy(interval time.Duration) (fetch.Policy, error) {
	p, err := crawl.PolicySpec{Preset: crawl.Vault}.Fetch()
	if err != nil {
		return p, err
	}
	p.Name, p.Version, p.InfoURL, p.Contact = "RedisWorkerBot", "1", "https://crawler.example/about", "bot@crawler.example"
	// The vault preset's ledger has no back-off of its own (V12: retry on
	// the next pass): after a challenge page without Retry-After only the
	// source's 15-minute trigger schedule keeps its host unasked, and a
	// schedule write lost to a Redis outage lets the next pass ask again.
	// The auditor holds every crawler to 5 minutes after a challenge page;
	// the workers' ledger cools a host down as the strict news crawler's
	// does, so that the cool-down every worker must honour after a refusal
	// is in the shared ledger, which is what these tests are about.
	p.Backoff = backoff.StrictNews()
	p.Interval, p.IntervalMax = interval, 0
	p.Timeout = 5 * time.Second // a lease lost with its worker blocks its host this long at most
	return p, nil
}

// workerSource is one site's source.
func workerSource(site string) crawl.Source {
	return crawl.Source{
		ID: site, Name: site, Active: true, FullText: true,
		Trigger:  crawl.Trigger{Feeds: []string{"https://" + site + "/feed.xml"}},
		Admitted: []string{site},
		Policy:   crawl.PolicySpec{Preset: crawl.Vault},
	}
}

// childMain is a worker process: a fetch client and a crawler whose
// schedule, ledger, robots.txt, validators and crawl state are all in
// Redis, running passes of the sources no worker has finished yet (a set
// in Redis the test keeps) until every one is finished. It exits 0 then,
// 1 on a configuration error.
func childMain() int {
	var cfg workerConfig
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	goredis.SetLogger(quiet{})
	logf := func(format string, args ...any) {
		if cfg.Verbose {
			fmt.Fprintf(os.Stderr, format, args...)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	var rc goredis.UniversalClient
	if len(cfg.Cluster) > 0 {
		rc = goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cfg.Cluster, ContextTimeoutEnabled: true, DialTimeout: 200 * time.Millisecond,
			ReadTimeout: time.Second, WriteTimeout: time.Second})
	} else {
		rc = goredis.NewClient(&goredis.Options{Addr: cfg.Redis, MaxRetries: -1, ContextTimeoutEnabled: true, DialTimeout: 200 * time.Millisecond,
			ReadTimeout: time.Second, WriteTimeout: time.Second})
	}
	defer rc.Close()
	clk := skewedClock{cfg.Skew}
	store := &Store{Client: rc, Prefix: cfg.Prefix, Clock: clk, Timeout: time.Second, RobotsFetchLease: 2 * time.Second}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(cfg.CA)) {
		fmt.Fprintln(os.Stderr, "worker: bad CA")
		return 1
	}
	p, err := workerPolicy(cfg.Interval)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	var d net.Dialer
	fc, err := fetch.New(p, fetch.WithClock(clk), fetch.WithNetwork(fetch.Network{Resolver: webResolver{},
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, cfg.Web)
		},
		RootCAs: pool, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}),
		fetch.WithStores(fetch.Stores{Schedule: &loggedSchedule{Schedule: store.Schedule()}, Ledger: loggedLedger{store.Ledger()},
			Robots: store.Robots(), Validators: store.Validators()}))
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	defer fc.Close()
	go traceOwed(ctx, store)
	// A pass that met a Redis error (a request refused for want of its
	// claim, a reference not recorded), or a request that timed out waiting
	// for its host (whose slot a request left held when Redis went away: it
	// expires, nobody else releases it), is run again: only a clean pass
	// finishes a source.
	var dmu sync.Mutex
	dirty := map[string]bool{}
	refused := map[string]bool{}  // the publisher refused a trigger read of the pass
	articles := map[string]bool{} // the pass has gone on to its articles
	early := map[string]bool{}    // dirty before that: its trigger's references may be unrecorded
	state := store.State()
	onEvent := func(ev crawl.Event) {
		unsent := ev.Err != nil && notSent(ev.Err)
		var status *feed.StatusError // the publisher's answer: a refusal, a challenge page
		switch ev.Kind {
		case crawl.EventTriggerFailed, crawl.EventFailed, crawl.EventSkipped, crawl.EventExcluded, crawl.EventLeaseLost, crawl.EventStoreError,
			crawl.EventNotModified, crawl.EventTriggerRead, crawl.EventPassStarted, crawl.EventPassEnded, crawl.EventDeposited:
			host := ev.Host
			if host == "" {
				host = ev.Source
			}
			fmt.Printf("trace %s %d %v:%s:%d:%s\n", host, time.Now().UnixNano(), ev.Kind, ev.URL, ev.Count, strings.ReplaceAll(fmt.Sprint(ev.Err), " ", "_"))
		}
		dmu.Lock()
		switch ev.Kind {
		case crawl.EventPassStarted:
			refused[ev.Source], articles[ev.Source], early[ev.Source] = false, false, false
		case crawl.EventTriggerFailed:
			if errors.As(ev.Err, &status) {
				refused[ev.Source] = true
			}
		case crawl.EventDeposited, crawl.EventExcerpted, crawl.EventExcluded, crawl.EventFailed,
			crawl.EventSkipped, crawl.EventMismatch, crawl.EventEmbargoed:
			articles[ev.Source] = true
		}
		if unsent {
			dirty[ev.Source] = true
		}
		if (unsent || ev.Kind == crawl.EventLeaseLost) && !articles[ev.Source] {
			// Before the articles (a pass cut short by its lost lease
			// included), the trigger may have been read without all of
			// its references recorded.
			early[ev.Source] = true
		}
		e, r := early[ev.Source], refused[ev.Source]
		dmu.Unlock()
		if ev.Kind == crawl.EventPassEnded && e && !r {
			// crawl moves a source's next trigger read on when a read of
			// its was refused by the chain for a reason of the chain's
			// (its robots.txt request waited out a dead worker's lease,
			// say), though nothing was sent, and when the references it
			// read could not be recorded: due again now, written while
			// the pass still holds its lease, so that whichever worker
			// runs the source next reads the trigger. Never when the
			// publisher refused it: asking again at once would be rude.
			// Tried until it is written (Redis may be slow, or still
			// away), for at most 10 s.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for ctx.Err() == nil {
				sc, err := state.Schedule(ctx, ev.Source)
				if err == nil {
					sc.NextTrigger = time.Time{}
					if err = state.SetSchedule(ctx, ev.Source, sc); err == nil {
						break
					}
				}
				wait(ctx, 50*time.Millisecond)
			}
		}
	}
	c := &crawl.Crawler{Client: fc, OnEvent: onEvent, State: state, Clock: clk, LeaseTTL: cfg.LeaseTTL,
		Owner: fmt.Sprintf("worker-%d-%d", cfg.ID, os.Getpid()), Deposits: &crawl.MemoryDeposits{}}
	for _, s := range cfg.Sites {
		c.Sources = append(c.Sources, workerSource(s))
	}
	doneKey := cfg.Prefix + "test:done"
	for ctx.Err() == nil {
		done, err := rc.SMembers(ctx, doneKey).Result()
		if err != nil {
			logf("worker %d: redis: %v\n", cfg.ID, err)
			wait(ctx, 100*time.Millisecond)
			continue
		}
		finished := map[string]bool{}
		for _, s := range done {
			finished[s] = true
		}
		var todo []string
		for _, s := range cfg.Sites {
			if !finished[s] {
				todo = append(todo, s)
			}
		}
		if len(todo) == 0 {
			return 0
		}
		var wg sync.WaitGroup
		for _, id := range todo {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dmu.Lock()
				delete(dirty, id)
				dmu.Unlock()
				rep, err := c.Pass(ctx, id)
				if err == nil && rep != nil && rep.Err != nil {
					err = rep.Err
				}
				dmu.Lock()
				if err == nil && dirty[id] {
					err = errors.New("a Redis error during the pass")
				}
				dmu.Unlock()
				switch {
				case err == nil && rep.Trigger.Unsent > 0 && rep.Trigger.Refs == 0:
					// Nothing of the trigger reached the publisher (its
					// robots.txt request waited out a dead worker's lease,
					// say): the source is not done, and is tried again.
					logf("worker %d: %s: trigger not sent, again\n", cfg.ID, id)
				case err == nil:
					if err := rc.SAdd(context.WithoutCancel(ctx), doneKey, id).Err(); err != nil {
						logf("worker %d: redis: %v\n", cfg.ID, err)
					}
					fmt.Printf("done %s %d\n", id, rep.Deposited)
				case errors.Is(err, crawl.ErrLeaseHeld):
				default:
					logf("worker %d: %s: %v\n", cfg.ID, id, err)
					// Told to the test: whether the error says what failed
					// in a type a caller can act on (a Redis *Error, a lost
					// lease, a request the chain did not send).
					typed := notSent(err) || errors.Is(err, crawl.ErrLeaseLost) || err.Error() == "a Redis error during the pass"
					fmt.Printf("passerr %s %v %q\n", id, typed, err.Error())
				}
			}()
		}
		wg.Wait()
		wait(ctx, 100*time.Millisecond)
	}
	return 0
}

// notSent reports whether err is one of the failures after which a request
// may not have been sent: a Redis error (no claim), a timeout waiting for the
// host's slot or its robots.txt, or a pacing deadline.
func notSent(err error) bool {
	var re *Error
	return errors.As(err, &re) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, robots.ErrNotSent) || errors.Is(err, fetch.ErrPacingDeadline) ||
		strings.Contains(err.Error(), context.DeadlineExceeded.Error())
}

func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// loggedSchedule prints every claim granted, with the instant its Acquire
// began, so the test can match the requests the web saw while Redis was
// down with claims granted before.
type loggedSchedule struct {
	fetch.Schedule
	mu sync.Mutex
}

func (l *loggedSchedule) Acquire(ctx context.Context, c fetch.Claim) (time.Duration, bool, error) {
	began := time.Now()
	wait, ok, err := l.Schedule.Acquire(ctx, c)
	if ok && err == nil {
		l.mu.Lock()
		fmt.Printf("claim %s %d\n", c.Key, began.UnixNano())
		l.mu.Unlock()
	}
	return wait, ok, err
}

// loggedLedger prints every write of the ledger (a refusal, a cool-down,
// one cleared) and every read that allowed nothing or found no record
// after one, for the test's timeline of a host.
type loggedLedger struct{ *Ledger }

func (l loggedLedger) Update(ctx context.Context, key string, fn func(backoff.State, bool) (backoff.State, bool)) error {
	var got backoff.State
	var keep bool
	err := l.Ledger.Update(ctx, key, func(cur backoff.State, ok bool) (backoff.State, bool) {
		got, keep = fn(cur, ok)
		return got, keep
	})
	fmt.Printf("trace %s %d update:strikes=%d,until=%+.3fs,keep=%v,err=%v\n", key, time.Now().UnixNano(), got.Strikes,
		untilIn(got.Until), keep, strings.ReplaceAll(fmt.Sprint(err), " ", "_"))
	return err
}

func (l loggedLedger) Get(ctx context.Context, key string) (backoff.State, bool, error) {
	st, ok, err := l.Ledger.Get(ctx, key)
	{
		fmt.Printf("trace %s %d get:ok=%v,strikes=%d,until=%+.3fs,err=%v\n", key, time.Now().UnixNano(), ok, st.Strikes,
			untilIn(st.Until), strings.ReplaceAll(fmt.Sprint(err), " ", "_"))
	}
	return st, ok, err
}

func untilIn(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return time.Until(t).Seconds()
}

// Release prints a release that failed (kept, to be tried again after the
// refusals the process owes), for the test's timeline of a host.
func (l *loggedSchedule) Release(ctx context.Context, key, owner string, now time.Time) error {
	err := l.Schedule.Release(ctx, key, owner, now)
	if err != nil {
		l.mu.Lock()
		fmt.Printf("trace %s %d release-failed\n", key, time.Now().UnixNano())
		l.mu.Unlock()
	}
	return err
}

// traceOwed prints, every 10 ms, each refusal the worker's Store begins to
// owe Redis (its write failed) and each it has written since, for the
// test's timeline of a host (see crawlRun.explain).
func traceOwed(ctx context.Context, s *Store) {
	owed := map[string]bool{}
	for ctx.Err() == nil {
		now := map[string]bool{}
		s.mu.Lock()
		for k := range s.pending {
			now[k] = true
		}
		s.mu.Unlock()
		at := time.Now().UnixNano()
		for k := range now {
			if !owed[k] {
				fmt.Printf("trace %s %d refusal-owed\n", k, at)
			}
		}
		for k := range owed {
			if !now[k] {
				fmt.Printf("trace %s %d refusal-written\n", k, at)
			}
		}
		owed = now
		wait(ctx, 10*time.Millisecond)
	}
}
