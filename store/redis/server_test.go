package redis

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// server is a redis-server process on a loopback port, started by a test
// and stopped at its end, with nothing saved to disk.
type server struct {
	Port int
	Addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// noServer: redis-server is not on PATH.
const noServer = "redis-server is not on PATH: install it (Debian: apt-get install redis-server) to run the tests against a real server"

// startServer starts redis-server on port (0: a free one) and stops it at
// t's end, or skips t when the binary is not on PATH.
func startServer(t testing.TB, port int) *server {
	t.Helper()
	srv, err := launch(port, "")
	if srv == nil && err == nil {
		t.Skip(noServer)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// startServerAOF starts redis-server on port (0: a free one) with an
// append-only file synced at every write, in dir (none: a new temporary
// one), so that a server killed and started again on the same dir has lost
// nothing; it stops it at t's end.
func startServerAOF(t testing.TB, port int, dir ...string) *server {
	t.Helper()
	d := t.TempDir()
	if len(dir) > 0 {
		d = dir[0]
	}
	srv, err := launch(port, d)
	if srv == nil && err == nil {
		t.Skip(noServer)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// launch starts redis-server on port (0: a free one) and waits until it
// answers; nil, nil when the binary is not on PATH. With aofDir, the
// server keeps an append-only file there, synced at every write; without,
// it keeps nothing on disk.
func launch(port int, aofDir string) (*server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, nil
	}
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	dir, temp := aofDir, aofDir == ""
	if temp {
		var err error
		if dir, err = os.MkdirTemp("", "redis-test"); err != nil {
			return nil, err
		}
	}
	srv := &server{Port: port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, done: make(chan struct{})}
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", srv.dir, "--protected-mode", "no", "--loglevel", "warning"}
	if !temp {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	}
	srv.cmd = exec.Command(bin, args...)
	// Its log goes nowhere: a failure to start shows as no answer.
	if err := srv.cmd.Start(); err != nil {
		if temp {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	go func() {
		srv.cmd.Wait()
		if temp {
			os.RemoveAll(dir)
		}
		close(srv.done)
	}()
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr, MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return srv, nil
		}
		if time.Now().After(deadline) {
			srv.Stop()
			return nil, fmt.Errorf("redis-server on %s did not answer: %v", srv.Addr, err)
		}
		select {
		case <-srv.done:
			return nil, fmt.Errorf("redis-server on %s exited", srv.Addr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop ends the server and waits for it.
func (srv *server) Stop() {
	select {
	case <-srv.done:
		return
	default:
	}
	srv.cmd.Process.Kill()
	<-srv.done
}

var (
	sharedOnce sync.Once
	sharedSrv  *server
	sharedErr  string
	prefixes   atomic.Int64
)

// shared starts the package's shared redis-server on first use (TestMain
// stops it), and says why there is none.
func shared() (*server, string) {
	sharedOnce.Do(func() {
		var err error
		sharedSrv, err = launch(0, "")
		switch {
		case err != nil:
			sharedErr = err.Error()
		case sharedSrv == nil:
			sharedErr = noServer
		}
	})
	return sharedSrv, sharedErr
}

// requireServer skips t when the shared redis-server cannot run. A test
// whose subtests call realStore calls it first, in the parent: a subtest
// cannot skip its parent (a factory handed no *testing.T of its own would
// skip the parent from inside a subtest, which panics), and a suite that
// cannot run is one skip, not one per subtest.
func requireServer(t testing.TB) {
	t.Helper()
	if srv, why := shared(); srv == nil {
		t.Skip(why)
	}
}

// realStore returns a Store over the package's shared redis-server (started
// on first use, stopped by TestMain), with a prefix of its own, so every
// caller sees an empty store; it skips t when there is no server.
func realStore(t testing.TB) *Store {
	t.Helper()
	if srv, why := shared(); srv == nil {
		t.Skip(why)
	}
	c := goredis.NewClient(&goredis.Options{Addr: sharedSrv.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return &Store{Client: c, Prefix: fmt.Sprintf("t%d:", prefixes.Add(1))}
}

func TestMain(m *testing.M) {
	goredis.SetLogger(quiet{})
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	code := m.Run()
	if sharedSrv != nil {
		sharedSrv.Stop()
	}
	if sharedCluster != nil {
		sharedCluster.Stop()
	}
	os.Exit(code)
}

// ownStore starts a redis-server of t's own, with an append-only file
// synced at every write so that it can be stopped and started again having
// lost nothing (restart), and returns a Store over it.
func ownStore(t testing.TB) (*Store, *server) {
	t.Helper()
	srv := startServerAOF(t, 0)
	return storeAt(t, srv.Addr, ""), srv
}

// storeAt returns a Store with a client of its own over the server at addr.
func storeAt(t testing.TB, addr, prefix string) *Store {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return &Store{Client: c, Prefix: prefix}
}

// otherProcess returns a second Store over s's server and prefix, with its
// own client, as another worker process would have.
func otherProcess(t testing.TB, s *Store) *Store {
	t.Helper()
	return storeAt(t, s.Client.(*goredis.Client).Options().Addr, s.Prefix)
}

// restart starts srv again on its port and directory, from its append-only
// file, after srv.Stop.
func restart(t testing.TB, srv *server) *server {
	t.Helper()
	return startServerAOF(t, srv.Port, srv.dir)
}

// goneAddr is a loopback address where nothing listens: a Redis that is gone.
func goneAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// exists reports whether key is in s's Redis.
func exists(t testing.TB, s *Store, key string) bool {
	t.Helper()
	n, err := s.Client.Exists(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}
