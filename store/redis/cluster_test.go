package redis

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// cluster is a Redis Cluster on loopback started by a test: six
// redis-server processes with cluster-enabled, three masters and a replica
// of each, every node with its own directory and append-only file.
type cluster struct {
	nodes []*server
	// NodeTimeout is the cluster-node-timeout: how long a master may be
	// unreachable before its replica is promoted.
	NodeTimeout time.Duration
}

// noCluster: redis-server or redis-cli is not on PATH.
const noCluster = "redis-server or redis-cli is not on PATH: install them (Debian: apt-get install redis-server) to run the tests against a real Redis Cluster"

// startCluster starts a cluster for t and stops it at t's end, or skips t
// when redis-server or redis-cli is not on PATH.
func startCluster(t testing.TB, nodeTimeout time.Duration) *cluster {
	t.Helper()
	c, err := launchCluster(nodeTimeout)
	if c == nil && err == nil {
		t.Skip(noCluster)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// clusterPorts returns n loopback ports that are free, each with its
// cluster bus port (10000 more) free too.
func clusterPorts(n int) ([]int, error) {
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for tries := 0; len(ports) < n && tries < 200; tries++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		if p+10000 > 65535 {
			l.Close()
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			l.Close()
			continue
		}
		held = append(held, l, bus)
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("found %d free port pairs of %d", len(ports), n)
	}
	return ports, nil
}

// launchCluster starts six nodes, joins them with redis-cli --cluster
// create, and waits until every node sees the cluster ok; nil, nil when
// the programs are not on PATH.
func launchCluster(nodeTimeout time.Duration) (*cluster, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, nil
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, nil
	}
	if nodeTimeout == 0 {
		nodeTimeout = 2 * time.Second
	}
	ports, err := clusterPorts(6)
	if err != nil {
		return nil, err
	}
	c := &cluster{NodeTimeout: nodeTimeout}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	for _, p := range ports {
		dir, err := os.MkdirTemp("", "redis-cluster")
		if err != nil {
			return nil, err
		}
		srv, err := c.startNode(bin, p, dir)
		if err != nil {
			return nil, err
		}
		c.nodes = append(c.nodes, srv)
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.nodes {
		args = append(args, n.Addr)
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	out, err := exec.Command(cli, args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := c.waitOK(30 * time.Second); err != nil {
		return nil, err
	}
	ok = true
	return c, nil
}

// startNode starts one cluster node on port with its files in dir (kept:
// a node started again on dir comes back with its data and its identity).
func (c *cluster) startNode(bin string, port int, dir string) (*server, error) {
	srv := &server{Port: port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, done: make(chan struct{})}
	srv.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--protected-mode", "no",
		"--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--loglevel", "warning",
		"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
		"--cluster-node-timeout", strconv.FormatInt(c.NodeTimeout.Milliseconds(), 10),
		"--cluster-replica-validity-factor", "0", // a replica is promoted however long its master was away
	)
	if err := srv.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		srv.cmd.Wait()
		close(srv.done)
	}()
	rc := goredis.NewClient(&goredis.Options{Addr: srv.Addr, MaxRetries: -1})
	defer rc.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := rc.Ping(ctx).Err()
		cancel()
		if err == nil {
			return srv, nil
		}
		if time.Now().After(deadline) {
			srv.Stop()
			return nil, fmt.Errorf("cluster node on %s did not answer: %v", srv.Addr, err)
		}
		select {
		case <-srv.done:
			return nil, fmt.Errorf("cluster node on %s exited", srv.Addr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitOK waits until every live node says cluster_state:ok and sees every
// slot served, and every live replica's link to its master is up.
func (c *cluster) waitOK(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		bad := ""
		for _, n := range c.nodes {
			if !n.alive() {
				continue
			}
			rc := goredis.NewClient(&goredis.Options{Addr: n.Addr, MaxRetries: -1})
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			info, err := rc.ClusterInfo(ctx).Result()
			cancel()
			rc.Close()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
				bad = fmt.Sprintf("%s: %v %q", n.Addr, err, firstLine(info))
				break
			}
			// A replica is in sync with its master (so that it holds
			// what its master was told, and can be promoted).
			rc = goredis.NewClient(&goredis.Options{Addr: n.Addr, MaxRetries: -1})
			ctx, cancel = context.WithTimeout(context.Background(), time.Second)
			repl, err := rc.Info(ctx, "replication").Result()
			cancel()
			rc.Close()
			if err != nil || strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
				bad = fmt.Sprintf("%s: replica not in sync: %v", n.Addr, err)
				break
			}
		}
		if bad == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not ok after %v: %s", d, bad)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}

func (srv *server) alive() bool {
	select {
	case <-srv.done:
		return false
	default:
		return true
	}
}

// Addrs are the nodes' addresses, for a ClusterClient's seeds.
func (c *cluster) Addrs() []string {
	var a []string
	for _, n := range c.nodes {
		a = append(a, n.Addr)
	}
	return a
}

// Stop ends every node and removes their directories.
func (c *cluster) Stop() {
	for _, n := range c.nodes {
		n.Stop()
		os.RemoveAll(n.dir)
	}
}

// masters returns the nodes that are masters now, as the cluster says.
func (c *cluster) masters(t testing.TB) []*server {
	t.Helper()
	var out []*server
	for _, n := range c.nodes {
		if !n.alive() {
			continue
		}
		rc := goredis.NewClient(&goredis.Options{Addr: n.Addr, MaxRetries: -1})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		info, err := rc.Info(ctx, "replication").Result()
		cancel()
		rc.Close()
		if err == nil && strings.Contains(info, "role:master") {
			out = append(out, n)
		}
	}
	return out
}

// roles says each node's role ("m" master, "r" replica, "-" gone) in the
// order of c.nodes, and the cluster's current epoch (which a failover
// moves on), as the first live node reports it.
func (c *cluster) roles(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	epoch := ""
	for _, n := range c.nodes {
		if !n.alive() {
			b.WriteString("-")
			continue
		}
		rc := goredis.NewClient(&goredis.Options{Addr: n.Addr, MaxRetries: -1})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		info, err := rc.Info(ctx, "replication").Result()
		ci, _ := rc.ClusterInfo(ctx).Result()
		cancel()
		rc.Close()
		switch {
		case err != nil:
			b.WriteString("?")
		case strings.Contains(info, "role:master"):
			b.WriteString("m")
		default:
			b.WriteString("r")
		}
		if _, rest, ok := strings.Cut(ci, "cluster_current_epoch:"); ok && epoch == "" {
			epoch = firstLine(rest)
		}
	}
	return b.String() + " epoch " + epoch
}

// client returns a ClusterClient over c, closed at t's end.
func (c *cluster) client(t testing.TB) *goredis.ClusterClient {
	t.Helper()
	rc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rc.Close() })
	return rc
}

var (
	sharedClusterOnce sync.Once
	sharedCluster     *cluster
	sharedClusterErr  string
)

// requireCluster skips t when the package's shared cluster cannot run (it
// is started on first use and stopped by TestMain).
func requireCluster(t testing.TB) *cluster {
	t.Helper()
	sharedClusterOnce.Do(func() {
		c, err := launchCluster(0)
		switch {
		case err != nil:
			sharedClusterErr = err.Error()
		case c == nil:
			sharedClusterErr = noCluster
		}
		sharedCluster = c
	})
	if sharedCluster == nil {
		t.Skip(sharedClusterErr)
	}
	return sharedCluster
}

// clusterStore returns a Store over the shared cluster, with a prefix of
// its own and its own client.
func clusterStore(t testing.TB) *Store {
	t.Helper()
	c := requireCluster(t)
	return &Store{Client: c.client(t), Prefix: fmt.Sprintf("c%d:", prefixes.Add(1))}
}
