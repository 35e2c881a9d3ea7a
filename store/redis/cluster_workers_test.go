package redis

import (
	"testing"
	"time"

	"github.com/politefetch/politefetch/politetest"
)

// TestCluster_Workers: three worker processes, each with its own fetch
// client and crawler over one Redis Cluster (three masters, three
// replicas) through a ClusterClient, crawl 200 publishers (30 under
// -short) of 3 articles, a tenth rude, as TestWorkers_P1_ThreeProcessesOneBudget
// does on one server: the auditor finds no violation across all of them,
// and every article of a well-behaved site is read once.
// BenchmarkClusterWorkersCrawl is the 500 × 20 run.
func TestCluster_Workers(t *testing.T) {
	r := newClusterRun(t, politetest.Scenario{
		Hosts: workerHosts(), ArticlesPerHost: 3, RudeShare: 0.1, Seed: 18,
		Latency: [2]time.Duration{time.Millisecond, 10 * time.Millisecond},
	}, workerInterval, 0)
	start := time.Now()
	for id := range 3 {
		r.start(id, 0)
	}
	r.wait(4 * time.Minute)
	rep := r.audit(3, 1)
	t.Logf("%d hosts × %d articles on the cluster: %d requests in %v", len(r.cfg.Sites), len(r.info.Sites[0].Articles), rep.Requests, time.Since(start).Round(time.Millisecond))
}

// BenchmarkClusterWorkersCrawl is BenchmarkWorkersCrawl on a cluster: three
// worker processes over a Redis Cluster of three masters and three
// replicas crawl 500 hosts of 20 articles, every answer 20 to 200 ms late,
// under a 1 s interval per host; it reports the crawl's span against the
// 21.2 s politeness bound, and the auditor's violations. Run it once:
// -benchtime=1x.
func BenchmarkClusterWorkersCrawl(b *testing.B) {
	for b.Loop() {
		r := newClusterRun(b, politetest.Scenario{Hosts: 500, ArticlesPerHost: 20, Seed: 18,
			Latency: [2]time.Duration{20 * time.Millisecond, 200 * time.Millisecond}}, time.Second, 0)
		r.crawlSpan(b)
	}
}
