package redis

import (
	"context"

	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"

	"github.com/politefetch/politefetch/backoff"
	"github.com/politefetch/politefetch/backoff/backofftest"
	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/crawl/crawltest"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/fetch/fetchtest"
	"github.com/politefetch/politefetch/robots"
	"github.com/politefetch/politefetch/robots/robotstest"
)

// newMini starts a miniredis for t and returns a Store over it.
func newMini(t testing.TB) (*Store, *miniredis.Miniredis) {
	t.Helper()
	mr := miniredis.RunT(t)
	c := goredis.NewClient(&goredis.Options{Addr: mr.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return &Store{Client: c}, mr
}

// otherProcess returns a second Store on mr, with its own client, as
// another worker process would have.
func otherProcess(t testing.TB, mr *miniredis.Miniredis) *Store {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: mr.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return &Store{Client: c}
}

// timeHook sets miniredis's clock before each command, from now when it is
// given, otherwise from the caller's now that every time-reading script
// carries as its first argument (and from real time, the Store's clock,
// for a TIME command): so a script reading TIME reads the conformance
// suite's clock.
type timeHook struct {
	mr  *miniredis.Miniredis
	now func() time.Time
}

func (h timeHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h timeHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.set(cmd)
		return next(ctx, cmd)
	}
}

func (h timeHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, c := range cmds {
			h.set(c)
		}
		return next(ctx, cmds)
	}
}

func (h timeHook) set(cmd goredis.Cmder) {
	if h.now != nil {
		h.mr.SetTime(h.now())
		return
	}
	args := cmd.Args()
	if strings.EqualFold(cmd.Name(), "time") {
		h.mr.SetTime(time.Now()) // the Store's own clock is real time
		return
	}
	if name := strings.ToLower(cmd.Name()); name != "evalsha" && name != "eval" || len(args) < 3 {
		return
	}
	nk, err := strconv.Atoi(toString(args[2]))
	if err != nil || len(args) < 3+nk+1 {
		return
	}
	if us, err := strconv.ParseInt(toString(args[3+nk]), 10, 64); err == nil {
		h.mr.SetTime(time.UnixMicro(us))
	}
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	}
	return ""
}

func TestScheduleConformance_Miniredis(t *testing.T) {
	fetchtest.RunSchedule(t, func(t *testing.T, now func() time.Time) fetch.Schedule {
		s, mr := newMini(t)
		s.Client.AddHook(timeHook{mr: mr, now: now})
		return s.Schedule()
	})
}

func TestScheduleConformance_Server(t *testing.T) {
	requireServer(t)
	fetchtest.RunSchedule(t, func(t *testing.T, _ func() time.Time) fetch.Schedule {
		s := realStore(t)
		s.CallerClock = true // a real server's clock cannot be moved: the suite's clock is the callers'
		return s.Schedule()
	})
}

func TestLedgerConformance_Miniredis(t *testing.T) {
	backofftest.Run(t, func() backoff.Store { s, _ := newMini(t); return s.Ledger() })
}

func TestLedgerConformance_Server(t *testing.T) {
	requireServer(t)
	backofftest.Run(t, func() backoff.Store { return realStore(t).Ledger() })
}

func TestValidatorConformance_Miniredis(t *testing.T) {
	fetchtest.Run(t, func(t *testing.T) fetch.ValidatorStore { s, _ := newMini(t); return s.Validators() })
}

func TestValidatorConformance_Server(t *testing.T) {
	requireServer(t)
	fetchtest.Run(t, func(t *testing.T) fetch.ValidatorStore { return realStore(t).Validators() })
}

func TestRobotsConformance_Miniredis(t *testing.T) {
	robotstest.Run(t, func(t *testing.T) robots.Store { s, _ := newMini(t); return s.Robots() })
}

func TestRobotsConformance_Server(t *testing.T) {
	requireServer(t)
	robotstest.Run(t, func(t *testing.T) robots.Store { return realStore(t).Robots() })
}

func TestStateConformance_Miniredis(t *testing.T) {
	crawltest.Run(t, func(t *testing.T) crawl.State {
		s, mr := newMini(t)
		s.Client.AddHook(timeHook{mr: mr})
		return s.State()
	})
}

func TestStateConformance_Server(t *testing.T) {
	requireServer(t)
	crawltest.Run(t, func(t *testing.T) crawl.State {
		s := realStore(t)
		s.CallerClock = true // the suite's instants are months from the server's clock
		return s.State()
	})
}
