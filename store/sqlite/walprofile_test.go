package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"io"
	"net/netip"
	"os"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
)

// countingDriver is modernc's driver with every statement run through it
// counted by its SQL text.
type countingDriver struct {
	d  driver.Driver
	mu sync.Mutex
	n  map[string]int
}

func (c *countingDriver) count(q string) {
	c.mu.Lock()
	c.n[q]++
	c.mu.Unlock()
}

func (c *countingDriver) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

func (c *countingDriver) Open(name string) (driver.Conn, error) {
	conn, err := c.d.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, c: c}, nil
}

type countingConn struct {
	driver.Conn
	c *countingDriver
}

func (cc *countingConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	st, err := cc.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return &countingStmt{Stmt: st, q: q, c: cc.c}, nil
}

func (cc *countingConn) BeginTx(ctx context.Context, o driver.TxOptions) (driver.Tx, error) {
	return cc.Conn.(driver.ConnBeginTx).BeginTx(ctx, o)
}

func (cc *countingConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	cc.c.count(q)
	return cc.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
}

func (cc *countingConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	cc.c.count(q)
	return cc.Conn.(driver.QueryerContext).QueryContext(ctx, q, args)
}

func (cc *countingConn) ResetSession(ctx context.Context) error {
	if r, ok := cc.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

type countingStmt struct {
	driver.Stmt
	q string
	c *countingDriver
}

func (s *countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.c.count(s.q)
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s *countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.c.count(s.q)
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}

var (
	counterOnce sync.Once
	counter     *countingDriver
)

// countStatements has the Opens that follow count their statements in
// counter, until the benchmark ends.
func countStatements(b *testing.B) {
	counterOnce.Do(func() {
		raw, err := sql.Open("sqlite", "")
		if err != nil {
			b.Fatal(err)
		}
		counter = &countingDriver{d: raw.Driver(), n: map[string]int{}}
		raw.Close()
		sql.Register("sqlite-counting", counter)
	})
	driverName = "sqlite-counting"
	b.Cleanup(func() { driverName = "sqlite" })
	counter.reset()
}

// walFrames reads the WAL at path and returns, per page number, the frames
// it holds, and the commits (frames that end a transaction).
func walFrames(b *testing.B, path string) (map[uint32]int, int) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var hdr [32]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		b.Fatal(err)
	}
	pageSize := int64(binary.BigEndian.Uint32(hdr[8:]))
	salt1, salt2 := binary.BigEndian.Uint32(hdr[16:]), binary.BigEndian.Uint32(hdr[20:])
	frames, commits := map[uint32]int{}, 0
	var fh [24]byte
	for {
		if _, err := io.ReadFull(f, fh[:]); err != nil {
			break
		}
		if binary.BigEndian.Uint32(fh[8:]) != salt1 || binary.BigEndian.Uint32(fh[12:]) != salt2 {
			break // left from an earlier generation of the WAL
		}
		frames[binary.BigEndian.Uint32(fh[0:])]++
		if binary.BigEndian.Uint32(fh[4:]) != 0 {
			commits++
		}
		if _, err := f.Seek(pageSize, io.SeekCurrent); err != nil {
			b.Fatal(err)
		}
	}
	return frames, commits
}

// BenchmarkCrawlWAL is a crawl of 300 hosts of 10 articles (pages of
// about 1.2 KB, answers 5 to 20 ms late, 1 s per host, Vault) with every
// piece of state and every deposit in one SQLite file, the WAL never
// checkpointed during it. Per article, it reports the statements run (-v
// lists the most run), the commits and the WAL frames (-v lists them by the
// B-tree their page belongs to, read with dbstat at the end: a page freed
// and reused counts under its last owner), and the process's CPU. Run it
// once: -benchtime=1x. Its two cases pace through the file's shared
// Schedule and through a HeldSchedule (politecrawl's default).
func BenchmarkCrawlWAL(b *testing.B) {
	b.Run("shared", func(b *testing.B) { benchCrawlWAL(b, false) })
	b.Run("held", func(b *testing.B) { benchCrawlWAL(b, true) })
}

func benchCrawlWAL(b *testing.B, held bool) {
	const hosts, articles = 300, 10
	for b.Loop() {
		web, sources, p := benchCrawlWeb(b, hosts, articles, 5*time.Millisecond, 20*time.Millisecond)
		countStatements(b)
		db := openTest(b, nil)
		ctx := context.Background()
		if _, err := db.w.ExecContext(ctx, "PRAGMA wal_autocheckpoint=0"); err != nil {
			b.Fatal(err)
		}
		fs, cs := db.Stores()
		if held {
			h, err := db.HoldSchedule(ctx)
			if err != nil {
				b.Fatal(err)
			}
			fs.Schedule = h
		}
		client, err := fetch.New(p, fetch.WithNetwork(fetch.Network{Resolver: web, Dial: web.DialContext, RootCAs: web.RootCAs(),
			Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}), fetch.WithStores(fs))
		if err != nil {
			b.Fatal(err)
		}
		c := &crawl.Crawler{Sources: sources, Client: client, State: cs.State, Deposits: cs.Deposits}
		counter.reset()
		var ru0, ru1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		reps, err := c.RunOnce(ctx)
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		client.Close()
		if err != nil {
			b.Fatal(err)
		}
		stmts := counter.reset()
		deposited := depositedAll(b, reps)
		if deposited != hosts*articles {
			b.Errorf("%d deposited, want %d", deposited, hosts*articles)
		}
		per := func(n int) float64 { return float64(n) / float64(deposited) }
		total := 0
		type row struct {
			name string
			n    int
		}
		var rows []row
		for q, n := range stmts {
			total += n
			rows = append(rows, row{q, n})
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].n > rows[j].n })
		for _, r := range rows[:min(len(rows), 25)] {
			b.Logf("%6.2f/article  %.110s", per(r.n), r.name)
		}
		frames, commits := walFrames(b, db.Path()+"-wal")
		owner := map[uint32]string{}
		q, err := db.w.QueryContext(ctx, "SELECT name, pageno FROM dbstat")
		if err != nil {
			b.Fatal(err)
		}
		for q.Next() {
			var name string
			var pg uint32
			if err := q.Scan(&name, &pg); err != nil {
				b.Fatal(err)
			}
			owner[pg] = name
		}
		q.Close()
		byTree, nframes := map[string]int{}, 0
		for pg, n := range frames {
			name, ok := owner[pg]
			if !ok {
				name = "(pointer map or free)"
			}
			byTree[name] += n
			nframes += n
		}
		rows = rows[:0]
		for name, n := range byTree {
			rows = append(rows, row{name, n})
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].n > rows[j].n })
		for _, r := range rows {
			b.Logf("%6.2f frames/article  %s", per(r.n), r.name)
		}
		cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()) + time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano())
		b.ReportMetric(per(total), "stmts/article")
		b.ReportMetric(per(commits), "commits/article")
		b.ReportMetric(per(nframes), "frames/article")
		b.ReportMetric(float64(cpu.Microseconds())/float64(deposited), "cpu-µs/article")
	}
}
