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

// BenchmarkClusterWorkersRude is TestCluster_Workers at the size of
// BenchmarkClusterWorkersCrawl: three workers over a cluster crawl 500
// hosts of 20 articles, a tenth of them rude (429 and 503 with Retry-After,
// challenge pages, robots.txt refusals), at the tests' 100 ms interval, as
// fast as the machine allows. It reports the auditor's violations (each
// cool-down breach is logged with its host's timeline) and the articles
// read twice. Run it once: -benchtime=1x.
func BenchmarkClusterWorkersRude(b *testing.B) {
	for b.Loop() {
		r := newClusterRun(b, politetest.Scenario{Hosts: 500, ArticlesPerHost: 20, RudeShare: 0.1, Seed: 18,
			Latency: [2]time.Duration{time.Millisecond, 10 * time.Millisecond}}, workerInterval, 0)
		start := time.Now()
		before := r.clu.roles(b)
		for id := range 3 {
			r.start(id, 0)
		}
		r.wait(10 * time.Minute)
		b.Logf("the cluster's nodes before the crawl: %v; after: %v", before, r.clu.roles(b))
		span := time.Since(start)
		rep := r.audit(3, 2)
		// An article asked for again after a refusal (a 429, a 503, a
		// challenge) is retried, not read twice: read twice is an article
		// answered 200 more than once, the documented exception (a pass
		// that failed after reading it) on a well-behaved site or not.
		asked, read := map[string]int{}, map[string]int{}
		for _, q := range r.web.Requests() {
			asked[q.Host+q.Path]++
			if q.Status == 200 {
				read[q.Host+q.Path]++
			}
		}
		failed := map[string]bool{}
		r.mu.Lock()
		for _, e := range r.errs {
			failed[e.source] = true
		}
		r.mu.Unlock()
		twice, retried, unexplained := 0, 0, 0
		for _, s := range r.info.Sites {
			for _, a := range s.Articles {
				switch k := s.Name + a.Path; {
				case read[k] > 1:
					twice++
					if !failed[s.Name] {
						unexplained++
					}
				case asked[k] > 1:
					retried++
				}
			}
		}
		b.Logf("articles answered 200 more than once: %d (%d on a source none of whose passes failed); asked for again after a refusal: %d", twice, unexplained, retried)
		owed, long, relFailed := r.owedRefusals()
		b.Logf("%d refusals owed to Redis after their write failed, written after %v at most; %d owed longer than 2 s; %d releases failed", len(owed), maxDur(owed), long, relFailed)
		b.ReportMetric(float64(len(rep.Violations)), "violations")
		b.ReportMetric(float64(rep.Requests), "requests")
		b.ReportMetric(float64(twice), "read-twice")
		b.ReportMetric(float64(unexplained), "read-twice-unexplained")
		b.ReportMetric(float64(retried), "retried")
		b.ReportMetric(span.Seconds(), "s-wall")
		b.ReportMetric(float64(len(owed)), "refusals-owed")
		b.ReportMetric(maxDur(owed).Seconds(), "owed-max-s")
	}
}

// owedRefusals returns how long each refusal a worker's Store owed Redis
// stayed owed (a refusal still owed at the end counts to now), how many
// stayed owed longer than 2 s, and how many releases failed.
func (r *crawlRun) owedRefusals() (owed []time.Duration, long, relFailed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ts := range r.traces {
		since := map[int]time.Time{}
		for _, e := range ts {
			switch e.what {
			case "refusal-owed":
				since[e.worker] = e.at
			case "refusal-written":
				if at, ok := since[e.worker]; ok {
					owed = append(owed, e.at.Sub(at))
					delete(since, e.worker)
				}
			case "release-failed":
				relFailed++
			}
		}
		for _, at := range since {
			owed = append(owed, time.Since(at))
		}
	}
	for _, d := range owed {
		if d > 2*time.Second {
			long++
		}
	}
	return owed, long, relFailed
}

func maxDur(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m.Round(time.Millisecond)
}
