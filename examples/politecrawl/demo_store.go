package main

// demo -store FILE: the demo's crawl on an SQLite file instead of memory.
// Every piece of state (robots.txt records, the refusal ledger, validators,
// the pacing schedule, the crawl state) and every deposit goes to the file,
// opened as the crawl command opens its store (openStores).
//
// A second run on the same file with the same seed serves the same web
// (the same pages, so the same ETags) from a new server, and the crawler
// comes back to it the way a restarted crawler does: the references it
// knows are not read again, the feeds are asked for with the validators
// kept and answer 304, the refusals it remembers are still honoured, and
// robots.txt is not asked for again while the record is fresh.
//
// Two consequences for the demo:
//
//   - The crawl's schedule runs on the demo's simulated day, so a run on a
//     file resumes the day where the file left it (the latest instant a
//     source's trigger or backlog was due or read), else every feed would
//     look read in the future and none would be due.
//   - The auditor of a run is new with its web: it never saw the first
//     run's robots.txt answers, so a host whose record came from the file
//     is asked for other paths with no robots.txt request on this web. Each
//     such robots-first finding is excused only when the file held that
//     host's record before the run (robots.txt was then read, and audited,
//     by an earlier run); any other is a violation as ever. The auditor
//     cannot judge those hosts' requests against a robots.txt it never
//     saw, so the demo does, against what the scenario's robots.txt
//     disallows (the same seed serves the same file); one request to a
//     path it disallows and nothing is excused. The summary says how many
//     hosts were excused.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/politefetch/politefetch/crawl"
	"github.com/politefetch/politefetch/fetch"
	"github.com/politefetch/politefetch/politetest"
)

// openDemoStore opens the SQLite file at path as the crawl command opens
// its store; the demo has no configuration, so no Redis: everything is in
// the file.
func openDemoStore(ctx context.Context, path string) (*stores, error) {
	return openStores(ctx, &Config{}, path)
}

// stateOptions are the fetch client's options that keep its state in st:
// the ledger, robots.txt records, validators and the pacing schedule.
func stateOptions(st *stores) []fetch.Option {
	return []fetch.Option{fetch.WithStores(st.Fetch())}
}

// StoreSummary is what a run on a store found there and added.
type StoreSummary struct {
	Path string
	// Known and Deposits are the references and deposits the file held
	// before the run, over the run's sources.
	Known, Deposits int
	// NewDeposits is how many deposits the run added.
	NewDeposits int
	// RobotsKnown is how many of the run's hosts had a robots.txt record in
	// the file before the run; RobotsExcused how many of them the auditor
	// saw asked for a path with no robots.txt request on this run's web.
	RobotsKnown, RobotsExcused int
	// Forbidden lists the requests to such hosts for paths the scenario's
	// robots.txt disallows ("host path"); any makes the run impolite.
	Forbidden []string
}

// storeStart is what the file holds before a run: it fills sum's Known,
// Deposits and RobotsKnown, returns the hosts with a fresh robots.txt record and
// the instant the simulated day resumes at (zero: a file with no schedule).
func storeStart(ctx context.Context, st *stores, sources []crawl.Source, sum *StoreSummary) (robotsKnown map[string]bool, resume time.Time, err error) {
	state, deposits := st.Crawl().State, st.Crawl().Deposits
	robotsKnown = map[string]bool{}
	for _, src := range sources {
		refs, err := state.Refs(ctx, src.ID)
		if err != nil {
			return nil, resume, fmt.Errorf("store %s: %w", sum.Path, err)
		}
		sum.Known += len(refs)
		ds, err := deposits.List(ctx, src.ID, time.Time{})
		if err != nil {
			return nil, resume, fmt.Errorf("store %s: %w", sum.Path, err)
		}
		sum.Deposits += len(ds)
		sc, err := state.Schedule(ctx, src.ID)
		if err != nil {
			return nil, resume, fmt.Errorf("store %s: %w", sum.Path, err)
		}
		for _, t := range []time.Time{sc.LastTrigger, sc.NextTrigger, sc.LastBacklog} {
			if t.After(resume) {
				resume = t
			}
		}
		for _, host := range src.Admitted {
			// The simulated web's host names are already keys of the
			// robots.txt store: lower-case DNS names on the default port.
			key := host
			// Only a record still fresh: an expired one is fetched again
			// before the host is asked for anything else, as on any run.
			if rec, ok, err := st.Fetch().Robots.Get(ctx, key); err != nil {
				return nil, resume, fmt.Errorf("store %s: %w", sum.Path, err)
			} else if ok && rec.Expires.After(time.Now()) {
				robotsKnown[host] = true
			}
		}
	}
	sum.RobotsKnown = len(robotsKnown)
	return robotsKnown, resume, nil
}

// storeDeposits counts the deposits the file holds for sources.
func storeDeposits(ctx context.Context, st *stores, sources []crawl.Source) (int, error) {
	deposits := st.Crawl().Deposits
	n := 0
	for _, src := range sources {
		ds, err := deposits.List(ctx, src.ID, time.Time{})
		if err != nil {
			return 0, err
		}
		n += len(ds)
	}
	return n, nil
}

// auditResumed audits web under p, excusing the robots-first findings on
// hosts whose robots.txt record the file held before the run: when every
// robots-first finding is on such a host, and none of those hosts was
// asked for a path the scenario's robots.txt disallows, the report is the
// one that does not check that rule, and the hosts are counted in sum;
// otherwise the full report stands (and sum.Forbidden lists the
// disallowed requests).
func auditResumed(web *politetest.Web, info *politetest.ScenarioInfo, p politetest.Policy, robotsKnown map[string]bool, sum *StoreSummary) *politetest.Report {
	rep := web.Audit(p)
	first := rep.Of(politetest.RuleRobotsFirst)
	if len(first) == 0 {
		return rep
	}
	excused := map[string]bool{}
	for _, v := range first {
		if !robotsKnown[v.Host] {
			return rep
		}
		excused[v.Host] = true
	}
	for _, r := range web.Requests() {
		si := info.Site(r.Host)
		if !excused[r.Host] || si == nil || r.Path == "/robots.txt" {
			continue
		}
		for _, prefix := range si.Disallowed {
			if strings.HasPrefix(r.Path, prefix) {
				sum.Forbidden = append(sum.Forbidden, r.Host+" "+r.Target)
				break
			}
		}
	}
	if len(sum.Forbidden) > 0 {
		return rep
	}
	p.Ignore = append(slices.Clone(p.Ignore), politetest.RuleRobotsFirst)
	sum.RobotsExcused = len(excused)
	return web.Audit(p)
}
